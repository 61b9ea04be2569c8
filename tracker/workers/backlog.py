"""The backlog: stored pages and page images still waiting to be processed, which the
daily run (tracker.tasks.daily) sends to the workers."""
from __future__ import annotations

from datetime import timedelta

from ..context import Context
from ..store import now


def pages_to_process(ctx: Context) -> tuple[list[str], list[str]]:
    """(queued pages, failed pages with attempts left (fewer than FPT_MAX_ATTEMPTS)).

    Failed pages are sent again as they are: their status changes when they are
    processed, so each processing counts one attempt and nothing else does."""
    queued = [p.key for p in ctx.store.pages(status="queued")]
    retry = [p.key for p in ctx.store.pages(status="failed") if p.attempts < ctx.settings.max_attempts]
    return queued, retry


#: A picture judged to hold text this long ago and still not read lost its read_picture task (the
#: workers read one in seconds; a backlog of a day is not waiting, it is lost).
PICTURE_WAIT = timedelta(hours=12)


def pictures_to_read(ctx: Context) -> list[str]:
    """Pictures judged to hold text over PICTURE_WAIT ago and not read yet (their read_picture task
    lost with a worker or the broker): their bytes are unchanged, so no crawl queues them again."""
    from ..media.pictures import TO_READ

    before = now() - PICTURE_WAIT
    return [i.key for i in ctx.store.page_images(reading=TO_READ) if i.updated_at < before]


def images_to_process(ctx: Context) -> list[str]:
    """Page images queued, and failed ones with attempts left (a fetch cut short is fetched anew by
    the next crawl; a file that is no image fails again, until its attempts run out)."""
    return [i.key for i in ctx.store.page_images(status="queued")] + [
        i.key for i in ctx.store.page_images(status="failed") if i.attempts < ctx.settings.max_attempts]
