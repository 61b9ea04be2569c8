"""`fptrack demo`: the whole system on embedded defaults, with a pirate site served on 127.0.0.1.

May import: fingerprint, tracker, crawler and web.
"""
