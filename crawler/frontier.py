"""Where a crawl keeps the URLs it has still to fetch and those it has seen.

Embedded (no FPT_REDIS_URL): a job folder under FPT_HOME/crawls (Scrapy's JOBDIR),
so a crawl stopped by Ctrl-C or by --max-pages resumes where it stopped.
With FPT_REDIS_URL: a queue and a seen-set in Redis (scrapy-redis), shared by every
crawler process started with the same job, on this machine or others; they
split the work and never fetch a URL twice.

A crawl that finished clears its frontier, so the next crawl of the site (the
daily run) starts afresh; the store's content hashes then keep unchanged pages
from being matched again. With a shared frontier only the last crawler of the
job to finish clears it (the others may still be fetching); each crawler keeps
its membership fresh while it works, so one killed outright stops counting
after STALE_AFTER seconds. On disk, one process at a time may run a job.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from tracker.names import check_job, inside, job_for_sites
from tracker.settings import Settings

#: Seconds a crawler sharing a Redis frontier waits, idle, for its peers to add requests.
SHARED_IDLE_WAIT = 6.0
#: Seconds without a sign of life after which a crawler no longer counts as working on its job.
STALE_AFTER = 600
HEARTBEAT_EVERY = 10.0


class JobBusy(RuntimeError):
    """Another process is running the same crawl job on disk."""


def job_name(names: list[str]) -> str:
    """A file- and key-safe job name from the sites' names."""
    return job_for_sites(names)


def job_dir(settings: Settings, job: str) -> Path:
    """The job's folder under FPT_HOME/crawls; a name that would lead elsewhere is an InputError."""
    return inside(settings.home / "crawls", check_job(job))


def redis_keys(settings: Settings, job: str) -> dict[str, str]:
    base = f"{settings.redis_prefix}crawl:{check_job(job)}"
    return {"requests": f"{base}:requests", "seen": f"{base}:seen", "crawlers": f"{base}:crawlers",
            "held": f"{base}:held", "joined": f"{base}:held:joined"}


def frontier_settings(settings: Settings, job: str) -> dict[str, Any]:
    """The Scrapy settings that put the job's frontier on disk or in Redis."""
    if settings.redis_url:
        keys = redis_keys(settings, job)
        return {
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,  # kept when a crawler stops: the others, or a restart, go on
            "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
            "SCHEDULER_QUEUE_KEY": keys["requests"],
            "SCHEDULER_DUPEFILTER_KEY": keys["seen"],
            "DUPEFILTER_KEY": keys["seen"],
            "REDIS_URL": settings.redis_url,
            "FPT_HELD_KEY": keys["held"],  # crawler.extensions.heldparts: held parts kept across a pause
        }
    return {"JOBDIR": str(job_dir(settings, job))}


def clear_frontier(settings: Settings, job: str) -> None:
    """Forget the job's queue and seen URLs, so that its next crawl starts afresh."""
    if settings.redis_url:
        from tracker.redis_index import connect

        keys = redis_keys(settings, job)
        connect(settings.redis_url).delete(keys["requests"], keys["seen"], keys["held"], keys["joined"])
    else:
        shutil.rmtree(job_dir(settings, job), ignore_errors=True)


def pending(settings: Settings, job: str) -> bool:
    """Whether the job has a saved frontier to resume."""
    if settings.redis_url:
        from tracker.redis_index import connect

        keys = redis_keys(settings, job)
        return bool(connect(settings.redis_url).exists(keys["requests"], keys["seen"], keys["held"]))
    return job_dir(settings, job).is_dir()


class Membership:
    """This process's part in a job: a lock on disk, or a place in the job's crawler set in Redis."""

    def __init__(self, settings: Settings, job: str, client: Any = None):
        self.settings, self.job = settings, job
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._client = client
        self._lock_file = None
        self._last_beat = 0.0

    @property
    def client(self) -> Any:
        if self._client is None:
            from tracker.redis_index import connect

            self._client = connect(self.settings.redis_url)
        return self._client

    def join(self) -> None:
        """Take part in the job; on disk, raise JobBusy when another process runs it."""
        if self.settings.redis_url:
            self.beat(force=True)
            return
        folder = self.settings.home / "crawls"
        folder.mkdir(parents=True, exist_ok=True)
        lock = inside(folder, check_job(self.job) + ".lock")
        self._lock_file = open(lock, "w")  # noqa: SIM115 - held for the whole crawl
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise JobBusy(f"the crawl job {self.job!r} is running in another process; wait for it, give this "
                          "crawl another --job, or set FPT_REDIS_URL so that crawlers share one frontier") from None

    def beat(self, force: bool = False) -> None:
        """Say this crawler is still working (at most every HEARTBEAT_EVERY seconds)."""
        now = time.time()
        if self.settings.redis_url and (force or now - self._last_beat >= HEARTBEAT_EVERY):
            self.client.zadd(redis_keys(self.settings, self.job)["crawlers"], {self.id: now})
            self._last_beat = now

    def leave(self) -> bool:
        """Stop taking part; True when no other crawler is left working on the job."""
        if not self.settings.redis_url:
            if self._lock_file is not None:
                self._lock_file.close()  # releases the lock
                self._lock_file = None
            return True
        key = redis_keys(self.settings, self.job)["crawlers"]
        pipe = self.client.pipeline()
        pipe.zrem(key, self.id)
        pipe.zremrangebyscore(key, "-inf", time.time() - STALE_AFTER)
        pipe.zcard(key)
        return pipe.execute()[-1] == 0
