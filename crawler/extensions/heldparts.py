"""Keep the spider's held parts with a Redis frontier across a pause.

A later part of a split chapter reached through its own link is held until the crawl
has nothing else to do (see NovelSpider._later_part). On disk, Scrapy keeps
spider.state in the job folder, so a paused crawl resumes with them. With a shared
Redis frontier there is no job folder: this extension writes the held parts (and the
URLs already joined) to the job's keys when a crawler stops, and the next crawler of
the job takes them back when it starts, so a part held when the crawl paused is
still joined or stored alone when it resumes, never lost.
"""
from __future__ import annotations

import json
import logging

from scrapy import signals
from scrapy.exceptions import NotConfigured

from ..spiders.novel import JOINED, LONE

log = logging.getLogger(__name__)

HELD_KEY = "FPT_HELD_KEY"  # setting: the Redis hash of held parts (url -> JSON); joined URLs in <key>:joined


class HeldParts:
    def __init__(self, crawler, key: str):
        self.crawler = crawler
        self.key = key
        self.joined_key = f"{key}:joined"
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

    def client(self):
        if self._client is None:
            from tracker.redis_index import connect

            self._client = connect(self.crawler.settings.get("REDIS_URL"))
        return self._client

    def spider_opened(self, spider=None) -> None:
        spider = spider or self.crawler.spider
        pipe = self.client().pipeline(transaction=True)  # taken once: two crawlers never both hold a part
        pipe.hgetall(self.key)
        pipe.delete(self.key)
        pipe.smembers(self.joined_key)
        held, _, joined = pipe.execute()
        lone = spider.state.setdefault(LONE, {})
        for url, value in held.items():
            lone[url.decode() if isinstance(url, bytes) else url] = json.loads(value)
        spider.state.setdefault(JOINED, set()).update(u.decode() if isinstance(u, bytes) else u for u in joined)

    def spider_closed(self, spider=None, reason: str = "") -> None:
        spider = spider or self.crawler.spider
        lone = spider.state.get(LONE) or {}
        joined = spider.state.get(JOINED) or set()
        try:
            pipe = self.client().pipeline(transaction=False)
            if lone:
                pipe.hset(self.key, mapping={url: json.dumps(held, ensure_ascii=False) for url, held in lone.items()})
            if joined:
                pipe.sadd(self.joined_key, *joined)
            pipe.execute()
        except Exception as e:  # the pages stay held in no place: say so, with how many
            log.error("cannot keep %d held parts of split chapters in Redis: %s", len(lone), e)
