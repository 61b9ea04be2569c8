"""`fptrack sites add --hour --every` and the schedule in `sites list` and `sites show`; the
schedule in rules files, kept when other rules change."""
from __future__ import annotations

import json

import pytest

from crawler.rules import RulesError, load_rules_file, make_rules
from tracker.store.open import store_at

from .test_crawl_site import fptrack, registered, site  # noqa: F401 - fixtures


def listed(settings) -> dict[str, dict]:
    rows = fptrack(settings, "sites", "list", "--format", "jsonl").stdout.splitlines()
    return {r["site"]: r for r in map(json.loads, rows)}


def test_sites_add_sets_the_schedule_and_the_listing_shows_it(settings):
    out = fptrack(settings, "sites", "add", "biquge", "http://www.biquge.test/book/1/", "--hour", "4",
                  "--every", "2").stdout
    assert "schedule: every 2 days at 04:00 UTC" in out
    fptrack(settings, "sites", "add", "plain", "http://plain.test/")
    rows = listed(settings)
    assert rows["biquge"]["schedule"] == "every 2 days at 04:00 UTC"
    assert rows["biquge"]["next_crawl"].endswith("T04:00:00+00:00")
    assert rows["plain"]["schedule"] == "daily at 03:00 UTC" and rows["plain"]["recrawl"] == "yes"
    table = fptrack(settings, "sites", "list").stdout
    assert "schedule" in table.splitlines()[0] and "next_crawl" in table.splitlines()[0]
    assert "(schedule: every 2 days at 04:00 UTC; next crawl " in fptrack(settings, "sites", "show", "biquge").stdout


def test_other_options_keep_the_schedule_and_no_recrawl_pauses_it(settings):
    fptrack(settings, "sites", "add", "biquge", "http://www.biquge.test/book/1/", "--hour", "22", "--no-recrawl")
    fptrack(settings, "sites", "add", "biquge", "--content", "#content")
    store = store_at(None, settings.home)
    s = store.get_site("biquge")
    store.close()
    assert (s.hour, s.every, s.recrawl, s.rules) == (22, 1, False, {"content": "#content"})
    row = listed(settings)["biquge"]
    assert (row["schedule"], row["next_crawl"], row["recrawl"]) == ("paused", None, "no")
    assert "(schedule: paused)" in fptrack(settings, "sites", "show", "biquge").stdout


@pytest.mark.parametrize("args, message", [
    (["--hour", "25"], "hour must be 0-23, got 25"),
    (["--hour", "-1"], "hour must be 0-23, got -1"),
    (["--every", "0"], "every must be 1-30 (days between scheduled crawls), got 0"),
    (["--every", "31"], "got 31"),
])
def test_a_bad_schedule_is_one_line_naming_it(settings, args, message):
    r = fptrack(settings, "sites", "add", "biquge", "http://www.biquge.test/", *args, check=False)
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr


def test_a_rules_file_carries_the_schedule(tmp_path):
    path = tmp_path / "sites.toml"
    path.write_text('[[site]]\nname = "a"\nstart_urls = ["http://a.test/"]\nhour = 0\nevery = 30\n'
                    '[[site]]\nname = "b"\nstart_urls = ["http://b.test/"]\n', encoding="utf-8")
    a, b = load_rules_file(path)
    assert (a.hour, a.every, b.hour, b.every) == (0, 30, None, 1)
    assert a.to_dict()["hour"] == 0 and "hour" not in b.to_dict()
    path.write_text('[[site]]\nname = "a"\nstart_urls = ["http://a.test/"]\nhour = 24\n', encoding="utf-8")
    with pytest.raises(RulesError, match=r"sites.toml, site 1: hour must be 0-23, got 24"):
        load_rules_file(path)
    assert make_rules({"name": "a", "hour": None}).hour is None  # JSON null: the deployment's hour


@pytest.mark.slow
def test_the_hourly_check_crawls_the_due_site_in_a_child_process_and_matches_its_pages(registered, site):
    from datetime import timedelta

    from tracker.context import Context
    from tracker.store import now
    from tracker.workers import tasks

    t = now()
    for name, hour in (("due", t.hour), ("later", (t.hour + 12) % 24)):
        fptrack(registered, "sites", "add", name, f"{site.url}/book/1/", "--follow", "//[^/]+/book/", "--deny", "huge",
                "--delay", "0", "--hour", str(hour))
    ctx = Context(registered)
    try:
        for name in ("due", "later"):  # added an hour ago: "due" is due at this hour's slot, "later" in 11 hours
            s = ctx.store.get_site(name)
            s.created_at = t - timedelta(hours=1)
            ctx.store.delete_site(name)
            ctx.store.upsert_site(s)
        summary = tasks.crawl_due_sites(ctx, t)
        assert summary["due"] == ["due"] and summary["stored"] > 0
        assert {p.site for p in ctx.store.pages()} == {"due"}
        assert ctx.store.crawl_runs(site="later") == [] and len(ctx.store.crawl_runs(site="due")) == 1
        assert ctx.store.count_matches(site="due") > 0  # the crawl matched its pages (no broker: in its process)
        assert tasks.crawl_due_sites(ctx, t + timedelta(minutes=30)) == {"due": [], "stored": 0}
    finally:
        ctx.close()
