"""Scrapy's side of a frontier shared in Redis, on one instance or a Redis Cluster.

scrapy-redis builds its client from REDIS_PARAMS['redis_cls'] (`Connect` here: the
tracker's `connect`, which answers a RedisCluster when FPT_REDIS_URL names a cluster
node). Its priority queue pops with a MULTI that a cluster pipeline refuses; `Queue`
pops with ZPOPMIN, one atomic command on one key. `Scheduler` marks a URL seen and
queues it in one script over the job's two keys (one hash slot: the job is their hash
tag, see frontier.redis_keys), so no failure leaves a URL seen but never queued.

When Redis fails during a crawl, `Scheduler` turns the error into one line
(`tracker.redis_client.explain`) kept in the crawl's stats as FRONTIER_ERROR, stops
talking to Redis and closes the spider as REDIS_DOWN (a resumable outcome). The
links found meanwhile are written to a spool file beside the job on disk, and the
next crawler of the job on this machine queues them again when it starts.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import redis
from scrapy.utils.misc import load_object
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler as RedisScheduler

from tracker.redis_client import RedisUnavailable, connect, explain, is_cluster

from .frontier import FRONTIER_ERROR, REDIS_DOWN, add_to_spool, take_spool

log = logging.getLogger(__name__)

#: Scrapy setting: the file where requests that could not reach Redis wait for the next run.
SPOOL = "FPT_FRONTIER_SPOOL"

#: What a failing Redis raises through redis-py (a refused socket comes as ConnectionError; a cluster
#: with no node left to ask, as RedisClusterException, which is no RedisError).
FAILURES = (redis.RedisError, redis.exceptions.RedisClusterException, OSError, RedisUnavailable)

# KEYS[1] the seen set, KEYS[2] the queue; ARGV[1] the fingerprint ('' for a request not to filter),
# ARGV[2] the score, ARGV[3] the request. Atomic: a URL is seen only once it is queued.
_ENQUEUE = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""


class Connect:
    """REDIS_PARAMS['redis_cls'] for scrapy-redis: the tracker's client for a single instance or a cluster."""

    @staticmethod
    def from_url(url: str, **_ignored: Any):
        # scrapy-redis passes its own socket defaults (30 s); connect's are shorter, so that a
        # dead server stops a crawl in seconds, not minutes.
        return connect(url)


class Queue(PriorityQueue):
    """scrapy-redis's priority queue, popped with ZPOPMIN (works on a cluster, one round trip)."""

    def pop(self, timeout: int = 0):
        popped = self.server.zpopmin(self.key)
        if popped:
            return self._decode_request(popped[0][0])
        return None


class Scheduler(RedisScheduler):
    """scrapy-redis's scheduler with an atomic seen-and-queue, and a Redis failure as one line."""

    @classmethod
    def from_crawler(cls, crawler):
        try:
            instance = super().from_crawler(crawler)
        except FAILURES as e:  # no client: the spider is closed as soon as it opens (see open)
            instance = cls._without_server(crawler)
            instance.failed = explain(e, crawler.settings.get("REDIS_URL"))
            instance.stats.set_value(FRONTIER_ERROR, instance.failed)
        instance.crawler = crawler
        instance.url = crawler.settings.get("REDIS_URL")
        spool = crawler.settings.get(SPOOL)
        instance.spool = Path(spool) if spool else None
        return instance

    @classmethod
    def _without_server(cls, crawler):
        """A scheduler with no client, failed from the start: what it is given waits for the spool."""
        settings = crawler.settings
        instance = cls(server=None, persist=True, queue_key=settings.get("SCHEDULER_QUEUE_KEY"),
                       queue_cls=settings.get("SCHEDULER_QUEUE_CLASS"),
                       dupefilter_key=settings.get("SCHEDULER_DUPEFILTER_KEY"))
        instance.stats = crawler.stats
        return instance

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.crawler = None
        self.url = ""
        self.spool: Path | None = None
        self.failed = ""  # the line saying why Redis failed; empty while it works
        self.waiting: list[Any] = []  # requests Redis could not take

    def open(self, spider):
        # scrapy-redis's open, without its second connection for the seen-set and its deprecated spider.log
        self.spider = spider
        self.queue = load_object(self.queue_cls)(server=self.server, spider=spider,
                                                 key=self.queue_key % {"spider": spider.name},
                                                 serializer=self.serializer)
        if not self.df:
            self.df = RFPDupeFilter(self.server, key=self.dupefilter_key % {"spider": spider.name},
                                    debug=spider.settings.getbool("DUPEFILTER_DEBUG"))
        if self.failed:  # Redis failed when this scheduler was made
            self._stop()
            return
        try:
            waiting = len(self.queue)
        except FAILURES as e:
            self._fail(e)
            return
        if waiting:
            log.info("resuming the crawl: %d requests in the shared frontier", waiting)
        self._requeue_spool()

    def enqueue_request(self, request) -> bool:
        if self.failed:
            self.waiting.append(request)
            return True
        try:
            added = self._push(request)
        except FAILURES as e:
            self._fail(e)
            self.waiting.append(request)
            return True
        if not added:
            self.df.log(request, self.spider)
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def _push(self, request) -> bool:
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        data = self.queue._encode_request(request)
        # EVAL, not EVALSHA: on a cluster a script missing from the cache is loaded on every master,
        # and one master down would then stop the others' jobs too.
        return bool(self.server.eval(_ENQUEUE, 2, self.df.key, self.queue.key, fingerprint, -request.priority, data))

    def next_request(self):
        if self.failed:
            return None
        try:
            request = self.queue.pop()
        except FAILURES as e:
            self._fail(e)
            return None
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self) -> bool:
        if self.failed:
            return True  # not idle: the spider is closing for the failure, not finishing
        try:
            return len(self) > 0
        except FAILURES as e:
            self._fail(e)
            return True

    def close(self, reason):
        if self.waiting:
            self._keep_waiting()
        if not self.persist and not self.failed:
            super().close(reason)

    def _fail(self, e: BaseException) -> None:
        if self.failed:
            return
        self.failed = explain(e, self.url, cluster=is_cluster(self.server))
        log.info("the shared frontier stopped: %s", self.failed)
        if self.stats:
            self.stats.set_value(FRONTIER_ERROR, self.failed)
        self._stop()

    def _stop(self) -> None:
        """Close the spider as REDIS_DOWN, in a task of its own (the engine may be calling this scheduler)."""
        try:
            engine = self.crawler.engine
        except (AttributeError, RuntimeError):  # a scheduler used without a running crawl
            return
        from scrapy.utils.defer import deferred_from_coro

        closing = deferred_from_coro(engine.close_spider_async(reason=REDIS_DOWN))
        closing.addErrback(lambda f: log.debug("closing after the Redis failure: %s", f.value))

    def _keep_waiting(self) -> None:
        """Give Redis the requests it could not take, or write them to the spool for the next run."""
        try:
            for request in list(self.waiting) if self.server is not None else ():
                self._push(request)
                self.waiting.remove(request)
            if not self.waiting:
                return
        except FAILURES:
            pass
        if self.spool is None:
            log.error("%d links found while Redis was failing are lost (no spool file)", len(self.waiting))
            return
        add_to_spool(self.spool, [self.queue._encode_request(r) for r in self.waiting])
        self.waiting.clear()

    def _requeue_spool(self) -> None:
        if self.spool is None or self.failed:
            return
        for batch in take_spool(self.spool):
            for data in batch:
                self.enqueue_request(self.queue._decode_request(data))  # on a failure: `waiting`, then the spool
