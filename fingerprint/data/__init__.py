"""Small data files shipped with the engine (the built-in stopword list).

May import: fingerprint only.
"""
