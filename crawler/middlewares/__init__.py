"""Downloader middlewares of the crawler.

May import: fingerprint, pagetext, ocr, clikit, tracker and crawler.
"""
