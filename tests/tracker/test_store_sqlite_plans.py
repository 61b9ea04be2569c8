"""The admin's queries on the SQLite store read indexes and running totals, never a sort or a
scan of every match: checked on the plans SQLite makes for the statements the store sends."""
from __future__ import annotations

import sqlite3

import pytest

from tracker.store.sqlite import SQLiteStore

from .store_contract import at, match, page


@pytest.fixture
def traced(tmp_path):
    """(store, statements): the store on a small file, and each SQL statement its reads send."""
    store = SQLiteStore(tmp_path / "p.sqlite3")
    for i in range(40):
        site, work = f"s{i % 4}.com", f"W{i % 3}"
        store.upsert_page(page(f"https://{site}/{i}", text=f"页{i}", site=site, fetched_at=at(i)))
        store.upsert_match(match(f"https://{site}/{i}", f"{work}/{i % 5}", work=work, site=site,
                                 containment=i / 40, first_seen=at(i * 100)))
    sent: list[str] = []
    store._reader().set_trace_callback(sent.append)
    yield store, sent
    store.close()


def plans(path, statements: list[str]) -> list[str]:
    raw = sqlite3.connect(path)
    try:
        return [" / ".join(r[3] for r in raw.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in statements
                if sql.lstrip().upper().startswith("SELECT")]
    finally:
        raw.close()


def test_a_page_of_an_organisations_matches_uses_the_ranked_index_without_sorting(traced):
    store, sent = traced
    for offset in (0, 20):
        store.matches(work=["W0", "W1"], limit=10, offset=offset)
    store.matches(work=["W0"], limit=10, offset=5)  # one work: its own index, in order
    store.matches(work=["W0", "W2"], site="s1.com", status="new", limit=10)
    for plan in plans(store.path, sent):
        assert "TEMP B-TREE" not in plan, plan
        assert "USING" in plan and "INDEX" in plan, plan
    assert sum("matches_ranked" in p for p in plans(store.path, sent)) >= 2


def test_the_reports_kinds_of_copy_and_copies_still_up_read_the_running_totals(traced):
    """What the work report, the works and sites lists and the dashboard ask, in the default
    scope (the copies still up), never reads the matches themselves."""
    from tracker.store import ACTIVE_STATUSES

    store, sent = traced
    active = list(ACTIVE_STATUSES)
    store.match_totals(["site", "chapter", "verdict"], work="W0", status=active)
    store.match_totals(["work", "chapter", "verdict"], status=active)
    store.match_totals(["work", "chapter", "verdict"], site="s1.com", status=active)
    store.match_totals(["site"], status=active)
    store.match_totals(["work", "site"], status=active)
    store.count_matches(site="s1.com", status=active)
    assert sent
    for sql in sent:
        assert "FROM matches" not in sql, sql
    assert any("match_verdicts" in sql for sql in sent)


def test_totals_and_counts_read_the_running_totals(traced):
    store, sent = traced
    store.count_matches()
    store.count_matches(work=["W0", "W1"], status=["new", "confirmed"])
    store.count_matches(site="s1.com", status="confirmed")
    store.match_totals(["site"], work=["W0", "W1"])
    store.match_totals(["work", "chapter"], status=["new"])
    store.match_totals(["day"], work="W1")
    store.page_summary(["site", "status"])
    for sql in sent:
        assert "FROM matches" not in sql and "FROM pages" not in sql, sql


def test_purging_old_events_walks_the_routed_time_index_without_sorting(tmp_path):
    from tracker.store.followup import Delivery, Event

    store = SQLiteStore(tmp_path / "e.sqlite3")
    for i in range(30):
        store.add_event(Event(id=f"e{i}", kind="crawl-failed", at=at(i), routed=True))
        store.add_delivery(Delivery(event=f"e{i}", subscription="s1", created_at=at(i)))
    sent: list[str] = []
    store._conn.set_trace_callback(sent.append)
    assert store.purge_events(at(40), batch=7) == (0, 0)  # every delivery pending: each batch moves on
    store.close()
    selects = plans(store.path, sent)
    assert len([p for p in selects if "events_routed_at" in p]) == 5, selects
    for plan in selects:
        assert "TEMP B-TREE" not in plan and "SCAN" not in plan, plan


def test_the_triggers_read_a_group_again_through_an_index_on_all_its_keys(traced):
    """A match that held its group's earliest or latest time leaves it: the group's times are read
    again from its own rows, found by an index on every key (never a day's or a site's rows)."""
    from tracker.store.sqlite.rollups import ROLLUPS

    store, _ = traced
    raw = sqlite3.connect(store.path)
    try:
        for r in ROLLUPS:
            where = r.rows_of_group.replace("{r}.", "OLD_")
            for column in ("work", "site", "chapter", "status", "verdict", "first_seen", "fetched_at"):
                where = where.replace(f"OLD_{column}", "'x'")
            for _, agg, src in r.edges:
                plan = " / ".join(row[3] for row in raw.execute(
                    f"EXPLAIN QUERY PLAN SELECT {agg}({src}) FROM {r.source} WHERE {where}"))
                assert plan.startswith("SEARCH") and "USING" in plan, (r.table, plan)
                keys = [c for c, _ in r.keys if c != "day"]
                assert all(f"{k}=?" in plan for k in keys), (r.table, plan)
    finally:
        raw.close()
