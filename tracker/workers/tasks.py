"""Celery tasks: thin wrappers that take ids and call the pipeline.

Each worker process opens one Context (store, index, engine) on its first task
and reuses it. A store, index or connection error makes the task retry with
exponential backoff and jitter, up to FPT_MAX_ATTEMPTS times; the page stays in
the store meanwhile, so nothing is lost when the retries run out. A Redis failure
is logged as one line that names the cause and the fix (tracker.redis_client.explain),
not as a traceback. Every task is idempotent: running one twice updates the same
records.

The tasks' names come from tracker.workers.task_names; this module imports neither the
Celery app (tracker.workers.app) nor the senders (tracker.workers.queue).
"""
from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_process_init, worker_process_shutdown
from pymongo.errors import ConnectionFailure as MongoConnectionFailure
from redis.exceptions import RedisClusterException, RedisError

from fingerprint.engine import prepare
from fingerprint.index import index_keys

from .. import pipeline
from ..context import Context
from ..fingerprints import pack_keys, params_of
from ..media.pictures import TO_READ
from ..redis_client import RedisUnavailable, explain
from ..redisindex import IndexUnavailable
from ..settings import Settings
from ..sites.schedule import claim_due_sites
from ..store import FingerprintRecord, NotFound, StoreError, now
from .backlog import images_to_process, pages_to_process, pictures_to_read
from .task_names import (
    DAILY,
    FOLLOWUP,
    PROCESS_IMAGE,
    PROCESS_PAGE,
    READ_PICTURE,
    REGISTER_CHAPTER,
    REINDEX,
    SCHEDULED_CRAWLS,
)

log = logging.getLogger(__name__)

#: Redis failing, whoever met it (the index, or redis-py itself; RedisClusterException is no
#: RedisError): logged as the one line of tracker.redis_client.explain, and retried.
REDIS_FAILURES = (RedisUnavailable, IndexUnavailable, RedisError, RedisClusterException)

#: Errors worth retrying: the store or the index could not be reached, or refused a write.
RETRY_ON = (StoreError, MongoConnectionFailure, *REDIS_FAILURES)

_contexts: dict[int, Context] = {}  # id(app) -> this process's Context for that app
_chapters_seen: dict[int, tuple[int, str]] = {}  # id(app) -> the catalog stamp its in-process index was loaded at
_lock = threading.Lock()


def settings_of(app) -> Settings:
    """The settings the app was made with (tracker.workers.app.create_celery), else the environment's."""
    s = getattr(app, "fpt_settings", None)
    return s if s is not None else Settings.load()


def context(app) -> Context:
    """This process's Context for `app`, opened on first use.

    Without FPT_REDIS_URL the index is in-process, loaded from the store. When a
    chapter was added, changed or removed since (a work or a new edition registered by
    another process: the store's catalog stamp moved), it is loaded again so that
    what is registered now is matched. With FPT_REDIS_URL all processes share the
    index and nothing needs reloading.
    """
    with _lock:
        ctx = _contexts.get(id(app))
        if ctx is None:
            ctx = _contexts[id(app)] = Context(settings_of(app))
        if not ctx.settings.redis_url:
            n = ctx.store.catalog_stamp()
            seen = _chapters_seen.get(id(app))
            if seen is not None and seen != n:
                log.info("the store's chapters changed (%d chapters, the latest changed at %s; were %d, %s): "
                         "reloading the in-process index", *n, *seen)
                ctx.index.clear()
                ctx.load_index(ctx.index)
                ctx.tracker.originals.clear()
            _chapters_seen[id(app)] = n
        return ctx


def use_context(app, ctx: Context | None) -> None:
    """Make the tasks of `app` use `ctx` in this process (None: open one from the settings on next use)."""
    with _lock:
        _chapters_seen.pop(id(app), None)
        if ctx is None:
            _contexts.pop(id(app), None)
        else:
            _contexts[id(app)] = ctx


def image_context(app) -> Context:
    """This process's Context for `app`, its image index loaded again when the number of registered
    images has changed since (registered by another process). Every process holds its own image
    index, Redis or not: one count per task keeps it current."""
    ctx = context(app)
    with _lock:
        ctx.refresh_image_index()
    return ctx


@worker_process_init.connect
def _forget_inherited_contexts(**_: Any) -> None:
    # A forked pool process must not share the parent's connections: open its own on first use.
    _contexts.clear()
    _chapters_seen.clear()


@worker_process_shutdown.connect
def _close_contexts(**_: Any) -> None:
    with _lock:
        for ctx in _contexts.values():
            try:
                ctx.close()
            except Exception:  # closing is best effort at shutdown
                log.debug("closing a context failed", exc_info=True)
        _contexts.clear()
        _chapters_seen.clear()


