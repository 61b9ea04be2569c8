"""Tenancy: organisations and their API tokens, and `fptrack org` / `fptrack token`.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
