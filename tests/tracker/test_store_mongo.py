"""MongoStore: the store contract against mongomock, plus what only MongoDB has to get
right: unique indexes, the doc counter, bytes as Binary, naive datetimes from the
driver, and a missing server failing fast with the fix."""
from __future__ import annotations

import time
from datetime import datetime

import mongomock
import pytest
from bson import Binary
from pymongo.errors import AutoReconnect, DuplicateKeyError, ServerSelectionTimeoutError

from tracker.store import StoreError, Work, content_hash
from tracker.store.mongo import MongoStore, redact
from tracker.store.mongo import connection as mongo_module
from tracker.store.open import store_at

from .store_contract import T0, ReportContract, StoreContract, chapter, fingerprint, match, page
from .store_contract_discovery import DiscoveryContract
from .store_contract_evidence import EvidenceContract
from .store_contract_images import ImagesContract
from .store_contract_keys import KeysContract
from .store_contract_schedule import SiteScheduleContract
from .store_contract_seen import SeenTextsContract
from .store_contract_tenancy import TenancyContract
from .store_contract_totals import TotalsContract


@pytest.fixture
def client():
    return mongomock.MongoClient()  # naive datetimes, like a real client without tz_aware


@pytest.fixture
def store(client):
    s = MongoStore(client=client, db="fptrack_test")
    yield s
    s.close()


class TestMongoStore(StoreContract, ReportContract, ImagesContract, EvidenceContract, DiscoveryContract,
                     TenancyContract, SiteScheduleContract, TotalsContract, KeysContract, SeenTextsContract):
    pass


def test_unique_indexes_created_on_open(store, client):
    db = client["fptrack_test"]

    def unique_keys(collection):
        return {tuple(k for k, _ in spec["key"]) for spec in db[collection].index_information().values()
                if spec.get("unique")}

    assert ("id",) in unique_keys("works")
    # doc is indexed but not unique: on a sharded cluster only the shard key's field (key) can be
    # (tracker/store/mongo/sharding.py); the counter hands each doc out once.
    assert unique_keys("chapters") == {("key",)}
    assert ("doc",) in {tuple(k for k, _ in spec["key"]) for spec in db["chapters"].index_information().values()}
    assert ("key",) in unique_keys("pages")
    assert ("chapter", "params_hash") in unique_keys("fingerprints")
    assert ("page", "chapter") in unique_keys("matches")
    assert ("id",) in unique_keys("sessions")
    queried = {tuple(k for k, _ in spec["key"]) for spec in db["matches"].index_information().values()}
    assert {("containment", "page", "chapter"), ("work", "containment", "page", "chapter"),
            ("site", "containment", "page", "chapter"), ("status", "containment", "page", "chapter")} <= queried
    MongoStore(client=client, db="fptrack_test")  # opening again is fine (indexes already there)


def test_unique_index_refuses_duplicates(store, client):
    store.upsert_page(page("k"))
    with pytest.raises(DuplicateKeyError):
        client["fptrack_test"]["pages"].insert_one({"key": "k"})


def test_doc_numbers_come_from_the_counter(store, client):
    a, _ = store.upsert_chapter(chapter("w/1"))
    b, _ = store.upsert_chapter(chapter("w/2"))
    store.upsert_chapter(chapter("w/1", text="changed"))  # an update takes no number
    assert (a.doc, b.doc) == (1, 2)
    assert client["fptrack_test"]["counters"].find_one({"_id": "chapter_doc"})["value"] == 2
    other = MongoStore(client=client, db="fptrack_test")  # a second process's store continues the sequence
    c, _ = other.upsert_chapter(chapter("w/3"))
    assert c.doc == 3


def test_fingerprint_bytes_stored_as_binary(store, client):
    store.put_fingerprint(fingerprint("w/1", data=b"\x00\x80\xff"))
    raw = client["fptrack_test"]["fingerprints"].find_one({"chapter": "w/1"})
    assert isinstance(raw["data"], (bytes, Binary)) and bytes(raw["data"]) == b"\x00\x80\xff"


