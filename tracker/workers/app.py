"""The Celery application: a factory that configures it from Settings, and the
entry points behind `fptrack worker` and `fptrack beat`.

Delivery is at-least-once: a task is acknowledged only after it has finished
(`task_acks_late`), so a worker that dies in the middle of one leaves the
message to be delivered again (with Redis as the broker, once the visibility
timeout has passed). Every task is idempotent, so a second run updates the same
records. No result backend is configured: results live in the store.

`celery -A tracker.workers.app worker` also works; the module builds `app` from
the environment (FPT_*) on first use.

Imports run one way: this module imports tracker.workers.tasks (so that every app it makes
has the tasks), tracker.workers.queue imports this module to send, and neither tracker.workers.tasks
nor tracker.workers.task_names imports either of them.
"""
from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from celery.schedules import crontab
from kombu.utils.url import maybe_sanitize_url

from ..settings import Settings, SettingsError
from . import tasks  # noqa: F401  (defines the shared tasks: every app made here gets them)
from .task_names import ALL as TASK_NAMES
from .task_names import DAILY, DEFAULT_QUEUE, FOLLOWUP, SCHEDULED_CRAWLS

log = logging.getLogger(__name__)


def create_celery(settings: Settings | None = None, **conf: Any) -> Celery:
    """A Celery app for these settings. `conf` overrides any Celery setting
    (tests use it for eager mode, a private queue or a short visibility timeout)."""
    settings = settings or Settings.load()
    if not 0 <= settings.recrawl_hour <= 23:
        raise SettingsError(f"FPT_RECRAWL_HOUR must be an hour from 0 to 23 (UTC), got {settings.recrawl_hour}")
    if settings.max_attempts < 1:
        raise SettingsError(f"FPT_MAX_ATTEMPTS must be at least 1, got {settings.max_attempts}")
    app = Celery("fptrack", broker=settings.broker_url or None)
    app.fpt_settings = settings  # read by tracker.workers.tasks to open the worker's Context
    app.conf.update(
        task_default_queue=DEFAULT_QUEUE,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        timezone="UTC",
        enable_utc=True,
        # A failing task retries up to FPT_MAX_ATTEMPTS times (backoff and jitter are set on the tasks).
        task_annotations={name: {"max_retries": settings.max_attempts} for name in TASK_NAMES},
        beat_schedule={
            # The name stays that of earlier versions, whose daily run also re-crawled the sites.
            "daily-recrawl-and-process": {
                "task": DAILY,
                "schedule": crontab(minute=0, hour=settings.recrawl_hour),
            },
            # The sites' own schedules (tracker.sites.schedule). A check still waiting when the next one is
            # sent is dropped: the next one does what it would have done.
            "hourly-scheduled-crawls": {
                "task": SCHEDULED_CRAWLS,
                "schedule": crontab(minute=0),
                "options": {"expires": 3500},
            },
            "daily-followup": {
                "task": FOLLOWUP,
                "schedule": crontab(minute=0, hour=settings.recheck_hour),
            },
        },
        beat_schedule_filename=str(settings.home / "celerybeat-schedule"),
    )
    if conf:
        app.conf.update(conf)
    return app


def require_broker(settings: Settings) -> Settings:
    if not settings.broker_url:
        raise SettingsError(
            "no broker configured: set FPT_BROKER_URL (e.g. redis://127.0.0.1:6379/1 or "
            "amqp://guest:guest@127.0.0.1:5672//) to run workers; without it `fptrack ingest` "
            "and `fptrack process` do the work in-process")
    return settings


def _with_loglevel(argv: list[str]) -> list[str]:
    if any(a in ("-l", "--loglevel") or a.startswith("--loglevel=") for a in argv):
        return argv
    return [*argv, "--loglevel=INFO"]


def run_worker(settings: Settings, argv: list[str] | tuple[str, ...] = ()) -> int | None:
    """Start a worker (blocks until it stops); `argv` are extra `celery worker` options."""
    app = create_celery(require_broker(settings))
    if not settings.redis_url:
        log.warning("FPT_REDIS_URL is not set: this worker keeps its own in-process index, loaded from "
                    "the store; set FPT_REDIS_URL so that all workers share one index")
    log.info("worker for broker %s, queue %s", maybe_sanitize_url(settings.broker_url), app.conf.task_default_queue)
    return app.worker_main(["worker", *_with_loglevel(list(argv))])


def run_beat(settings: Settings, argv: list[str] | tuple[str, ...] = ()) -> int | None:
    """Start beat (blocks): it sends `tracker.tasks.scheduled_crawls` every hour at :00 UTC (each site is
    crawled on its schedule), `tracker.tasks.daily` every day at FPT_RECRAWL_HOUR:00 UTC, and
    `tracker.tasks.followup` at FPT_RECHECK_HOUR:00 UTC."""
    app = create_celery(require_broker(settings))
    settings.home.mkdir(parents=True, exist_ok=True)  # the schedule file lives there
    return app.start(["beat", *_with_loglevel(list(argv))])


def __getattr__(name: str) -> Celery:
    # `celery -A tracker.workers.app ...` looks for `app`; build it from the environment then.
    if name in ("app", "celery"):
        app = create_celery(Settings.load())
        globals()["app"] = globals()["celery"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
