"""Numbers a rights holder reads: chapters copied in full, in part and in an excerpt counted apart;
"active" is the copies still up; crawl failures reach the dashboard."""
import re
from datetime import timedelta

from tracker.store import CrawlRun, MatchRecord
from tracker.store.sqlite import SQLiteStore
from web.params import Paging
from web.reports.catalog import ChapterCatalog
from web.reports.queries import Reports

from .conftest import T0, XSS_ATTR

CH3 = "山城旧事/第3章"


def excerpt_of_chapter_3(store, site="quotes") -> None:
    """A page that quotes 9.5% of chapter 3: an excerpt, not a copy of the chapter."""
    store.upsert_match(MatchRecord(page=f"https://{site}.example/q", chapter=CH3, work="山城旧事", site=site,
                                   similarity=0.1, containment=0.095, page_share=0.4, verdict="excerpt",
                                   first_seen=T0, last_seen=T0))


def html(r) -> str:
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return re.sub(r"\s+", " ", r.get_data(as_text=True))


def test_an_excerpt_is_not_a_chapter_copied(store, admin):
    excerpt_of_chapter_3(store)
    rep = Reports(store, ChapterCatalog()).work("山城旧事")
    t = rep["totals"]
    assert (t["chapters"], t["copied"], t["in_part"], t["excerpted"], t["chapters_found"]) == (3, 2, 0, 1, 3)
    assert t["coverage"] == 2 / 3
    assert t["summary"] == "2 of 3 chapters copied in full, 1 quoted in an excerpt"
    rows = {c["chapter"]: c["kind"] for c in rep["chapters"]}
    assert rows == {"山城旧事/第1章": "full", "山城旧事/第2章": "full", CH3: "excerpt"}
    quotes = next(s for s in rep["sites"] if s["site"] == "quotes")
    assert (quotes["copied"], quotes["excerpted"], quotes["coverage"]) == (0, 1, 0.0)
    page = html(admin.get("/works/山城旧事"))
    assert "<b>2</b> of 3 chapters copied in full, 1 quoted in an excerpt" in page
    assert "of 3 chapters copied <small>" not in page


def test_the_best_copy_of_a_chapter_decides_its_kind(store):
    excerpt_of_chapter_3(store)
    store.upsert_match(MatchRecord(page="https://parts.example/3", chapter=CH3, work="山城旧事", site="parts",
                                   similarity=0.4, containment=0.5, page_share=0.9, verdict="part",
                                   first_seen=T0, last_seen=T0))
    r = Reports(store, ChapterCatalog())
    t = r.work("山城旧事")["totals"]
    assert (t["copied"], t["in_part"], t["excerpted"]) == (2, 1, 0)
    w = r.works()[0]
    assert (w["copied"], w["in_part"], w["excerpted"], w["chapters_found"], w["sites"]) == (2, 1, 0, 3, 4)
    site = r.site("quotes", Paging(1, 10))
    assert site["works"][0]["excerpted"] == 1 and site["works"][0]["copied"] == 0
    assert [c["kind"] for c in site["chapters"]] == ["excerpt"]


def test_the_works_api_and_export_count_kinds_apart(store, admin):
    excerpt_of_chapter_3(store)
    w = admin.get("/api/works").json["works"][0]
    assert (w["copied"], w["excerpted"]) == (2, 1)
    lines = admin.get("/export/works.csv").get_data(as_text=True).splitlines()
    header = lines[0].split(",")
    row = dict(zip(header, lines[1].split(",")))
    assert (row["copied"], row["in_part"], row["excerpted"]) == ("2", "0", "1")


def test_a_removed_copy_is_not_active(store, admin):
    """biquge took both its copies down: it leaves the top sites, its work's copies and the counts still up."""
    for page, chapter in (("https://biquge.example/1.html", "山城旧事/第1章"),
                          ("https://biquge.example/2.html", "山城旧事/第2章")):
        store.set_match_status(page, chapter, "takedown-sent", by="ann")
        store.set_match_status(page, chapter, "removed", by="ann")
    r = Reports(store, ChapterCatalog())
    d = r.dashboard(days=3)
    assert [s["site"] for s in d["top_sites"]] == [XSS_ATTR] and d["active"] == 1
    assert [s["site"] for s in r.work("山城旧事")["sites"]] == [XSS_ATTR]
    assert {s["site"]: s["matches"] for s in r.sites()}["biquge"] == 0
    assert {s["site"]: s["matches"] for s in r.sites(scope="removed")}["biquge"] == 2
    api = admin.get("/api/dashboard").json
    assert [s["site"] for s in api["top_sites"]] == [XSS_ATTR] and api["active"] == 1
    assert "<b>1</b> copies still up" in html(admin.get("/"))


def test_a_copy_under_takedown_is_still_up(store):
    store.set_match_status("https://biquge.example/1.html", "山城旧事/第1章", "takedown-sent", by="ann")
    d = Reports(store, ChapterCatalog()).dashboard(days=3)
    assert d["active"] == 3 and d["top_sites"][0] == {**d["top_sites"][0], "site": "biquge", "matches": 2}


def test_a_crawl_that_failed_pages_reaches_the_dashboard(tmp_path):
    """No page is kept for a fetch that failed: the failures are in the crawl's run, and the
    dashboard shows them rather than "No failed pages"."""
    store = SQLiteStore(tmp_path / "s.sqlite3")
    try:
        store.add_crawl_run(CrawlRun(site="demo", started_at=T0, finished_at=T0 + timedelta(minutes=1),
                                     outcome="finished", counts={"fetched": 6, "stored": 5, "failed": 1},
                                     failed={"HTTP 500": 1}, job="j1"))
        store.add_crawl_run(CrawlRun(site="quiet", started_at=T0, finished_at=T0 + timedelta(minutes=2),
                                     outcome="finished", counts={"fetched": 3, "stored": 3}, job="j2"))
        store.add_crawl_run(CrawlRun(site="down", started_at=T0, finished_at=T0 + timedelta(minutes=3),
                                     outcome="finished", counts={}, job="j3"))
        d = Reports(store, ChapterCatalog()).dashboard(days=3)
        assert d["failures"] == []
        failed = {r["site"]: r for r in d["crawl_failures"]}
        assert set(failed) == {"demo", "down"}  # the crawl that went well is not a failure
        assert failed["demo"]["failed"] == 1 and failed["demo"]["failed_reasons"] == {"HTTP 500": 1}
        assert "fetched nothing" in failed["down"]["why"]
    finally:
        store.close()


def test_the_dashboard_page_lists_failed_crawls(store, admin):
    store.add_crawl_run(CrawlRun(site="demo", started_at=T0, finished_at=T0 + timedelta(hours=1),
                                 outcome="finished", counts={"fetched": 6, "failed": 1},
                                 failed={"HTTP 500 Internal Server Error": 1}, job="j1"))
    page = html(admin.get("/"))
    assert "HTTP 500 Internal Server Error (1)" in page and "http 404 (2)" in page  # and the fixture's crawl
    assert "No failed pages" not in page
