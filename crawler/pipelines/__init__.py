"""Item pipelines, one class per file, run in the order ITEM_PIPELINES numbers them.

May import: fingerprint, pagetext, ocr, clikit, tracker and crawler.
"""
