"""Keep the spider's held parts with a Redis frontier across a pause.

A later part of a split chapter reached through its own link is held until the crawl
has nothing else to do (see NovelSpider._later_part). On disk, Scrapy keeps
spider.state in the job folder, so a paused crawl resumes with them. With a shared
Redis frontier there is no job folder: this extension writes the held parts (and the
URLs already joined) to the job's keys when a crawler stops, and the next crawler of
the job takes them back when it starts, so a part held when the crawl paused is
still joined or stored alone when it resumes, never lost.

The hash and the set share the job's hash tag (one slot), so taking them back is one
transaction on a Redis Cluster as well. When Redis fails, the held parts go to a spool
file beside the job on disk (FPT_HELD_SPOOL), taken back by the next crawler there.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from scrapy import signals
from scrapy.exceptions import NotConfigured

from ..spiders.chapters import JOINED, LONE

log = logging.getLogger(__name__)

HELD_KEY = "FPT_HELD_KEY"  # setting: the Redis hash of held parts (url -> JSON); joined URLs in <key>:joined
HELD_SPOOL = "FPT_HELD_SPOOL"  # setting: the file that keeps them when Redis fails


class HeldParts:
    def __init__(self, crawler, key: str):
        self.crawler = crawler
        self.key = key
        self.joined_key = f"{key}:joined"
        spool = crawler.settings.get(HELD_SPOOL)
        self.spool = Path(spool) if spool else None
        self._client = None

    @classmethod
    def from_crawler(cls, crawler):
        key = crawler.settings.get(HELD_KEY)
        if not key:
            raise NotConfigured
        ext = cls(crawler, key)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    @property
    def url(self) -> str:
        return self.crawler.settings.get("REDIS_URL")

    def client(self):
        if self._client is None:
            from tracker.redis_client import connect

            self._client = connect(self.url)
        return self._client

    def spider_opened(self, spider=None) -> None:
        from ..frontier import take_spool
        from ..redis_frontier import FAILURES

        spider = spider or self.crawler.spider
        lone = spider.state.setdefault(LONE, {})
        joined_urls = spider.state.setdefault(JOINED, set())
        for kept in take_spool(self.spool) if self.spool is not None else ():
            lone.update(kept["held"])
            joined_urls.update(kept["joined"])
        try:
            # Taken once: two crawlers never both hold a part. One slot, so a transaction on a cluster too.
            pipe = self.client().pipeline(transaction=True)
            pipe.hgetall(self.key)
            pipe.delete(self.key)
            pipe.smembers(self.joined_key)
            held, _, joined = pipe.execute()
        except FAILURES as e:  # the scheduler stops the crawl for it and says why
            log.info("held parts not taken back from Redis: %s", e)
            return
        for url, value in held.items():
            lone[url.decode() if isinstance(url, bytes) else url] = json.loads(value)
        joined_urls.update(u.decode() if isinstance(u, bytes) else u for u in joined)

    def spider_closed(self, spider=None, reason: str = "") -> None:
        from ..frontier import FRONTIER_ERROR, add_to_spool
        from ..redis_frontier import FAILURES

        spider = spider or self.crawler.spider
        lone = spider.state.get(LONE) or {}
        joined = spider.state.get(JOINED) or set()
        if not lone and not joined:
            return
        try:
            if _stat(self.crawler, FRONTIER_ERROR):
                raise ConnectionError("Redis failed during the crawl")  # not one more wait on it
            pipe = self.client().pipeline(transaction=False)
            if lone:
                pipe.hset(self.key, mapping={url: json.dumps(held, ensure_ascii=False) for url, held in lone.items()})
            if joined:
                pipe.sadd(self.joined_key, *joined)
            pipe.execute()
            return
        except FAILURES as e:
            failure = e
        if self.spool is None:  # the pages stay held in no place: say so, with how many
            log.error("cannot keep %d held parts of split chapters in Redis: %s", len(lone), failure)
            return
        add_to_spool(self.spool, {"held": dict(lone), "joined": sorted(joined)})


def _stat(crawler, key: str):
    try:
        return crawler.stats.get_value(key)
    except (AttributeError, RuntimeError):  # no stats before the crawl starts (tests build the extension alone)
        return None
