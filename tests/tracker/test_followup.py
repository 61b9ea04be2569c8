"""Follow-up of takedowns against a real HTTP server on 127.0.0.1: a page whose takedown was
sent is taken down (404) and `fptrack recheck` marks its copy removed; put back, the match
reopens with a copy-back event; a page that drops the copy, robots.txt, a failing server,
the numbers per site, and the hook the tracker calls when it stores matches."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from fptrack.cli import main
from tracker.followup.recheck import PoliteClient, recheck, stats
from tracker.pipeline import process_page, process_queued
from tracker.registry import register_work
from tracker.store import MatchRecord, Page, Site

from .conftest import SAMPLES
from .fixture_site import pirate_site

WORK = "山城旧事"
CHAPTER = f"{WORK}/山城旧事-第二章"
TEXT = (SAMPLES / "originals" / "山城旧事-第二章.txt").read_text(encoding="utf-8")


def chapter_html(text: str = TEXT) -> str:
    lines = "<br>\n".join(line for line in text.splitlines() if line.strip())
    return (f"<html><head><title>第二章 旧宅疑云_笔趣阁</title></head><body><div class='nav'><a href='/'>首页</a></div>"
            f"<h1>第二章 旧宅疑云</h1><div id='content'>{lines}</div><div class='footer'>笔趣阁 www.biquge.test</div>"
            "</body></html>")


def run(*args, env):
    r = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert "Traceback" not in r.output, r.output
    return r


@pytest.fixture
def site():
    with pirate_site() as s:
        s.put("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
        yield s


def copied(ctx, url: str, status: str = "takedown-sent") -> MatchRecord:
    """A page of the pirate site that copies chapter 2, matched by the tracker and moved to `status`."""
    register_work(ctx, WORK, SAMPLES / "originals", author="林岚")
    ctx.store.upsert_page(Page(key=url, url=url, site="pirate", text=TEXT))
    assert process_queued(ctx)["matches"] >= 1
    for s in ("confirmed", "takedown-sent", "removed")[:("confirmed", "takedown-sent", "removed").index(status) + 1]:
        ctx.store.set_match_status(url, CHAPTER, s, by="alice")
    return ctx.store.get_match(url, CHAPTER)


def statuses(m: MatchRecord) -> list[str]:
    return [h["status"] for h in m.history]


def test_a_page_taken_down_is_marked_removed_and_a_copy_back_reopens(ctx, settings, site):
    url = f"{site.url}/book/1/2.html"
    site.put("/book/1/2.html", chapter_html())
    copied(ctx, url)
    env = {"FPT_HOME": str(settings.home)}

    # Still up: the match stays open, and the re-check is kept.
    r = run("recheck", "--delay", "0", "--format", "jsonl", env=env)
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout.splitlines()[0])
    assert row["outcome"] == "up" and row["http"] == 200 and row["removed"] == 0
    assert ctx.store.get_match(url, CHAPTER).status == "takedown-sent"
    assert ctx.store.get_recheck(url).outcome == "up"
    assert "/book/1/2.html" in site.requests and site.requests[0] == "/robots.txt"

    # Taken down: 404, the copy is marked removed with the date; the page (the evidence) stays.
    site.take_down("/book/1/2.html")
    r = run("recheck", "--delay", "0", env=env)
    assert r.exit_code == 0 and "1 gone (1 match marked removed)" in r.output, r.output
    m = ctx.store.get_match(url, CHAPTER)
    assert m.status == "removed" and statuses(m)[-1] == "removed" and m.history[-1]["by"] == "fptrack recheck"
    assert datetime.fromisoformat(m.history[-1]["at"]).date() == datetime.now(UTC).date()
    assert ctx.store.get_page(url).text == TEXT
    check = ctx.store.get_recheck(url)
    assert (check.outcome, check.http_status) == ("gone", 404)
    assert [e.kind for e in ctx.store.events(kind="removed")] == ["removed"]

    # Nothing changes on a second run while it stays down.
    run("recheck", "--delay", "0", env=env)
    assert statuses(ctx.store.get_match(url, CHAPTER)).count("removed") == 1

    # Put back: the match reopens, with its history and a copy-back event.
    site.put("/book/1/2.html", chapter_html())
    r = run("recheck", "--delay", "0", env=env)
    assert r.exit_code == 0 and "1 copy back" in r.output, r.output
    m = ctx.store.get_match(url, CHAPTER)
    assert m.status == "confirmed"
    assert statuses(m) == ["confirmed", "takedown-sent", "removed", "confirmed"]
    assert m.history[-1]["by"] == "fptrack recheck"
    back = ctx.store.events(kind="copy-back")
    assert len(back) == 1 and back[0].page == url and back[0].data["removed_at"] == m.history[-2]["at"]


def test_a_page_that_no_longer_holds_the_copy_is_gone(ctx, site):
    url = f"{site.url}/book/1/2.html"
    site.put("/book/1/2.html", chapter_html())
    copied(ctx, url)
    site.put("/book/1/2.html", "<html><body><div id='content'>本章内容因版权原因已删除。请阅读其他作品。</div></body></html>")
    report = recheck(ctx, client=PoliteClient(delay=0))
    assert [(c.outcome, c.http_status, c.reason) for c in report.checks] == [
        ("gone", 200, "the copy is no longer on the page")]
    assert ctx.store.get_match(url, CHAPTER).status == "removed"


def test_a_page_robots_txt_forbids_is_not_fetched_and_stays_open(ctx, site):
    url = f"{site.url}/private/2.html"
    site.put("/private/2.html", "gone for real", status=404)
    copied(ctx, url)
    report = recheck(ctx, client=PoliteClient(delay=0))
    assert [c.outcome for c in report.checks] == ["blocked"]
    assert "/private/2.html" not in site.requests
    assert ctx.store.get_match(url, CHAPTER).status == "takedown-sent"
    # A site whose rules say not to obey robots.txt is fetched.
    ctx.store.upsert_site(Site(name="pirate", start_urls=[site.url + "/"], rules={"obey_robots": False}))
    assert [c.outcome for c in recheck(ctx, client=PoliteClient(delay=0)).checks] == ["gone"]


def test_a_server_that_fails_or_does_not_answer_changes_nothing(ctx, site):
    url = f"{site.url}/book/1/2.html"
    site.put("/book/1/2.html", "oops", status=503)
    copied(ctx, url)
    report = recheck(ctx, client=PoliteClient(delay=0))
    assert [(c.outcome, c.http_status) for c in report.checks] == [("unreachable", 503)]
    assert ctx.store.get_match(url, CHAPTER).status == "takedown-sent"

    dead = "http://127.0.0.1:9/nothing-listens-here.html"  # the discard port: connection refused
    ctx.store.upsert_page(Page(key=dead, url=dead, site="pirate", text=TEXT))
    process_page(ctx, dead)
    ctx.store.set_match_status(dead, CHAPTER, "takedown-sent")
    checks = {c.page: c for c in recheck(ctx, client=PoliteClient(delay=0, timeout=2)).checks}
    assert checks[dead].outcome == "unreachable" and checks[dead].reason.startswith("no answer")
    assert ctx.store.get_match(dead, CHAPTER).status == "takedown-sent"


def test_a_chapter_split_over_pages_is_fetched_part_by_part(ctx, site):
    half = len(TEXT) // 2
    site.put("/book/1/2.html", chapter_html(TEXT[:half]))
    site.put("/book/1/2_2.html", chapter_html(TEXT[half:]))
    url = f"{site.url}/book/1/2.html"
    register_work(ctx, WORK, SAMPLES / "originals")
    ctx.store.upsert_page(Page(key=url, url=url, site="pirate", text=TEXT,
                               meta={"part_urls": f"{url}\n{site.url}/book/1/2_2.html"}))
    process_queued(ctx)
    ctx.store.set_match_status(url, CHAPTER, "takedown-sent")
    assert [c.outcome for c in recheck(ctx, client=PoliteClient(delay=0)).checks] == ["up"]
    assert "/book/1/2_2.html" in site.requests
    site.take_down("/book/1/2_2.html")
    assert [c.outcome for c in recheck(ctx, client=PoliteClient(delay=0)).checks] == ["gone"]


def test_the_client_waits_between_requests_to_one_host():
    waits = []
    t = [100.0]
    client = PoliteClient(delay=2.0, sleep=lambda s: waits.append(s), clock=lambda: t[0])
    client._wait("a.example", 2.0)
    t[0] += 0.5
    client._wait("a.example", 2.0)
    client._wait("b.example", 2.0)
    assert waits == [1.5]


def test_the_tracker_records_a_new_match_once_and_reopens_a_removed_one_it_finds_again(ctx):
    register_work(ctx, WORK, SAMPLES / "originals")
    url = "https://pirate.example/2.html"
    ctx.store.upsert_page(Page(key=url, url=url, site="pirate", text=TEXT))
    process_page(ctx, url)
    process_page(ctx, url)  # a retried task
    new = ctx.store.events(kind="new-match")
    assert [(e.page, e.chapter, e.work, e.site) for e in new] == [(url, CHAPTER, WORK, "pirate")]
    assert url in new[0].summary and new[0].data["url"] == url
    ctx.store.set_match_status(url, CHAPTER, "removed")
    process_page(ctx, url)  # a crawl finds the copy again
    m = ctx.store.get_match(url, CHAPTER)
    assert m.status == "confirmed" and statuses(m)[-2:] == ["removed", "confirmed"]
    assert [e.page for e in ctx.store.events(kind="copy-back")] == [url]
    assert len(ctx.store.events(kind="new-match")) == 1


def test_a_page_seen_unchanged_reopens_only_its_removed_copies_once(ctx):
    from tracker.followup.recheck import seen_unchanged

    url = "https://pirate.example/3.html"
    for chapter, status in (("W/1", "removed"), ("W/2", "confirmed"), ("W/3", "dismissed")):
        ctx.store.upsert_match(MatchRecord(page=url, chapter=chapter, work="W", site="pirate", similarity=0.9,
                                           containment=0.9, page_share=0.9, verdict="duplicate"))
        ctx.store.set_match_status(url, chapter, status, by="ann")
    later = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert seen_unchanged(ctx.store, url, clock=lambda: later) == ["W/1"]
    m = ctx.store.get_match(url, "W/1")
    assert m.status == "confirmed" and m.last_seen == later and statuses(m)[-2:] == ["removed", "confirmed"]
    assert [s.status for s in ctx.store.matches(page=url, sort="chapter")] == ["confirmed", "confirmed", "dismissed"]
    assert [(e.page, e.chapter) for e in ctx.store.events(kind="copy-back")] == [(url, "W/1")]
    assert seen_unchanged(ctx.store, url) == []  # up already: no second event
    assert len(ctx.store.events(kind="copy-back")) == 1


def test_numbers_per_site(ctx):
    t0 = datetime(2026, 11, 1, tzinfo=UTC)

    def match(page, site, status, sent_day=None, removed_day=None):
        history = []
        if sent_day is not None:
            history.append({"status": "takedown-sent", "by": "a", "at": (t0 + timedelta(days=sent_day)).isoformat()})
        if removed_day is not None:
            history.append({"status": "removed", "by": "r", "at": (t0 + timedelta(days=removed_day)).isoformat()})
        ctx.store.upsert_match(MatchRecord(page=page, chapter="w/1", work="w", site=site, similarity=1,
                                           containment=1, page_share=1, verdict="duplicate", status=status,
                                           history=history))

    match("a1", "a", "removed", 0, 2)
    match("a2", "a", "removed", 0, 4)
    match("a3", "a", "removed", 1, 10)
    match("a4", "a", "takedown-sent", 3)
    match("a5", "a", "confirmed")  # no notice: not counted
    match("b1", "b", "takedown-sent", 5)
    match("b2", "b", "confirmed", 0)  # reopened after its notice
    rows = stats(ctx.store, clock=lambda: t0 + timedelta(days=20))
    assert rows == [
        {"site": "a", "takedowns_sent": 4, "removed": 3, "median_days_to_removal": 4, "pages_still_up": 1,
         "longest_open_days": 17, "reopened": 0, "last_checked": None},
        {"site": "b", "takedowns_sent": 2, "removed": 0, "median_days_to_removal": None, "pages_still_up": 2,
         "longest_open_days": 15, "reopened": 1, "last_checked": None},
    ]


def test_the_daily_follow_up_rechecks_then_tells(ctx, settings, site):
    from tracker.followup.notify import subscribe
    from tracker.followup.recheck import daily

    from .fixture_site import webhook_receiver

    url = f"{site.url}/book/1/2.html"
    with webhook_receiver() as hook:
        register_work(ctx, WORK, SAMPLES / "originals")
        subscribe(ctx.store, "webhook", hook.url, site="pirate", secret="k", kinds=["removed"])
        copied(ctx, url)
        summary = daily(ctx, client=PoliteClient(delay=0))
    assert summary["rechecked"] == 1 and summary["removed"] == 1 and summary["webhooks"] == 1
    assert [json.loads(body)["kind"] for _, body in hook.received] == ["removed"]
