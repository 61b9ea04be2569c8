"""The SQLite store's running totals (tracker/store/sqlite/rollups.py) in a store made before them."""
from __future__ import annotations

import sqlite3

from tracker.store.sqlite import SQLiteStore
from tracker.store.sqlite.rollups import ROLLUPS

from .store_contract import at, match, page
from .store_contract_totals import check_everything


def test_a_store_made_before_the_totals_gets_them_filled_when_opened(tmp_path):
    path = tmp_path / "old.sqlite3"
    store = SQLiteStore(path)
    for i, site in enumerate(["a.com", "b.org", "a.com"]):
        store.upsert_page(page(f"https://{site}/{i}", text=f"页{i}", site=site, fetched_at=at(i)))
        store.upsert_match(match(f"https://{site}/{i}", f"W/{i % 2}", site=site, first_seen=at(i * 900),
                                 last_seen=at(i * 900 + 5)))
    store.set_match_status("https://a.com/2", "W/0", "confirmed", by="ann")
    store.close()
    with sqlite3.connect(path) as conn:  # what a store of an earlier release holds: no totals, no triggers
        for r in ROLLUPS:
            conn.execute(f"DROP TABLE {r.table}")
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
    store = SQLiteStore(path)
    try:
        assert store.count_matches() == 3 and store.count_matches(status="confirmed") == 1
        check_everything(store, ["W"], ["a.com", "b.org"])
        store.upsert_match(match("https://b.org/1", "W/0", site="b.org", first_seen=at(1), last_seen=at(2)))
        check_everything(store, ["W"], ["a.com", "b.org"])  # and kept from then on
    finally:
        store.close()


def test_opening_again_fills_nothing_twice(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = SQLiteStore(path)
    store.upsert_match(match("https://a.com/1", "W/1", site="a.com"))
    store.close()
    store = SQLiteStore(path)
    try:
        assert store.count_matches() == 1 == store.match_totals(["site"])[0]["matches"]
    finally:
        store.close()


def test_the_rollups_are_the_running_totals_both_backends_keep():
    from tracker.store.sqlite.rollups import MATCH_ROLLUPS
    from tracker.store.totals import MATCH_TOTALS

    assert {r.table: r.key_columns for r in MATCH_ROLLUPS} == dict(MATCH_TOTALS)


def test_a_store_with_the_totals_of_an_earlier_version_drops_them_and_fills_the_new_ones(tmp_path):
    """The chapter totals were kept without the verdict (match_groups): a store that has them gets
    the totals by verdict filled when opened, and the old table and its triggers go (their writes cost)."""
    path = tmp_path / "earlier.sqlite3"
    store = SQLiteStore(path)
    store.upsert_match(match("https://a.com/1", "W/1", site="a.com", verdict="excerpt", first_seen=at(0),
                             last_seen=at(1)))
    store.upsert_match(match("https://a.com/2", "W/2", site="a.com", verdict="duplicate", first_seen=at(0),
                             last_seen=at(1)))
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE match_verdicts")
        for t in ("insert", "delete", "move", "widen"):
            conn.execute(f"DROP TRIGGER match_verdicts_{t}")
        conn.execute("CREATE TABLE match_groups (work TEXT NOT NULL, chapter TEXT NOT NULL, site TEXT NOT NULL, "
                     "status TEXT NOT NULL, n INTEGER NOT NULL, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, "
                     "PRIMARY KEY (work, chapter, site, status)) WITHOUT ROWID")
        conn.execute("CREATE TRIGGER match_groups_insert AFTER INSERT ON matches BEGIN "
                     "INSERT INTO match_groups VALUES (NEW.work, NEW.chapter, NEW.site, NEW.status, 1, "
                     "NEW.first_seen, NEW.last_seen); END")
    store = SQLiteStore(path)
    try:
        assert [(r["chapter"], r["verdict"]) for r in store.match_totals(["chapter", "verdict"], work="W")] == [
            ("W/1", "excerpt"), ("W/2", "duplicate")]
        store.upsert_match(match("https://a.com/3", "W/1", site="a.com", verdict="part"))  # no old trigger fires
        check_everything(store, ["W"], ["a.com"])
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'match_groups%'")}
    assert names == set()
