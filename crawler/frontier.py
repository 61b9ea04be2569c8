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

FPT_REDIS_URL may name a single instance or any node of a Redis Cluster (the
client is tracker.redis_client.connect's). A job's keys carry the job as their
hash tag, so they live in one slot: the scripts and transactions over several of
them run on one node, and a node lost takes a job's frontier whole or not at all.
A Redis failure before the crawl becomes FrontierUnavailable, one line naming the
cause and the fix; during the crawl it stops the crawl as REDIS_DOWN, a resumable
outcome with that line (crawler.redis_frontier). What the crawler could not give
Redis then (links found, held parts, its leaving) waits in spool files beside the
job on disk, and the next crawler of the job on this machine hands it over.
"""
from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from tracker.safe_names import check_job, inside, job_for_sites
from tracker.settings import Settings

#: Seconds a crawler sharing a Redis frontier waits, idle, for its peers to add requests.
SHARED_IDLE_WAIT = 6.0
#: Seconds without a sign of life after which a crawler no longer counts as working on its job.
STALE_AFTER = 600
HEARTBEAT_EVERY = 10.0
#: The finish reason of a crawl stopped by a Redis failure; its frontier is kept to resume.
REDIS_DOWN = "redis_unavailable"
#: Crawl stats key holding the one line that says what failed in Redis and how to fix it.
FRONTIER_ERROR = "frontier/error"


class FrontierError(RuntimeError):
    """The crawl job cannot run now; the message says why and what to do."""


class JobBusy(FrontierError):
    """Another process is running the same crawl job on disk."""


class FrontierUnavailable(FrontierError):
    """Redis, holding the shared frontier, cannot be used; the message names the cause and the fix."""


def job_name(names: list[str]) -> str:
    """A file- and key-safe job name from the sites' names."""
    return job_for_sites(names)


def job_dir(settings: Settings, job: str) -> Path:
    """The job's folder under FPT_HOME/crawls; a name that would lead elsewhere is an InputError."""
    return inside(settings.home / "crawls", check_job(job))


def redis_keys(settings: Settings, job: str) -> dict[str, str]:
    """The job's keys, all in one hash slot: `{prefix}crawl:{<job>}:requests`, ..."""
    base = f"{settings.redis_prefix}crawl:{{{check_job(job)}}}"
    return {"requests": f"{base}:requests", "seen": f"{base}:seen", "crawlers": f"{base}:crawlers",
            "held": f"{base}:held", "joined": f"{base}:held:joined"}


def spool_files(settings: Settings, job: str) -> dict[str, Path]:
    """Beside the job on disk: what a crawler could not give Redis when it failed (links, held parts),
    taken back by the next crawler of the job on this machine."""
    folder = settings.home / "crawls"
    return {"requests": inside(folder, check_job(job) + ".requests.spool"),
            "held": inside(folder, check_job(job) + ".held.spool"),
            "left": inside(folder, check_job(job) + ".left.spool")}  # crawlers that could not say they left


def add_to_spool(path: Path, item: Any) -> None:
    """Append `item` to a spool file: one write in append mode, so crawlers stopping at once do not mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = pickle.dumps(item)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def take_spool(path: Path) -> list[Any]:
    """Every item added to a spool file, taken at once: a crawler starting beside this one gets none."""
    taken = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        os.replace(path, taken)
    except FileNotFoundError:
        return []
    items = []
    with open(taken, "rb") as f:
        while True:
            try:
                items.append(pickle.load(f))  # written by add_to_spool only, in the user's own FPT_HOME
            except EOFError:
                break
    taken.unlink()
    return items


def frontier_settings(settings: Settings, job: str) -> dict[str, Any]:
    """The Scrapy settings that put the job's frontier on disk or in Redis."""
    if settings.redis_url:
        keys = redis_keys(settings, job)
        spools = spool_files(settings, job)
        return {
            "SCHEDULER": "crawler.redis_frontier.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,  # kept when a crawler stops: the others, or a restart, go on
            "SCHEDULER_QUEUE_CLASS": "crawler.redis_frontier.Queue",
            "SCHEDULER_QUEUE_KEY": keys["requests"],
            "SCHEDULER_DUPEFILTER_KEY": keys["seen"],
            "DUPEFILTER_KEY": keys["seen"],
            "REDIS_URL": settings.redis_url,
            "REDIS_PARAMS": {"redis_cls": "crawler.redis_frontier.Connect"},  # a cluster node gives a RedisCluster
            "FPT_FRONTIER_SPOOL": str(spools["requests"]),  # crawler.redis_frontier.SPOOL
            "FPT_HELD_KEY": keys["held"],  # crawler.extensions.heldparts: held parts kept across a pause
            "FPT_HELD_SPOOL": str(spools["held"]),
        }
    return {"JOBDIR": str(job_dir(settings, job))}


def redis_client(settings: Settings) -> Any:
    """The client for FPT_REDIS_URL; FrontierUnavailable when it cannot be used."""
    from tracker.redis_client import RedisUnavailable, connect

    try:
        return connect(settings.redis_url)
    except RedisUnavailable as e:
        raise FrontierUnavailable(str(e)) from None


def redis_call(settings: Settings, client: Any, command: str, *args: Any) -> Any:
    """`client.<command>(*args)`, a Redis failure turned into FrontierUnavailable with its cause and fix."""
    import redis

    from tracker.redis_client import explain, is_cluster

    try:
        return getattr(client, command)(*args)
    except (redis.RedisError, redis.exceptions.RedisClusterException, OSError) as e:
        raise FrontierUnavailable(explain(e, settings.redis_url, cluster=is_cluster(client))) from None


def start_file(settings: Settings, job: str) -> Path:
    """Beside the job on disk: the start URLs a paused crawl of given URLs was crawling."""
    return inside(settings.home / "crawls", check_job(job) + ".start.json")


def note_start(settings: Settings, job: str, urls: list[str]) -> None:
    """Keep the start URLs of a paused crawl of given URLs, so that another crawl given other URLs and
    the same --job does not resume it without a word."""
    import json

    path = start_file(settings, job)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sorted(set(urls)), ensure_ascii=False), encoding="utf-8")


