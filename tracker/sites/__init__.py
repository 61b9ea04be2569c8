"""Watched sites: which site a URL belongs to, and when each is crawled.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
