"""The backlog: stored pages and page images still waiting to be processed, which the
daily run (tracker.tasks.daily) sends to the workers."""
from __future__ import annotations

from .context import Context


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
