"""Report computations on the store's grouped queries."""
from datetime import date, timedelta

from tracker.store import Chapter, MatchRecord, Page
from web.params import Paging
from web.reports.catalog import ChapterCatalog
from web.reports.queries import Reports, fill_days, summary

from .conftest import T0, XSS_ATTR

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")


def test_active_scope_adds_up_the_copies_still_up(store):
    store.set_match_status(*M1, "confirmed", by="t")
    store.set_match_status("evil-1", "山城旧事/第1章", "dismissed", by="t")
    rows = {r["site"]: r for r in summary(store, ["site", "chapter"])}
    assert set(rows) == {"biquge"}  # the dismissed match's site is gone
    by_chapter = {r["chapter"]: r["matches"] for r in summary(store, ["chapter"])}
    assert by_chapter == {"山城旧事/第1章": 1, "山城旧事/第2章": 1}
    assert {r["chapter"]: r["matches"] for r in summary(store, ["chapter"], scope="all")} == {
        "山城旧事/第1章": 2, "山城旧事/第2章": 1}
    merged = summary(store, ["work"])[0]
    assert merged["first_seen"] == T0 and merged["last_seen"] == T0 + timedelta(days=1)


def test_summary_rows_sorted_by_matches_then_group(store):
    rows = summary(store, ["site"], scope="all")
    assert [(r["site"], r["matches"]) for r in rows] == [("biquge", 2), (XSS_ATTR, 1)]


def test_fill_days_keeps_every_day_in_order():
    days = fill_days({"2026-11-20": 4}, 3, today=date(2026, 11, 21))
    assert days == [{"day": "2026-11-19", "matches": 0}, {"day": "2026-11-20", "matches": 4},
                    {"day": "2026-11-21", "matches": 0}]


def test_work_report_lists_matches_of_deleted_chapters(store):
    store.delete_chapter("山城旧事/第2章")
    rep = Reports(store, ChapterCatalog()).work("山城旧事")
    rows = {c["chapter"]: c for c in rep["chapters"]}
    assert rows["山城旧事/第2章"]["registered"] is False and rows["山城旧事/第2章"]["matches"] == 1
    assert rep["totals"]["chapters"] == 2 and rep["totals"]["copied"] == 1


def test_catalog_reloads_when_chapters_are_added(store):
    catalog = ChapterCatalog()
    assert catalog.outline(store).count("山城旧事") == 3
    store.upsert_chapter(Chapter(key="山城旧事/第4章", work="山城旧事", title="第4章", text="新的一章" * 10, number=4))
    outline = catalog.outline(store)
    assert outline.count("山城旧事") == 4 and outline.title("山城旧事/第4章") == "第4章"
    assert outline.title("别的/不存在") == "不存在"


def test_site_report_counts_and_pages_failures(store):
    for i in range(3):
        store.upsert_page(Page(key=f"https://biquge.example/f{i}", url=f"https://biquge.example/f{i}", site="biquge",
                               text="x"))
        store.set_page_status(f"https://biquge.example/f{i}", "failed", "timeout")
    rep = Reports(store, ChapterCatalog()).site("biquge", Paging(page=2, per_page=3))
    assert rep["pages"]["failed"] == 4 and rep["paging"] == {"page": 2, "per_page": 3, "total": 4, "pages": 2}
    assert len(rep["failures"]) == 1


def test_works_list_counts_sites_and_coverage(store):
    store.upsert_match(MatchRecord(page="p", chapter="山城旧事/第3章", work="山城旧事", site="other",
                                   similarity=0.5, containment=0.5, page_share=0.5, verdict="part"))
    w = Reports(store, ChapterCatalog()).works()[0]
    # coverage is of chapters copied in full: the part of chapter 3 is counted apart
    assert (w["copied"], w["in_part"], w["chapters"], w["coverage"], w["sites"], w["matches"]) == (
        2, 1, 3, 2 / 3, 3, 4)