def redis_line(app, error: BaseException) -> str:
    """One line naming what went wrong with Redis, and the fix."""
    if isinstance(error, RedisUnavailable):
        return str(error)  # its message already names the cause and the fix
    ctx = _contexts.get(id(app))
    url = (ctx.settings if ctx is not None else settings_of(app)).redis_url
    return explain(error, url or "the Redis server")


class PipelineTask(Task):
    """Retries on store/index/connection errors with exponential backoff and jitter.
    max_retries is set per app from FPT_MAX_ATTEMPTS (see create_celery)."""

    autoretry_for = RETRY_ON
    retry_backoff = True
    retry_backoff_max = 600
    retry_jitter = True
    max_retries = Settings.max_attempts
    acks_late = True
    reject_on_worker_lost = True
    # Expected failures: Celery logs them in one line, without a traceback (see retry and on_failure).
    throws = (RedisUnavailable,)

    @property
    def ctx(self) -> Context:
        return context(self.app)

    def _subject(self) -> str:
        args = self.request.args or ()
        return self.name.rpartition(".")[2] + (f" {args[0]}" if args else "")

    def retry(self, *args: Any, exc: BaseException | None = None, **options: Any):
        """Task.retry; a Redis failure is logged as one line and carried on as a RedisUnavailable
        with that line, so that the last failure is logged, and recorded, the same way."""
        if isinstance(exc, REDIS_FAILURES) and not isinstance(exc, RedisUnavailable):
            exc = RedisUnavailable(redis_line(self.app, exc))
        if isinstance(exc, RedisUnavailable):
            limit = options.get("max_retries")
            limit = self.max_retries if limit is None else limit
            if limit is None or self.request.retries < limit:
                countdown = options.get("countdown")
                log.warning("%s: %s; retry %d of %s%s", self._subject(), exc, self.request.retries + 1, limit,
                            f" in {countdown} s" if countdown is not None else "")
        return super().retry(*args, exc=exc, **options)

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        if isinstance(exc, RedisUnavailable):
            log.error("%s: gave up after %d retries: %s", self._subject(), self.request.retries, exc)


def _record_give_up(task: PipelineTask, args, kwargs, exc, what: str, record, stays: str) -> None:
    """Out of retries (or an unexpected error): record why on the stored item when the store
    allows it. If it does not, the item simply stays as it was; either way it is kept, and the
    daily run sends it again while it has attempts left."""
    key = args[0] if args else kwargs.get("key")
    if not key:
        return
    reason = f"gave up after {task.request.retries} retries: {type(exc).__name__}: {exc}"
    try:
        record(key, reason)
    except Exception as e:
        log.warning("%s %s %s: could not record its failure (%s)", what, key, stays, e)


class PageTask(PipelineTask):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        super().on_failure(exc, task_id, args, kwargs, einfo)
        _record_give_up(self, args, kwargs, exc, "page",
                        lambda key, why: self.ctx.store.set_page_status(key, "failed", why), "stays queued")


@shared_task(bind=True, base=PageTask, name=PROCESS_PAGE)
def process_page(self: PipelineTask, key: str) -> dict[str, Any]:
    """Match one stored page and record its matches; the page ends "done" or "failed"."""
    r = pipeline.process_page(self.ctx, key)
    if r.status == "failed":
        log.info("page %s failed: %s", key, r.reason)
    return {"page": r.page, "status": r.status, "matches": len(r.matches), "reason": r.reason}


class ImageTask(PipelineTask):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        super().on_failure(exc, task_id, args, kwargs, einfo)
        # As PageTask: the image stays stored; its failure is recorded when the store allows.
        _record_give_up(self, args, kwargs, exc, "image",
                        lambda key, why: self.ctx.store.set_page_image_status(key, "failed", why), "stays queued")


@shared_task(bind=True, base=ImageTask, name=PROCESS_IMAGE)
def process_image(self: PipelineTask, key: str) -> dict[str, Any]:
    """Fingerprint one stored page image and record the registered images it copies."""
    from ..media.images import process_image as run

    ctx = image_context(self.app)
    r = run(ctx, key)
    if r.status == "failed":
        log.info("image %s failed: %s", key, r.reason)
    pipeline.process_picture_page(ctx, r.picture_page)  # a skipped picture was its page's last waiting
    if r.picture == TO_READ:  # a picture with text: read in a task of its own (seconds of CPU, 1 GB)
        self.app.tasks[READ_PICTURE].apply_async((key,))
    return {"image": r.image, "status": r.status, "matches": len(r.matches), "reason": r.reason,
            "picture": r.picture}


class PictureTask(PipelineTask):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        super().on_failure(exc, task_id, args, kwargs, einfo)
        # Out of retries (or an unexpected error): the picture stays stored, its reading says why.
        _record_give_up(self, args, kwargs, exc, "picture",
                        lambda key, why: self.ctx.store.set_page_image_reading(
                            key, {"status": "failed", "reason": why}), "stays to read")


