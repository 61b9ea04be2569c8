"""The workers' side: the Celery app, its tasks, handing work to them (or doing it inline), the
backlog and tallies.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
