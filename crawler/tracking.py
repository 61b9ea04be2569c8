"""Where the crawler meets the tracker: its settings and store, from Scrapy's settings."""
from __future__ import annotations

from typing import Any

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
