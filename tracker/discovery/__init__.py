"""Discovery: search queries for a work, the search providers that answer them, the run that crawls
what they find, `fptrack discover`, and runs started from the admin.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
