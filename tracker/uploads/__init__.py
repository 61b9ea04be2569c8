"""Novels uploaded through the admin or the API: read whole (text, HTML, EPUB), split into chapters,
registered.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
