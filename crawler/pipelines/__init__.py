"""Item pipelines, one class per file, run in the order ITEM_PIPELINES numbers them.

May import: fingerprint, tracker and crawler (never web).
"""
