"""The workers' side: the Celery app, its tasks, handing work to them (or doing it inline), the
backlog and tallies.

May import: fingerprint and tracker (never crawler or web).
"""
