"""Re-checks under the egress policy: a pirate page that cuts its answer short, trickles it or
sits on a refused address is one unreachable page with its reason, and the pages after it are
re-checked."""
from __future__ import annotations

import time

import pytest

from tests.tracker.test_followup import CHAPTER, TEXT, chapter_html, copied
from tracker.context import Context
from tracker.followup.recheck import PoliteClient, recheck
from tracker.store import Page

from .servers import answer, cut_chunked, routes, trickle


@pytest.fixture
def ctx(settings):
    c = Context(settings)
    yield c
    c.close()


def _taken_down(ctx, url: str) -> None:
    ctx.store.upsert_page(Page(key=url, url=url, site="pirate", text=TEXT))
    from tracker.pipeline import process_page

    process_page(ctx, url)
    ctx.store.set_match_status(url, CHAPTER, "takedown-sent")


def test_a_cut_answer_is_one_unreachable_page_and_the_next_pages_are_rechecked(ctx, serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    site = serve(routes({"/1.html": cut_chunked(chapter_html().encode()[:200]),
                         "/2.html": answer(b"<h1>gone</h1>", "404 Not Found"),
                         "/3.html": answer(chapter_html().encode())}))
    copied(ctx, f"{site.url}/1.html")
    for n in (2, 3):
        _taken_down(ctx, f"{site.url}/{n}.html")
    checks = {c.page.rsplit("/", 1)[1]: c for c in recheck(ctx, client=PoliteClient(delay=0, timeout=5)).checks}
    assert (checks["1.html"].outcome, checks["1.html"].reason) == ("unreachable", "no answer: incomplete answer")
    assert checks["2.html"].outcome == "gone" and checks["3.html"].outcome == "up"
    assert ctx.store.get_match(f"{site.url}/1.html", CHAPTER).status == "takedown-sent"  # tried again next run
    assert ctx.store.get_match(f"{site.url}/2.html", CHAPTER).status == "removed"


def test_recheck_on_the_command_line_goes_on_after_a_cut_answer(ctx, settings, serve, monkeypatch):
    from click.testing import CliRunner

    from fptrack.cli import main

    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    site = serve(routes({"/1.html": cut_chunked(), "/2.html": answer(b"<h1>gone</h1>", "404 Not Found")}))
    copied(ctx, f"{site.url}/1.html")
    _taken_down(ctx, f"{site.url}/2.html")
    r = CliRunner().invoke(main, ["recheck", "--format", "jsonl"], env={"FPT_HOME": str(settings.home)})
    assert "Traceback" not in r.output and r.exit_code == 0, r.output
    assert '"outcome": "gone"' in r.output and "incomplete answer" in r.output


def test_a_page_on_a_refused_address_is_not_fetched(ctx, serve):
    site = serve(answer(chapter_html().encode()))
    url = f"http://127.0.0.1:{site.port}/1.html"
    copied(ctx, url)
    [check] = recheck(ctx, client=PoliteClient(delay=0, timeout=5)).checks
    assert check.outcome == "unreachable"
    assert check.reason == (f"refused to fetch {url}: 127.0.0.1 is a loopback address; "
                            "allow it with FPT_FETCH_ALLOW=127.0.0.1/32")
    assert site.requests == []  # not even robots.txt


def test_a_trickling_page_is_cut_at_the_deadline(ctx, serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    site = serve(routes({"/1.html": trickle(every=0.4, total=500), "/robots.txt": answer(b"", "404 Not Found")}))
    copied(ctx, f"{site.url}/1.html")
    start = time.monotonic()
    [check] = recheck(ctx, client=PoliteClient(delay=0, timeout=1.5)).checks
    assert (check.outcome, check.reason) == ("unreachable", "no answer: timed out")
    assert time.monotonic() - start < 4.0