@shared_task(bind=True, base=PictureTask, name=READ_PICTURE)
def read_picture(self: PipelineTask, key: str) -> dict[str, Any]:
    """Read one page picture judged to hold text (tracker.media.pictures.read) within its bounds, store the
    lines with their boxes, and match its page's pictures once none is left to read."""
    r = pipeline.read_picture(self.ctx, key)
    if r.status not in ("read", "missing"):
        log.info("picture %s: %s%s", key, r.status, f" ({r.reason})" if r.reason else "")
    return {"image": r.image, "status": r.status, "characters": r.characters, "reason": r.reason,
            "matched": None if r.matched is None else r.matched.status,
            "matches": 0 if r.matched is None else len(r.matched.matches)}


@shared_task(bind=True, base=PipelineTask, name=REGISTER_CHAPTER)
def register_chapter(self: PipelineTask, key: str) -> dict[str, Any]:
    """Fingerprint one stored chapter again and put its keys into the index."""
    return fingerprint_chapter(self.ctx, key)


@shared_task(bind=True, base=PipelineTask, name=REINDEX)
def reindex(self: PipelineTask) -> dict[str, Any]:
    """Rebuild the index from the stored fingerprints (missing ones are made first)."""
    return {"indexed": pipeline.reindex(self.ctx)}


# Acknowledged when it starts, unlike the page tasks: discovery can outlast the broker's
# visibility timeout (1 h on Redis), and a late ack would have another worker start a second
# daily run every hour. A daily run lost with its worker is made up by the next one, which
# sends every page still queued.
@shared_task(bind=True, base=PipelineTask, name=DAILY, acks_late=False)
def daily(self: PipelineTask) -> dict[str, Any]:
    """The daily run (Celery beat, FPT_RECRAWL_HOUR UTC): compact the Redis index, compute the
    store's running totals of matches again where no transaction keeps them (MongoDB), search for new
    sites (discovery), expire old evidence and notification events, then send a process_page task for
    every queued page and every failed page with attempts left, and a process_image task for every
    such page image, and a read_picture task for every picture judged to hold text half a day ago
    or more and never read. The sites are crawled on their own schedules (scheduled_crawls)."""
    ctx = self.ctx
    compact = getattr(ctx.index, "compact", None)
    if compact is not None:
        compact()  # appends since the last run leave spare room in Redis strings
    rebuild = getattr(ctx.store, "rebuild_totals", None)
    if rebuild is not None:  # MongoDB: no transaction holds a match and its running totals together
        rebuild()
    found = discover_sites(ctx)
    queued, retried = pages_to_process(ctx)
    task = self.app.tasks[PROCESS_PAGE]
    for key in queued + retried:
        task.apply_async((key,))
    images = images_to_process(ctx)
    image_task = self.app.tasks[PROCESS_IMAGE]
    for key in images:
        image_task.apply_async((key,))
    lost = pictures_to_read(ctx)  # judged to hold text, their read_picture task lost
    read_task = self.app.tasks[READ_PICTURE]
    for key in lost:
        read_task.apply_async((key,))
    from ..evidence.retention import expire_evidence

    expired = expire_evidence(ctx.store, ctx.settings.evidence_days)
    purged = expire_old_events(ctx)
    unfinished = remove_unfinished_uploads(ctx)
    summary = {"discovered": found, "queued": len(queued), "retried": len(retried), "images": len(images),
               "pictures": len(lost), "evidence_removed": expired.removed, "events_removed": purged.events,
               "deliveries_removed": purged.deliveries, "unfinished_uploads_removed": unfinished}
    log.info("daily run: %s", summary)
    return summary


# Acknowledged when it starts, as the daily run: a crawl can take hours. A check lost with its
# worker is made up by the next one (tracker.sites.schedule), and a site's slot is claimed before its
# crawl starts, so no two checks crawl it for the same slot.
@shared_task(bind=True, base=PipelineTask, name=SCHEDULED_CRAWLS, acks_late=False)
def scheduled_crawls(self: PipelineTask) -> dict[str, Any]:
    """The hourly check (Celery beat, every hour at :00 UTC): crawl the sites due for their
    scheduled crawl now (tracker.sites.schedule) and send their new pages to the workers."""
    return crawl_due_sites(self.ctx, now())


def crawl_due_sites(ctx: Context, at: datetime) -> dict[str, Any]:
    """Crawl the sites whose schedule is due at `at`; {"due": their names, "stored": pages stored}."""
    due = claim_due_sites(ctx.store, ctx.settings.recrawl_hour, at)
    if not due:
        return {"due": [], "stored": 0}
    summary = {"due": due, "stored": recrawl_sites(ctx, due, process=True)}
    log.info("scheduled crawls: %s", summary)
    return summary


