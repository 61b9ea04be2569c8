"""Pictures on pages: copies of registered covers and illustrations, and chapters posted as pictures
(read by OCR).

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