def noted_start(settings: Settings, job: str) -> list[str] | None:
    """The start URLs noted for the job's paused crawl; None when none were noted (or the note is unreadable)."""
    import json

    try:
        urls = json.loads(start_file(settings, job).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return urls if isinstance(urls, list) and all(isinstance(u, str) for u in urls) else None


def clear_frontier(settings: Settings, job: str) -> None:
    """Forget the job's queue and seen URLs, so that its next crawl starts afresh."""
    start_file(settings, job).unlink(missing_ok=True)
    if settings.redis_url:
        keys = redis_keys(settings, job)
        # One slot (the job's hash tag): one DEL on a cluster too.
        redis_call(settings, redis_client(settings), "delete", keys["requests"], keys["seen"], keys["held"],
                   keys["joined"])
        spools = spool_files(settings, job)
        for kind in ("requests", "held"):
            spools[kind].unlink(missing_ok=True)
    else:
        shutil.rmtree(job_dir(settings, job), ignore_errors=True)


def pending(settings: Settings, job: str) -> bool:
    """Whether the job has a saved frontier to resume."""
    if settings.redis_url:
        keys = redis_keys(settings, job)
        spools = spool_files(settings, job)
        if spools["requests"].exists() or spools["held"].exists():
            return True
        found = redis_call(settings, redis_client(settings), "exists", keys["requests"], keys["seen"], keys["held"])
        return bool(found)
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
            self._client = redis_client(self.settings)
        return self._client

    def join(self) -> None:
        """Take part in the job; on disk, raise JobBusy when another process runs it; with Redis,
        FrontierUnavailable when it cannot be used."""
        if self.settings.redis_url:
            key = redis_keys(self.settings, self.job)["crawlers"]
            redis_call(self.settings, self.client, "zadd", key, {self.id: time.time()})
            self._last_beat = time.time()
            self._forget_left()
            return
        folder = self.settings.home / "crawls"
        folder.mkdir(parents=True, exist_ok=True)
        lock = inside(folder, check_job(self.job) + ".lock")
        self._lock_file = open(lock, "w")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise JobBusy(f"the crawl job {self.job!r} is running in another process; wait for it, give this "
                          "crawl another --job, or set FPT_REDIS_URL so that crawlers share one frontier") from None

    def beat(self) -> None:
        """Say this crawler is still working (at most every HEARTBEAT_EVERY seconds). A Redis failure
        is left to the scheduler to report; the crawler then stops counting after STALE_AFTER."""
        now = time.time()
        if self.settings.redis_url and now - self._last_beat >= HEARTBEAT_EVERY:
            self._last_beat = now  # also when Redis fails: not one more try per response
            try:
                self.client.zadd(redis_keys(self.settings, self.job)["crawlers"], {self.id: now})
            except Exception:
                pass

    def leave(self) -> bool:
        """Stop taking part; True when no other crawler is left working on the job (False when Redis
        cannot tell: a frontier is never cleared on a guess). Leaving twice is harmless."""
        if not self.settings.redis_url:
            if self._lock_file is not None:
                self._lock_file.close()  # releases the lock
                self._lock_file = None
            return True
        key = redis_keys(self.settings, self.job)["crawlers"]
        try:
            # One key: a plain pipeline, on a single instance or a cluster alike.
            pipe = self.client.pipeline(transaction=False)
            pipe.zrem(key, self.id)
            pipe.zremrangebyscore(key, "-inf", time.time() - STALE_AFTER)
            pipe.zcard(key)
            return pipe.execute()[-1] == 0
        except Exception:
            # Still counted in Redis: the next crawler of the job here takes it out (else it would keep
            # the finished job's frontier from being cleared for STALE_AFTER seconds).
            path = spool_files(self.settings, self.job)["left"]
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as f:
                f.write(self.id + "\n")
            return False

    def _forget_left(self) -> None:
        path = spool_files(self.settings, self.job)["left"]
        try:
            left = path.read_text(encoding="utf-8").split()
        except FileNotFoundError:
            return
        if left:
            redis_call(self.settings, self.client, "zrem", redis_keys(self.settings, self.job)["crawlers"], *left)
        path.unlink(missing_ok=True)