def test_naive_datetimes_from_the_driver_come_back_aware(store, client):
    store.upsert_match(match("p", "c", first_seen=T0, last_seen=T0))
    store.set_match_status("p", "c", "confirmed")
    raw = client["fptrack_test"]["matches"].find_one({"page": "p"})
    assert raw["first_seen"].tzinfo is None  # what the driver gives back ...
    m = store.get_match("p", "c")
    assert m.first_seen == T0 and m.first_seen.tzinfo is not None  # ... and what the store returns
    assert datetime.fromisoformat(m.history[0]["at"]).tzinfo is not None


def test_duplicate_key_race_on_insert_becomes_an_update(store, monkeypatch):
    """Two workers upserting the same new match at once: the loser's upsert hits the unique
    index; the store retries it as an update instead of failing."""
    real = store._matches.find_one_and_update
    calls = []

    def racing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            real(*args, **kwargs)  # the other worker's insert lands first
            raise DuplicateKeyError("E11000 duplicate key error")
        return real(*args, **kwargs)

    monkeypatch.setattr(store._matches, "find_one_and_update", racing)
    m = store.upsert_match(match("p", "c", containment=0.3))
    assert m.containment == 0.3 and len(calls) == 2
    assert len(store.matches()) == 1


def test_changed_page_race_retries_against_the_new_text(store, monkeypatch):
    """A page whose text another writer changes between our read and our update: the
    conditional update misses, and the store compares again with what is stored now."""
    store.upsert_page(page("k", text="one"))
    store.set_page_status("k", "done")
    real = store._pages.update_one
    raced = []

    def racing(filter, update, *args, **kwargs):
        if not raced and "content_hash" in filter:
            raced.append(1)
            real({"key": "k"}, {"$set": {"text": "two", "content_hash": content_hash("two")}})
        return real(filter, update, *args, **kwargs)

    monkeypatch.setattr(store._pages, "update_one", racing)
    p, changed = store.upsert_page(page("k", text="two"))
    assert raced and changed is False and p.text == "two"


def test_unreachable_server_fails_fast_with_the_fix():
    started = time.monotonic()
    with pytest.raises(StoreError) as e:
        MongoStore("mongodb://fptrack:secret@127.0.0.1:1/?connectTimeoutMS=200", timeout_ms=300)
    assert time.monotonic() - started < 10
    message = str(e.value)
    assert "cannot reach MongoDB at mongodb://fptrack:***@127.0.0.1:1" in message
    assert "docker compose up mongo" in message and "FPT_MONGO_URL" in message
    assert "secret" not in message


def test_bad_url_is_a_store_error():
    with pytest.raises(StoreError, match="cannot reach MongoDB at http://nope"):
        MongoStore("http://nope")


def test_driver_errors_during_use_become_store_errors(store, monkeypatch):
    def down(*args, **kwargs):
        raise ServerSelectionTimeoutError("localhost:27017: [Errno 111] Connection refused")

    monkeypatch.setattr(store._works, "find_one", down)
    with pytest.raises(StoreError, match="Connection refused.*docker compose up mongo"):
        store.get_work("w")

    def flaky(*args, **kwargs):
        raise AutoReconnect("connection closed")

    monkeypatch.setattr(store._chapters, "find", flaky)
    chapters = store.chapters()
    with pytest.raises(StoreError, match="connection closed"):
        list(chapters)


def test_redact_hides_only_the_password():
    assert redact("mongodb://u:p@h:27017/db") == "mongodb://u:***@h:27017/db"
    assert redact("mongodb://h:27017") == "mongodb://h:27017"
    assert redact("mongodb+srv://user:pa%40ss@cluster.example.net") == "mongodb+srv://user:***@cluster.example.net"


def test_open_store_with_url_is_mongo(monkeypatch, tmp_path):
    made = []

    def fake_client(url, **kwargs):
        made.append((url, kwargs))
        return mongomock.MongoClient()

    monkeypatch.setattr(mongo_module, "MongoClient", fake_client)
    s = store_at("mongodb://db.example:27017", tmp_path / "home", db="other")
    assert isinstance(s, MongoStore)
    assert made == [("mongodb://db.example:27017", {"serverSelectionTimeoutMS": 3000, "tz_aware": True})]
    assert s._db.name == "other"
    s.upsert_work(Work(id="w", title="t", created_at=datetime(2024, 1, 1)))
    assert s.get_work("w").created_at.tzinfo is not None
    assert not (tmp_path / "home").exists()  # no SQLite file when MongoDB is used
    s.close()


