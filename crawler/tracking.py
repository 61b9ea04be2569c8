"""Where the crawler meets the tracker: its settings, from Scrapy's settings, and the one tracker
Context (store and index) a crawl shares between its pipeline, middlewares and extensions."""
from __future__ import annotations

from typing import Any

from scrapy import signals

from tracker.context import Context
from tracker.settings import Settings

#: Scrapy setting holding the tracker's Settings (crawler.run sets it; else they come from FPT_* variables).
TRACKER_SETTINGS = "FPT_TRACKER_SETTINGS"
#: Scrapy setting: False stores pages as queued without processing them (the daily run sends them).
PROCESS_PAGES = "FPT_PROCESS_PAGES"
#: Scrapy setting: the crawl job's name, recorded with each crawl run.
JOB = "FPT_JOB"


def tracker_settings(scrapy_settings: Any) -> Settings:
    found = scrapy_settings.get(TRACKER_SETTINGS)
    return found if isinstance(found, Settings) else Settings.load()


def tracker_context(crawler: Any) -> Context:
    """The crawl's tracker Context: opened on first use, shared by everything of this crawl that
    reads or writes the store, and closed when the engine has stopped (after the pipelines'
    close_spider and the spider_closed handlers that record the crawl's runs)."""
    ctx = getattr(crawler, "_fpt_context", None)
    if ctx is None:
        ctx = Context(tracker_settings(crawler.settings))
        crawler._fpt_context = ctx
        crawler.signals.connect(ctx.close, signal=signals.engine_stopped, weak=False)
    return ctx
