"""SQLiteStore: the store contract, plus what only the embedded file has to keep:
data across runs, WAL, the schema version, and several processes sharing one file."""
from __future__ import annotations

import multiprocessing
import sqlite3
import traceback
from pathlib import Path

import pytest

from tracker.store import NotFound, StoreError, Work
from tracker.store.open import SQLITE_NAME, open_store, store_at
from tracker.store.sqlite import BUSY_TIMEOUT_MS, SCHEMA_VERSION, SQLiteStore

from .store_contract import T0, ReportContract, StoreContract, chapter, fingerprint, match, page
from .store_contract_discovery import DiscoveryContract
from .store_contract_evidence import EvidenceContract, FileEvidenceContract
from .store_contract_images import ImagesContract
from .store_contract_keys import KeysContract
from .store_contract_schedule import SiteScheduleContract
from .store_contract_seen import SeenTextsContract
from .store_contract_tenancy import TenancyContract
from .store_contract_totals import TotalsContract


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.sqlite3")
    yield s
    s.close()


class TestSQLiteStore(StoreContract, ReportContract, ImagesContract, EvidenceContract, FileEvidenceContract,
                      DiscoveryContract, TenancyContract, SiteScheduleContract, TotalsContract, KeysContract,
                      SeenTextsContract):
    pass


def test_data_kept_after_close_and_reopen(tmp_path):
    path = tmp_path / "keep.sqlite3"
    s = SQLiteStore(path)
    s.upsert_work(Work(id="山城", title="山城旧事", created_at=T0))
    ch, _ = s.upsert_chapter(chapter("山城/1"))
    s.upsert_page(page("p"))
    s.set_page_status("p", "failed", "why")
    s.put_fingerprint(fingerprint("山城/1", data=b"\x00\xff"))
    s.upsert_match(match("p", "山城/1"))
    s.set_match_status("p", "山城/1", "confirmed", by="me")
    before = (s.works(), list(s.chapters()), s.get_page("p"), list(s.fingerprints("p1")), s.matches(), s.counts())
    s.close()

    s = SQLiteStore(str(path))
    after = (s.works(), list(s.chapters()), s.get_page("p"), list(s.fingerprints("p1")), s.matches(), s.counts())
    assert after == before
    s.delete_chapter("山城/1")
    new, _ = s.upsert_chapter(chapter("山城/2"))
    assert new.doc > ch.doc  # AUTOINCREMENT: a deleted number is not handed out again, even after reopening
    s.close()


def test_a_store_made_before_page_validators_gets_their_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)  # the pages table as version 1 first made it
    raw.execute("DROP TABLE pages")
    raw.execute("CREATE TABLE pages (key TEXT PRIMARY KEY, text TEXT NOT NULL, url TEXT NOT NULL, site TEXT NOT NULL, "
                "fetched_at TEXT NOT NULL, content_hash TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL, "
                "attempts INTEGER NOT NULL, updated_at TEXT NOT NULL, meta TEXT NOT NULL)")
    raw.execute("INSERT INTO pages VALUES ('old', '旧页', 'http://a/1', 'a', '2026-01-01T00:00:00.000+00:00', 'h', "
                "'done', '', 1, '2026-01-01T00:00:00.000+00:00', '{}')")
    raw.commit()
    raw.close()
    s = SQLiteStore(path)
    assert (s.get_page("old").etag, s.page_validators("old")) == ("", ("", ""))
    s.upsert_page(page("new", etag='"e"', last_modified="Thu, 01 Jan 2026 00:00:00 GMT"))
    s.close()
    s = SQLiteStore(path)  # reopening adds nothing twice
    assert s.page_validators("new") == ('"e"', "Thu, 01 Jan 2026 00:00:00 GMT")
    s.close()


def test_wal_busy_timeout_and_schema_version(tmp_path):
    path = tmp_path / "s.sqlite3"
    s = SQLiteStore(path)
    conn = s._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert [tuple(r) for r in conn.execute("SELECT version FROM schema_version")] == [(SCHEMA_VERSION,)]
    s.close()
    SQLiteStore(path).close()  # reopening does not add a second version row
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"chapters_order", "pages_status", "pages_site", "fingerprints_params", "matches_ranked", "matches_verdicts",
            "matches_work", "matches_site", "matches_status"} <= indexes
    raw.close()


def test_unique_keys_enforced_by_the_schema(tmp_path):
    path = tmp_path / "u.sqlite3"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)
    for table, columns, row in [
        ("works", "id, title, author, created_at", ("w", "t", "", "x")),
        ("chapters", "key, work, title, text, content_hash, updated_at", ("k", "w", "t", "", "", "x")),
        ("fingerprints", "chapter, params_hash, params, data, created_at", ("c", "p", "{}", b"", "x")),
    ]:
        marks = ",".join("?" * len(row))
        raw.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", row)
        with pytest.raises(sqlite3.IntegrityError):
            raw.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", row)
    raw.close()


def test_newer_schema_is_refused_with_a_fix(tmp_path):
    path = tmp_path / "new.sqlite3"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="upgrade fptrack"):
        SQLiteStore(path)


