"""Spiders of the crawler (the spider file name is the spider name).

May import: fingerprint, pagetext, ocr, clikit, tracker and crawler.
"""
