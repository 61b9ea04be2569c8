"""The `fptrack` program: one command group over the tracker's commands and those of the crawler
and the admin, each loaded when it runs.

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler, web and fptrack.
"""