def test_unstorable_meta_key_is_a_store_error_naming_the_fix(store):
    with pytest.raises(StoreError, match="without NUL"):
        store.upsert_page(page("k", meta={"bad\x00key": 1}))


def test_running_totals_are_rebuilt_from_the_matches_and_filled_when_missing(client):
    from tracker.store.totals import MATCH_TOTALS

    from .store_contract import at
    from .store_contract_totals import check_everything

    s = MongoStore(client=client, db="fptrack_totals")
    for i, site in enumerate(["a.com", "b.org", "a.com", "c.net"]):
        s.upsert_page(page(f"https://{site}/{i}", text=f"页{i}", site=site))
        s.upsert_match(match(f"https://{site}/{i}", f"W/{i % 2}", work="W", site=site, first_seen=at(i * 900),
                             last_seen=at(i * 900 + 5)))
    s.set_match_status("https://a.com/2", "W/0", "confirmed", by="ann")
    kept = {name: sorted(client["fptrack_totals"][name].find({}), key=lambda d: d["_id"]) for name, _ in MATCH_TOTALS}
    assert s.rebuild_totals() == sum(len(v) for v in kept.values())
    assert {name: sorted(client["fptrack_totals"][name].find({}), key=lambda d: d["_id"])
            for name, _ in MATCH_TOTALS} == kept  # what the writes kept is what the matches give
    client["fptrack_totals"]["match_days"].update_one({}, {"$inc": {"n": 5}})  # off, as after a crash
    s.rebuild_totals()
    check_everything(s, ["W"], ["a.com", "b.org"])
    for name, _ in MATCH_TOTALS:  # a database written before the totals
        client["fptrack_totals"].drop_collection(name)
    s = MongoStore(client=client, db="fptrack_totals")
    assert s.count_matches() == 4 and s.count_matches(status="confirmed") == 1
    check_everything(s, ["W"], ["a.com", "b.org"])


def test_totals_of_an_earlier_version_are_dropped_and_the_totals_by_verdict_filled(client):
    """A database whose chapter totals were kept without the verdict (match_groups): opened, it
    gets the totals by verdict from its matches, and the old collection goes."""
    from .store_contract import at
    from .store_contract_totals import check_everything

    s = MongoStore(client=client, db="fptrack_earlier")
    s.upsert_match(match("https://a.com/1", "W/1", work="W", site="a.com", verdict="excerpt", first_seen=at(0),
                         last_seen=at(1)))
    s.upsert_match(match("https://a.com/2", "W/2", work="W", site="a.com", verdict="contains", first_seen=at(0),
                         last_seen=at(1)))
    db = client["fptrack_earlier"]
    db.drop_collection("match_verdicts")
    db["match_groups"].insert_one({"_id": "W\x1fW/1\x1fa.com\x1fnew", "n": 1})
    s = MongoStore(client=client, db="fptrack_earlier")
    assert "match_groups" not in db.list_collection_names()
    assert [(r["chapter"], r["verdict"]) for r in s.match_totals(["chapter", "verdict"], work="W")] == [
        ("W/1", "excerpt"), ("W/2", "contains")]
    check_everything(s, ["W"], ["a.com"])


def test_a_saved_filter_in_parts_of_two_saves_reads_as_none(store, monkeypatch):
    """A save under way (or two at once) leaves parts of different saves: no filter, so the caller
    builds one from the keys instead of trusting a mix."""
    from tracker.store import NotFound
    from tracker.store.mongo import seen_texts

    monkeypatch.setattr(seen_texts, "PART_BYTES", 4)
    store.put_seen_filter(b"aaaabbbbcc", 3)
    assert store.seen_filter() == (b"aaaabbbbcc", 3)
    store._seen_filter.update_one({"part": 1}, {"$set": {"save": "another"}})
    with pytest.raises(NotFound):
        store.seen_filter()
    store.put_seen_filter(b"dddd", 4)  # a smaller save leaves no part of the larger one behind
    assert store.seen_filter() == (b"dddd", 4) and store._seen_filter.count_documents({}) == 1