# Acknowledged when it starts, as the daily run: re-fetching the pages politely can take long.
@shared_task(bind=True, base=PipelineTask, name=FOLLOWUP, acks_late=False)
def followup(self: PipelineTask) -> dict[str, Any]:
    """The daily follow-up (Celery beat, FPT_RECHECK_HOUR UTC): re-check the pages whose takedown
    was sent, then send the pending notifications (tracker.followup.recheck.daily)."""
    from ..followup.recheck import daily as run

    summary = run(self.ctx)
    log.info("daily follow-up: %s", summary)
    return summary


def discover_sites(ctx: Context) -> dict[str, Any]:
    """Search for new copies of every work (tracker.discovery.discover; skipped unless FPT_SEARCH_URL is
    set). A search API that fails is one line in the log: the rest of the daily run goes on."""
    from ..discovery.discover import daily_discovery

    try:
        return daily_discovery(ctx)
    except Exception as e:
        log.warning("daily discovery failed: %s", str(e).splitlines()[0] if str(e) else type(e).__name__)
        return {"failed": type(e).__name__}


def expire_old_events(ctx: Context) -> Any:
    """Remove the notification events past FPT_EVENTS_DAYS whose deliveries are done
    (tracker.followup.notify.expire_events). A failure is one line in the log: the daily run goes on."""
    from ..followup.notify import Purged, expire_events

    try:
        return expire_events(ctx.store, ctx.settings.events_days)
    except Exception as e:
        log.warning("daily removal of old notification events failed: %s",
                    str(e).splitlines()[0] if str(e) else type(e).__name__)
        return Purged()


def remove_unfinished_uploads(ctx: Context) -> list[str]:
    """Remove what uploads stopped part-way a day ago or more left (tracker.uploads.novels.remove_unfinished).
    A failure is one line in the log: the daily run goes on."""
    from ..uploads.novels import remove_unfinished

    try:
        return remove_unfinished(ctx)
    except Exception as e:
        log.warning("daily removal of unfinished uploads failed: %s",
                    str(e).splitlines()[0] if str(e) else type(e).__name__)
        return []


#: Longest a scheduled crawl may take before it is stopped (its frontier is kept: the next one resumes it).
RECRAWL_TIMEOUT_S = 6 * 3600


def recrawl_sites(ctx: Context, names: list[str] | None = None, *, process: bool = False) -> int:
    """Crawl the configured sites `names` (None: every one whose schedule is not paused) and store
    what changed; returns how many pages were stored. The stored pages are left queued (the daily
    run sends them to the workers) unless `process`: then the crawl sends them itself when it ends.

    The crawl runs in a child process (tracker.sites.child_crawl: `fptrack crawl`): Scrapy's
    reactor starts only once per process, and a worker runs this every hour."""
    from ..sites.child_crawl import crawl_in_child

    if names is None:
        names = [s.name for s in ctx.store.sites() if s.recrawl]
    if not names:
        log.info("no sites configured for re-crawling (fptrack sites add): skipping the re-crawl")
        return 0
    done = crawl_in_child(ctx.settings, [*(a for n in names for a in ("--site", n)),
                                         *(() if process else ("--no-process",))], timeout=RECRAWL_TIMEOUT_S)
    if done.returncode is None:
        log.error("the re-crawl of %s took more than %d s and was stopped; the next run resumes it",
                  ", ".join(names), RECRAWL_TIMEOUT_S)
        return 0
    if done.failed:
        log.error("the re-crawl of %s failed (exit %d): %s", ", ".join(names), done.returncode,
                  done.stderr.strip()[-2000:])
    stored = 0
    for row in done.rows:
        try:
            stored += int(row.get("stored", 0))
        except (TypeError, ValueError):
            continue
    log.info("re-crawled %s: %d new or changed pages stored", ", ".join(names), stored)
    return stored


def fingerprint_chapter(ctx: Context, key: str) -> dict[str, Any]:
    """Fingerprint a stored chapter with the current parameters, store the fingerprint and
    (re)place its keys in the index. Idempotent."""
    try:
        ch = ctx.store.get_chapter(key)
    except NotFound:
        return {"chapter": key, "status": "missing"}
    p = prepare(ch.key, ch.text, ctx.config, {"work": ch.work, "title": ch.title})
    keys = index_keys(p, ctx.config, ctx.params, role="original")
    ctx.store.put_fingerprint(FingerprintRecord(chapter=ch.key, params_hash=ctx.params_hash,
                                                params=params_of(ctx.config, ctx.params), data=pack_keys(keys)))
    ctx.tracker.originals.pop(ch.doc, None)
    ctx.index.remove(ch.doc)
    if keys.empty:
        return {"chapter": key, "status": "empty"}
    ctx.index.add(ch.doc, keys)
    ctx.tracker.originals[ch.doc] = p
    return {"chapter": key, "status": "indexed"}
