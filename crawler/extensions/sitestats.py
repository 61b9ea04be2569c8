"""Keep each site's crawl statistics in the store when a crawl ends, for the admin
and `fptrack sites list`: pages fetched, stored, unchanged, skipped and failed
with their reasons, matched, and why the crawl stopped."""
from __future__ import annotations

import logging

from scrapy import signals

from tracker.store import CrawlRun, StoreError, now

from ..counts import by_site
from ..tracking import JOB, tracker_context

log = logging.getLogger(__name__)


class SiteStats:
    def __init__(self, crawler):
        self.crawler = crawler
        self.started = now()

    @classmethod
    def from_crawler(cls, crawler):
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider=None) -> None:
        self.started = now()

    def spider_closed(self, spider=None, reason: str = "") -> None:
        runs = self.runs(reason)
        if not runs:
            return
        try:
            store = tracker_context(self.crawler).store  # the crawl's one store, closed when the engine stops
            for run in runs:
                store.add_crawl_run(run)
        except StoreError as e:
            log.error("could not keep the crawl statistics: %s", e)

    def runs(self, reason: str) -> list[CrawlRun]:
        """One CrawlRun per site the crawl touched (every site it started from, even when nothing answered)."""
        sites = by_site(self.crawler.stats.get_stats())
        spider = self.crawler.spider
        for name in getattr(spider, "sites", {}):
            sites.setdefault(name, {"counts": {}, "skipped": {}, "failed": {}})
        finished = now()
        job = self.crawler.settings.get(JOB) or ""
        out = []
        for name, entry in sorted(sites.items()):
            counts = dict(entry["counts"])
            out.append(CrawlRun(site=name, job=job, started_at=self.started, finished_at=finished,
                                outcome=reason or "finished", counts=counts, skipped=entry.get("skipped", {}),
                                failed=entry.get("failed", {})))
        return out
