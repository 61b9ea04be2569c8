"""A copy marked removed after a takedown, found again by a crawl, reopens its match with a
copy-back event, also when the page comes back unchanged: a 304 Not Modified, or the same text
(no validators). Real crawls of a site served on 127.0.0.1."""
from __future__ import annotations

import pytest

import fptrack_samples
from tracker.context import Context
from web.demo.chapters import chapters_from_folder

from .layout_sites import LayoutSite
from .test_crawl_site import crawl, registered  # noqa: F401 - the fixture and the command
from .test_layouts import assert_accounted, run_of

pytestmark = pytest.mark.slow
CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)


def take_down(settings, base: str) -> tuple[str, str]:
    """Two copies are marked removed after their takedowns; returns their pages."""
    ctx = Context(settings)
    try:
        found = sorted(ctx.store.matches(), key=lambda m: m.page)
        assert len(found) >= 2, found
        for m in found[:2]:
            ctx.store.set_match_status(m.page, m.chapter, "takedown-sent", by="ann")
            ctx.store.set_match_status(m.page, m.chapter, "removed", by="fptrack recheck")
        return found[0].page, found[1].page
    finally:
        ctx.close()


@pytest.mark.parametrize("validators", [True, False], ids=["304", "same-text"])
def test_a_removed_copy_seen_again_unchanged_reopens_with_a_copy_back_event(registered, validators):
    with LayoutSite("qidian", CHAPTERS, validators=validators) as site:
        crawl(registered, site.url + "/")
        back, gone = take_down(registered, site.url)
        del site.pages[gone.removeprefix(site.url)]  # this one really is gone: a 404 now
        before = len(site.hits)
        again = crawl(registered, site.url + "/")
        hits = [h for h in site.hits[before:] if h.path == back.removeprefix(site.url)]
    assert [h.status for h in hits] == ([304] if validators else [200])
    if validators:
        assert again["not modified"] >= 1
    else:
        assert again["unchanged"] >= 1 and again["stored"] == 0  # nothing matched again: the same text
    ctx = Context(registered)
    try:
        (m,) = ctx.store.matches(page=back)
        assert m.status == "confirmed" and m.history[-1]["by"] == "fptrack crawl (copy back)"
        assert m.last_seen.isoformat() > m.history[-2]["at"]  # seen after it was marked removed
        (event,) = ctx.store.events(kind="copy-back")
        assert (event.page, event.chapter, event.data["url"], event.data["status"]) == (
            back, m.chapter, back, "confirmed")
        assert event.data["removed_at"]
        (still,) = ctx.store.matches(page=gone)
        assert still.status == "removed"  # not seen again: stays removed
        run = run_of(ctx, again["site"])
        assert run.counts["copies back"] == 1
        assert_accounted(run)
    finally:
        ctx.close()


def test_a_third_crawl_tells_no_second_copy_back(registered):
    """Reopened once, the match is up: crawling the unchanged page again reopens nothing more."""
    with LayoutSite("qidian", CHAPTERS) as site:
        crawl(registered, site.url + "/")
        take_down(registered, site.url)
        crawl(registered, site.url + "/")
        third = crawl(registered, site.url + "/")
    ctx = Context(registered)
    try:
        assert len(ctx.store.events(kind="copy-back")) == 2
        assert "copies back" not in run_of(ctx, third["site"]).counts
    finally:
        ctx.close()
