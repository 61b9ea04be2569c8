"""`python -m crawler ...` runs `fptrack crawl ...` in a process of its own (Scrapy's reactor
runs once per process; the daily run of a Celery worker starts crawls this way)."""
from .cli import crawl

crawl(prog_name="python -m crawler")
