"""The Scrapy project that finds reposted chapters and hands pages to the tracker.

May import: fingerprint, pagetext, ocr, clikit, tracker and crawler.
"""