def test_unopenable_path_names_the_problem(tmp_path):
    bad = tmp_path / "no" / "such" / "folder" / "s.sqlite3"
    with pytest.raises(StoreError) as e:
        SQLiteStore(bad)
    assert str(bad) in str(e.value) and "writable" in str(e.value)
    not_db = tmp_path / "notes.txt"
    not_db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="fptrack store"):
        SQLiteStore(not_db)


def test_memory_store_works():
    s = SQLiteStore(":memory:")
    s.upsert_work(Work(id="w", title="t"))
    assert [w.id for w in s.works()] == ["w"]
    s.close()


def test_use_after_close_raises_store_error(tmp_path):
    s = SQLiteStore(tmp_path / "c.sqlite3")
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.works()
    with pytest.raises(StoreError, match="closed"):
        list(s.pages())


def test_not_found_message_names_the_key(store):
    with pytest.raises(NotFound, match="山城/9"):
        store.get_chapter("山城/9")


def test_failed_transaction_rolls_back(store):
    store.upsert_page(page("k"))
    with pytest.raises(ZeroDivisionError):
        with store._write() as c:
            c.execute("UPDATE pages SET status = 'done' WHERE key = 'k'")
            raise ZeroDivisionError  # a failure inside the transaction
    assert store.get_page("k").status == "queued"
    store.set_page_status("k", "done")  # the connection is usable afterwards
    assert store.get_page("k").status == "done"


def test_store_shared_between_threads_one_at_a_time(store):
    import threading

    errors = []

    def work(n):
        try:
            for i in range(50):
                store.upsert_match(match(f"t{n}-{i}", "w/c"))
                store.counts()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.counts()["matches"]["new"] == 200


# ---- two processes on one file ----------------------------------------------------

def _writer(path: str, start, results) -> None:
    try:
        s = SQLiteStore(path)
        start.wait(10)
        for i in range(200):
            s.upsert_match(match(f"https://copy.example/{i}", "山城/1", containment=i / 200))
            if i % 20 == 0:
                s.upsert_page(page(f"w{i}"))
        s.close()
        results.put(("writer", "ok"))
    except Exception:
        results.put(("writer", traceback.format_exc()))


def _reader(path: str, start, results) -> None:
    try:
        s = SQLiteStore(path)
        start.wait(10)
        seen = []
        for i in range(400):
            n = sum(s.counts()["matches"].values())
            seen.append(n)
            s.matches(limit=10)
            if i % 10 == 0:  # writes too, so the two processes contend for the write lock
                s.upsert_page(page(f"r{i}"))
                s.set_page_status(f"r{i}", "done")
            if n == 200:
                break
        s.close()
        assert seen == sorted(seen), "counts went backwards"
        results.put(("reader", "ok"))
    except Exception:
        results.put(("reader", traceback.format_exc()))


def test_two_processes_share_the_file(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    SQLiteStore(path).close()
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=f, args=(path, start, results)) for f in (_writer, _reader)]
    for p in procs:
        p.start()
    start.set()
    outcome = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(30)
    assert outcome == {"writer": "ok", "reader": "ok"}, outcome
    s = SQLiteStore(path)
    assert s.counts()["matches"]["new"] == 200
    assert len(s.matches()) == 200
    s.close()


# ---- open_store -----------------------------------------------------------------

def test_open_store_without_url_is_sqlite_in_home(tmp_path):
    home = tmp_path / "a" / "b"
    s = store_at(None, home)
    try:
        assert isinstance(s, SQLiteStore)
        assert Path(s.path) == home / SQLITE_NAME and (home / SQLITE_NAME).is_file()
        s.upsert_work(Work(id="w", title="t"))
    finally:
        s.close()
    s = store_at("", home)  # an empty URL means "not set"
    try:
        assert isinstance(s, SQLiteStore) and [w.id for w in s.works()] == ["w"]
    finally:
        s.close()


def test_open_store_opens_what_the_settings_name(tmp_path):
    from tracker.settings import Settings

    home = tmp_path / "home"
    s = open_store(Settings.load({"FPT_HOME": str(home), "FPT_MONGO_URL": ""}))
    try:
        assert isinstance(s, SQLiteStore) and Path(s.path) == home / SQLITE_NAME
    finally:
        s.close()


def test_open_store_home_not_creatable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="FPT_HOME"):
        store_at(None, blocker / "home")


def test_threads_read_side_by_side_while_one_writes(tmp_path):
    import threading

    s = SQLiteStore(tmp_path / "t.sqlite3")
    s.upsert_chapter(chapter("W/1", text="甲" * 50))
    errors: list[BaseException] = []
    seen: list[int] = []

    def reader():
        try:
            for _ in range(100):
                seen.append(s.count_matches(work="W"))
                s.matches(work="W", limit=5)
        except BaseException as e:  # any error in a thread fails the test below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(6)]
    for t in threads:
        t.start()
    for i in range(200):
        s.upsert_match(match(f"https://a.test/{i}", "W/1"))
    for t in threads:
        t.join()
    assert errors == []
    assert seen == sorted(seen) or max(seen) <= 200  # counts only grow, never beyond what was written
    assert s.count_matches(work="W") == 200
    s.close()
