"""Handing pages on for processing: to the Celery workers when FPT_BROKER_URL is
set, otherwise right here, in-process. `fptrack ingest` and the crawler's store
pipeline use it; what is waiting to be processed is tracker.workers.backlog's."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from kombu.exceptions import OperationalError
from kombu.utils.url import maybe_sanitize_url

from clikit.plural import counted

from .. import pipeline
from ..context import Context
from ..settings import SettingsError
from .task_names import PROCESS_IMAGE, PROCESS_PAGE


class BrokerUnavailable(SettingsError):
    """FPT_BROKER_URL is set but the broker cannot be reached."""


def dispatch_pages(ctx: Context, keys: Iterable[str], *, app=None,
                   progress: Callable[[Iterable], Iterable] | None = None,
                   each: Callable[[pipeline.Processed], None] | None = None) -> str:
    """Send a process_page task per page key when a broker is configured (or `app` is
    given); otherwise process the pages now with tracker.pipeline.process_pages (`progress`
    wraps their list: a progress bar; `each` is told every result). Returns a one-line summary."""
    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        counts = pipeline.process_pages(ctx, progress(keys) if progress else keys, each)
        text = f"{counted(counts['done'], 'page')} done, {counts['failed']} failed, {counted(counts['matches'], 'match')}"
        return text + (f", {counts['missing']} not in the store" if counts.get("missing") else "")
    _send(ctx, PROCESS_PAGE, keys, app)
    return f"queued {counted(len(keys), 'page')} for the workers"


def dispatch_images(ctx: Context, keys: Iterable[str], *, app=None, each=None) -> str:
    """As dispatch_pages, for images found on pages (a process_image task per image key); here,
    tracker.pipeline.process_images matches them and reads the pictures that hold text (with a
    broker, process_image sends each such picture a read_picture task)."""
    keys = list(dict.fromkeys(keys))
    if app is None and not ctx.settings.broker_url:
        c = pipeline.process_images(ctx, keys, each)
        return (f"{counted(c['done'], 'image')} done, {c['failed']} failed, {counted(c['matches'], 'image match')}"
                + (f", {counted(c['pictures read'], 'picture')} read by OCR, "
                   f"{counted(c['picture matches'], 'match', 'matches')} in their text" if c["pictures read"] else ""))
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
