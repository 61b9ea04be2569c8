"""Where a crawl keeps the URLs it has still to fetch and those it has seen.

Embedded (no FPT_REDIS_URL): a job folder under FPT_HOME/crawls (Scrapy's JOBDIR),
so a crawl stopped by Ctrl-C or by --max-pages resumes where it stopped.
With FPT_REDIS_URL: a queue and a seen-set in Redis (scrapy-redis), shared by every
crawler process started with the same job, on this machine or others; they
split the work and never fetch a URL twice.

A crawl that finished clears its frontier, so the next crawl of the site (the
daily run) starts afresh; the store's content hashes then keep unchanged pages
from being matched again.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from tracker.settings import Settings

#: Seconds a crawler sharing a Redis frontier waits, idle, for its peers to add requests.
SHARED_IDLE_WAIT = 6.0


def job_name(names: list[str]) -> str:
    """A file- and key-safe job name from the sites' names."""
    raw = "+".join(sorted(names)) or "crawl"
    return re.sub(r"[^\w.+-]+", "_", raw)[:120]


def job_dir(settings: Settings, job: str) -> Path:
    return settings.home / "crawls" / job


def redis_keys(settings: Settings, job: str) -> dict[str, str]:
    base = f"{settings.redis_prefix}crawl:{job}"
    return {"requests": f"{base}:requests", "seen": f"{base}:seen"}


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
        }
    return {"JOBDIR": str(job_dir(settings, job))}


def clear_frontier(settings: Settings, job: str) -> None:
    """Forget the job's queue and seen URLs, so that its next crawl starts afresh."""
    if settings.redis_url:
        from tracker.redis_index import connect

        connect(settings.redis_url).delete(*redis_keys(settings, job).values())
    else:
        shutil.rmtree(job_dir(settings, job), ignore_errors=True)


def pending(settings: Settings, job: str) -> bool:
    """Whether the job has a saved frontier to resume."""
    if settings.redis_url:
        from tracker.redis_index import connect

        return bool(connect(settings.redis_url).exists(*redis_keys(settings, job).values()))
    return job_dir(settings, job).is_dir()
