"""Handing pages on for processing: to the Celery workers when FPT_BROKER_URL is
set, otherwise right here, in-process. `fptrack ingest` and the daily run use it."""
from __future__ import annotations

from collections.abc import Iterable

from kombu.exceptions import OperationalError
from kombu.utils.url import maybe_sanitize_url

from . import pipeline
from .context import Context
from .settings import SettingsError

PROCESS_PAGE = "tracker.tasks.process_page"
PROCESS_IMAGE = "tracker.tasks.process_image"


class BrokerUnavailable(SettingsError):
    """FPT_BROKER_URL is set but the broker cannot be reached."""


def dispatch_pages(ctx: Context, keys: Iterable[str], *, app=None) -> str:
    """Send a process_page task per page key when a broker is configured (or `app` is
    given); otherwise process the pages now. Returns a one-line summary."""
    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        return _process_here(ctx, keys)
    _send(ctx, PROCESS_PAGE, keys, app)
    return f"queued {len(keys)} pages for the workers"


def dispatch_images(ctx: Context, keys: Iterable[str], *, app=None) -> str:
    """As dispatch_pages, for images found on pages (a process_image task per image key)."""
    from .images import process_image

    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        done = [process_image(ctx, key) for key in keys]
        failed = sum(r.status == "failed" for r in done)
        return (f"{len(done) - failed} images done, {failed} failed, "
                f"{sum(len(r.matches) for r in done)} image matches")
    _send(ctx, PROCESS_IMAGE, keys, app)
    return f"queued {len(keys)} images for the workers"


def _send(ctx: Context, name: str, keys: list[str], app=None) -> None:
    if app is None:
        from .celery_app import create_celery

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


def _process_here(ctx: Context, keys: list[str]) -> str:
    done = failed = missing = matches = 0
    for key in keys:
        r = pipeline.process_page(ctx, key)
        done += r.status == "done"
        failed += r.status == "failed"
        missing += r.status == "missing"
        matches += len(r.matches)
    text = f"{done} pages done, {failed} failed, {matches} matches"
    return text + (f", {missing} not in the store" if missing else "")


def pages_to_process(ctx: Context) -> tuple[list[str], list[str]]:
    """(queued pages, failed pages with attempts left (fewer than FPT_MAX_ATTEMPTS)).

    Failed pages are sent again as they are: their status changes when they are
    processed, so each processing counts one attempt and nothing else does."""
    queued = [p.key for p in ctx.store.pages(status="queued")]
    retry = [p.key for p in ctx.store.pages(status="failed") if p.attempts < ctx.settings.max_attempts]
    return queued, retry


def images_to_process(ctx: Context) -> list[str]:
    """Page images queued, and failed ones with attempts left (a fetch cut short is fetched anew by
    the next crawl; a file that is no image fails again, until its attempts run out)."""
    return [i.key for i in ctx.store.page_images(status="queued")] + [
        i.key for i in ctx.store.page_images(status="failed") if i.attempts < ctx.settings.max_attempts]
