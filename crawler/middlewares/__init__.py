"""Downloader middlewares of the crawler.

May import: fingerprint, tracker and crawler (never web).
"""
