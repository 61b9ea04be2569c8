"""Handing pages on for processing: to the Celery workers when FPT_BROKER_URL is
set, otherwise right here, in-process. `fptrack ingest` and the crawler's store
pipeline use it; what is waiting to be processed is tracker.workers.backlog's."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from kombu.exceptions import OperationalError
from kombu.utils.url import maybe_sanitize_url

from fingerprint.plural import counted

from .. import pipeline
from ..context import Context
from ..settings import SettingsError
from .names import PROCESS_IMAGE, PROCESS_PAGE


class BrokerUnavailable(SettingsError):
    """FPT_BROKER_URL is set but the broker cannot be reached."""


def dispatch_pages(ctx: Context, keys: Iterable[str], *, app=None,
                   progress: Callable[[Iterable], Iterable] | None = None) -> str:
    """Send a process_page task per page key when a broker is configured (or `app` is
    given); otherwise process the pages now (`progress` wraps their list: a progress bar).
    Returns a one-line summary."""
    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        return _process_here(ctx, progress(keys) if progress else keys)
    _send(ctx, PROCESS_PAGE, keys, app)
    return f"queued {counted(len(keys), 'page')} for the workers"


def dispatch_images(ctx: Context, keys: Iterable[str], *, app=None) -> str:
    """As dispatch_pages, for images found on pages (a process_image task per image key)."""
    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        # Pictures with text are read here too (with a broker, process_image sends a read_picture task).
        both = [pipeline.process_image_here(ctx, key) for key in keys]
        done = [d for d, _ in both]
        read_now = [r for _, r in both if r is not None]
        failed = sum(r.status == "failed" for r in done)
        found = sum(len(r.matched.matches) for r in read_now if r.matched is not None)
        return (f"{counted(len(done) - failed, 'image')} done, {failed} failed, "
                f"{counted(sum(len(r.matches) for r in done), 'image match')}"
                + (f", {counted(len(read_now), 'picture')} read by OCR, {counted(found, 'match', 'matches')} "
                   "in their text" if read_now else ""))
    _send(ctx, PROCESS_IMAGE, keys, app)
    return f"queued {counted(len(keys), 'image')} for the workers"


def _send(ctx: Context, name: str, keys: list[str], app=None) -> None:
    if app is None:
        from .app import create_celery

        app = create_celery(ctx.settings)
    task = app.tasks[name]
    try:
        if app.conf.task_always_eager:
            for key in keys:
                task.apply_async((key,))
        else:
            with app.producer_or_acquire() as producer:
                for key in keys:
                    task.apply_async((key,), producer=producer)
    except OperationalError as e:
        url = maybe_sanitize_url(str(app.conf.broker_url or ctx.settings.broker_url))
        raise BrokerUnavailable(
            f"cannot reach the broker at FPT_BROKER_URL={url}: {e}; start it, or unset FPT_BROKER_URL "
            "and run `fptrack process` (the pages are stored as queued, nothing is lost)") from e


def _process_here(ctx: Context, keys: Iterable[str]) -> str:
    done = failed = missing = matches = 0
    for key in keys:
        r = pipeline.process_page(ctx, key)
        done += r.status == "done"
        failed += r.status == "failed"
        missing += r.status == "missing"
        matches += len(r.matches)
    text = f"{counted(done, 'page')} done, {failed} failed, {counted(matches, 'match')}"
    return text + (f", {missing} not in the store" if missing else "")
