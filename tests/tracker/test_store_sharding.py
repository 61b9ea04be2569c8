"""The MongoDB store on a sharded cluster (tracker.store.mongo.sharding): every operation
the store sends, recorded through the whole store contract and a run of every store
method, must be valid on collections sharded with the chosen keys: unique indexes
prefixed by the shard key, upserts carrying the full shard key, single-document
writes targeted by the shard key (or _id), no shard key changed by an update, and
none of the operations a sharded collection refuses. Then the functions that set a
cluster up, against a stand-in mongos that checks what a real one checks."""
from __future__ import annotations

import inspect
from datetime import timedelta
from typing import Any, NamedTuple

import mongomock
import pytest
from pymongo.errors import OperationFailure

from tracker.store import CrawlRun, Site, StoreError, User, UserSession, Work
from tracker.store.base import Store
from tracker.store.discovery import DiscoveredUrl
from tracker.store.followup import Delivery, Recheck
from tracker.store.mongo import MongoStore, sharding
from tracker.store.mongo.sharding import SHARD_KEYS, UNSHARDED, NotMongos, plan_problems, shard_key_fields
from tracker.store.tenancy import Organisation

from .store_contract import T0, ReportContract, StoreContract, at, chapter, fingerprint, match, page
from .store_contract_discovery import DiscoveryContract, discovery_run, query
from .store_contract_evidence import EvidenceContract, evidence
from .store_contract_images import ImagesContract, image_match, page_image, work_image
from .store_contract_keys import KeysContract, signing_key
from .store_contract_notifications import NotificationsContract, event, subscription
from .store_contract_schedule import SiteScheduleContract
from .store_contract_seen import SeenTextsContract, seen
from .store_contract_tenancy import TenancyContract, token

# ---- recording every operation ----------------------------------------------------------

class Op(NamedTuple):
    collection: str  # "" for a database command
    method: str
    args: tuple
    kwargs: dict

    def __str__(self) -> str:
        shown = ", ".join([*(repr(a)[:120] for a in self.args), *(f"{k}={v!r}"[:80] for k, v in self.kwargs.items())])
        return f"{self.collection or 'db'}.{self.method}({shown})"


class RecordingCollection:
    """A collection whose every method call is logged before it runs."""

    def __init__(self, real: Any, log: list[Op]):
        self._real, self._log = real, log

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if name.startswith("_") or not inspect.ismethod(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.append(Op(self._real.name, name, args, kwargs))
            return attr(*args, **kwargs)
        return call


class RecordingDatabase:
    def __init__(self, real: Any, log: list[Op]):
        self._real, self._log = real, log

    def __getitem__(self, name: str) -> RecordingCollection:
        return RecordingCollection(self._real[name], self._log)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        self._log.append(Op("", "command", args, kwargs))
        return self._real.command(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in ("get_collection", "create_collection", "aggregate", "watch"):
            raise AssertionError(f"the store reached its database through {name}, which this test does not record")
        return getattr(self._real, name)


class RecordingClient:
    def __init__(self, log: list[Op]):
        self._real, self._log = mongomock.MongoClient(), log

    def __getitem__(self, name: str) -> RecordingDatabase:
        return RecordingDatabase(self._real[name], self._log)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


# ---- what a sharded collection accepts ---------------------------------------------------

UPSERTABLE = {"update_one", "update_many", "replace_one", "find_one_and_update", "find_one_and_replace"}
# One document, routed by the shard key; update_one, replace_one and delete_one may use _id
# instead, findAndModify may not (before MongoDB 7.1).
SINGLE = {"update_one": True, "replace_one": True, "delete_one": True,
          "find_one_and_update": False, "find_one_and_replace": False, "find_one_and_delete": False}
REPLACING = {"replace_one", "find_one_and_replace"}
UPDATING = {"update_one", "update_many", "find_one_and_update"}
FILTER_FIRST = UPSERTABLE | set(SINGLE) | {"find", "find_one", "count_documents", "delete_many", "distinct"}
FORBIDDEN_METHODS = {
    "map_reduce": "mapReduce is removed from sharded use (and deprecated)",
    "inline_map_reduce": "mapReduce is removed from sharded use (and deprecated)",
    "group": "group does not run on sharded collections",
    "rename": "renameCollection refuses sharded collections",
    "estimated_document_count": "counts from metadata include orphaned documents on a sharded collection",
    "count": "count includes orphaned documents on a sharded collection (use count_documents)",
    "initialize_unordered_bulk_op": "bulk operations bypass these checks",
    "initialize_ordered_bulk_op": "bulk operations bypass these checks",
    "bulk_write": "bulk operations bypass these checks",
}
FORBIDDEN_STAGES = {
    "$out": "$out cannot write to a sharded collection",
    "$merge": "$merge into a collection the store shards needs the shard key in `on`; keep it out",
    "$lookup": "$lookup from a sharded collection needs MongoDB 5.1 or later",
    "$graphLookup": "$graphLookup from a sharded collection needs MongoDB 5.1 or later",
    "$geoNear": "geoNear is not part of the plan",
    "$collStats": "$collStats answers per shard",
}
FORBIDDEN_COMMANDS = {"eval", "group", "mapReduce", "geoNear", "renameCollection", "count", "applyOps",
                      "cloneCollection", "convertToCapped"}


def _equality(value: Any) -> bool:
    """Whether a filter value pins one value (not a range, $in, $ne, $exists...)."""
    if isinstance(value, dict):
        return list(value) == ["$eq"] or not any(str(k).startswith("$") for k in value)
    return True


def _pinned(filter_: dict[str, Any], fields: tuple[str, ...]) -> bool:
    return bool(fields) and all(f in filter_ and _equality(filter_[f]) for f in fields)


def _updated_fields(update: Any) -> set[str]:
    """The top-level fields an update document or pipeline writes."""
    stages = update if isinstance(update, list) else [update]
    fields = set()
    for stage in stages:
        for _op, spec in stage.items():
            if isinstance(spec, dict):
                fields.update(str(f).split(".")[0] for f in spec)
    return fields


def violations(op: Op) -> list[str]:
    """What in one operation a collection sharded as planned would refuse or serve wrongly."""
    out = []
    where = f"{op}"
    if not op.collection:
        name = next(iter(op.args[0])) if op.args and isinstance(op.args[0], dict) else (op.args or ("",))[0]
        if name in FORBIDDEN_COMMANDS:
            out.append(f"{where}: the {name} command is not for sharded collections")
        return out
    if op.collection not in SHARD_KEYS and op.collection not in UNSHARDED:
        return [f"{where}: collection {op.collection!r} has no place in the sharding plan "
                "(add it to SHARD_KEYS or UNSHARDED in tracker/store/mongo/sharding.py)"]
    if op.method in FORBIDDEN_METHODS:
        out.append(f"{where}: {FORBIDDEN_METHODS[op.method]}")
    if op.method == "aggregate":
        pipeline = op.args[0] if op.args else op.kwargs.get("pipeline", [])
        for stage in pipeline:
            for name in stage:
                if name in FORBIDDEN_STAGES:
                    out.append(f"{where}: {FORBIDDEN_STAGES[name]}")
    fields = shard_key_fields(op.collection)
    if not fields:
        return out
    key = "+".join(fields)
    if op.method in ("create_index", "create_indexes"):
        specs = ([(op.args[0] if op.args else op.kwargs["keys"], op.kwargs.get("unique", False))]
                 if op.method == "create_index" else [(m.document["key"], m.document.get("unique", False))
                                                      for m in op.args[0]])
        for keys, unique in specs:
            names = tuple(k for k, _ in (keys.items() if isinstance(keys, dict) else keys))
            if unique and names[:len(fields)] != fields and names[:1] != ("_id",):
                out.append(f"{where}: a unique index on {op.collection} must start with the shard key {key}")
        return out
    filter_ = (op.args[0] if op.args else op.kwargs.get("filter", {})) if op.method in FILTER_FIRST else {}
    filter_ = filter_ or {}
    upsert = op.kwargs.get("upsert", False) or (op.method in ("update_one", "update_many", "replace_one")
                                               and len(op.args) > 2 and op.args[2] is True)
    if upsert and not _pinned(filter_, fields):
        out.append(f"{where}: an upsert on {op.collection} must name the whole shard key {key} by equality")
    elif (op.method in SINGLE and not _pinned(filter_, fields)
          and not (SINGLE[op.method] and _pinned(filter_, ("_id",)))):
        out.append(f"{where}: a single-document {op.method} on {op.collection} must name the shard key {key}"
                   + (" or _id" if SINGLE[op.method] else ""))
    if op.method in UPDATING:
        update = op.args[1] if len(op.args) > 1 else op.kwargs.get("update", {})
        changed = _updated_fields(update) & set(fields)
        if changed:
            out.append(f"{where}: an update must not change the shard key field(s) {sorted(changed)}")
    if op.method in REPLACING:
        replacement = op.args[1] if len(op.args) > 1 else op.kwargs.get("replacement", {})
        for f in fields:
            if f not in replacement or replacement[f] != filter_.get(f):
                out.append(f"{where}: the replacement must keep the shard key field {f} as the filter names it")
    if op.method in ("insert_one", "insert_many"):
        docs = [op.args[0]] if op.method == "insert_one" else list(op.args[0])
        for d in docs:
            missing = [f for f in fields if f not in d]
            if missing:
                out.append(f"{where}: an inserted document lacks the shard key field(s) {missing}")
    return out


def all_violations(log: list[Op]) -> list[str]:
    return [v for op in log for v in violations(op)]


# ---- the whole store contract, recorded ----------------------------------------------------

@pytest.fixture
def log() -> list[Op]:
    return []


@pytest.fixture
def store(log):
    s = MongoStore(client=RecordingClient(log), db="fptrack_test")
    yield s
    s.close()
    assert log, "no operation was recorded: the recording client is not in the store's path"
    problems = all_violations(log)
    assert not problems, "operations a sharded collection would refuse:\n" + "\n".join(problems[:20])


class TestContractOnShardedCollections(StoreContract, ReportContract, ImagesContract, NotificationsContract,
                                       EvidenceContract, DiscoveryContract, TenancyContract, SiteScheduleContract,
                                       KeysContract, SeenTextsContract):
    """Every contract test, with each operation it makes the store send checked in the
    `store` fixture's teardown."""


# ---- every store method, once --------------------------------------------------------------

class Called:
    """A store wrapper that notes which of its public methods were called."""

    def __init__(self, store: MongoStore):
        self.store, self.names = store, set()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if callable(attr) and not name.startswith("_"):
            self.names.add(name)
        return attr


def store_methods() -> set[str]:
    return {name for name, value in inspect.getmembers(Store, inspect.isfunction) if not name.startswith("_")}


def exercise(s: Any) -> None:
    """Call every method of the store interface at least once, writes and reads alike."""
    s.upsert_work(Work(id="山城旧事", title="山城旧事", created_at=T0))
    s.get_work("山城旧事")
    s.works()
    s.upsert_chapter(chapter("山城旧事/1", number=1))
    s.upsert_chapter(chapter("山城旧事/1", text="改过的第一章。", number=1))
    s.upsert_chapter(chapter("山城旧事/2", number=2))
    doc = s.get_chapter("山城旧事/1").doc
    s.chapter_by_doc(doc)
    list(s.chapters("山城旧事"))
    s.chapter_headers()
    s.count_chapters("山城旧事")
    s.catalog_stamp()
    s.put_fingerprint(fingerprint("山城旧事/1"))
    s.put_fingerprint(fingerprint("山城旧事/1", data=b"\x02"))
    list(s.fingerprints("p1"))
    s.upsert_page(page("https://example.com/1", meta={"made_by": "http"}))
    s.upsert_page(page("https://example.com/1", text="changed", meta={"made_by": "http"}))
    s.upsert_page(page("https://example.com/2"))
    s.get_page("https://example.com/1")
    list(s.pages(status="queued", site="example.com", limit=5))
    s.page_validators("https://example.com/1", made_by="http")
    s.set_page_status("https://example.com/1", "done")
    s.find_pages(status="done", site="example.com", url_contains="example", limit=5, offset=0)
    s.count_pages(site="example.com", url_contains="1")
    s.page_summary(["site", "status"])
    s.upsert_match(match("https://example.com/1", "山城旧事/1", last_seen=at(5)))
    s.upsert_match(match("https://example.com/1", "山城旧事/1", last_seen=at(1)))
    s.upsert_match(match("https://example.com/2", "山城旧事/2"))
    s.get_match("https://example.com/1", "山城旧事/1")
    s.matches(work="山城旧事", site="example.com", status="new", limit=5, offset=0, sort="-containment")
    s.matches(page="https://example.com/1", chapter="山城旧事/1")
    s.count_matches(work="山城旧事", status=["new", "confirmed"])
    s.match_summary(["work", "site", "day"], status="new")
    s.match_totals(["work", "site", "day"], status="new")
    s.set_match_status("https://example.com/1", "山城旧事/1", "confirmed", by="alice")
    s.set_match_status("https://example.com/1", "山城旧事/1", "confirmed", by="alice")
    s.delete_page("https://example.com/1")  # a reviewed match keeps it
    s.delete_page("https://example.com/2")
    s.delete_chapter("山城旧事/2")
    s.upsert_site(Site(name="example", start_urls=["https://example.com/"]))
    s.get_site("example")
    s.claim_site_slot("example", at(60))
    s.sites()
    s.add_crawl_run(CrawlRun(site="example", started_at=T0, finished_at=at(1), outcome="finished",
                             counts={"fetched": 2}, skipped={"off site": 1}))
    s.crawl_runs(site="example", limit=5)
    s.delete_site("example")
    s.upsert_user(User(name="alice", password_hash="x", role="admin"))
    s.get_user("alice")
    s.users()
    s.record_login("alice", False, max_failures=1, lock_for=timedelta(minutes=1), at=T0)
    s.record_login("alice", True, max_failures=1, lock_for=timedelta(minutes=1), at=T0)
    s.add_session(UserSession(id="s1", user="alice", created_at=T0, last_seen=T0))
    s.get_session("s1")
    s.sessions("alice")
    s.touch_session("s1", at(1))
    s.delete_session("s1")
    s.delete_sessions("alice")
    s.purge_sessions(seen_before=at(10), created_before=at(10))
    s.delete_user("alice")
    s.upsert_work_image(work_image())
    s.upsert_work_image(work_image(data=b"other"))
    s.get_work_image("山城旧事/cover.png")
    s.work_images("山城旧事", with_data=True)
    s.count_work_images("山城旧事")
    s.upsert_page_image(page_image())
    s.upsert_page_image(page_image(data=b"other"))
    s.get_page_image("https://img.example.com/c/1.png")
    s.page_images(status="queued", site="example.com", limit=5)
    s.page_image_validators("https://img.example.com/c/1.png")
    s.set_page_image_status("https://img.example.com/c/1.png", "done", fingerprint={"phash": "00"})
    s.set_page_image_reading("https://img.example.com/c/1.png", {"status": "no text"})
    s.upsert_image_match(image_match())
    s.get_image_match("https://img.example.com/c/1.png", "山城旧事/cover.png")
    s.image_matches(work="山城旧事", site="example.com", status="new", limit=5, sort="distance")
    s.count_image_matches(image="https://img.example.com/c/1.png")
    s.set_image_match_status("https://img.example.com/c/1.png", "山城旧事/cover.png", "confirmed", by="alice")
    s.delete_work_image("山城旧事/cover.png")
    sub = s.upsert_subscription(subscription())
    s.get_subscription(sub.id)
    s.subscriptions()
    s.add_event(event("e1"))
    s.get_event("e1")
    s.events(kind="new-match", routed=False, site="example.com", limit=5)
    s.set_event_routed("e1")
    s.add_delivery(Delivery(event="e1", subscription=sub.id))
    s.deliveries(subscription=sub.id, status="pending", limit=5)
    s.record_delivery("e1", sub.id, True, "250 ok")
    s.purge_events(at(2), batch=1, dry_run=True)
    s.purge_events(at(2), batch=1)
    s.delete_subscription(sub.id)
    s.put_recheck(Recheck(page="https://example.com/2", site="example.com", url="https://example.com/2",
                          outcome="gone", http_status=404))
    s.get_recheck("https://example.com/2")
    s.rechecks(site="example.com")
    s.upsert_page(page("https://example.com/3"))
    shot, _ = s.put_evidence(evidence("https://example.com/3"))
    s.put_evidence(evidence("https://example.com/gone"))
    s.evidence("https://example.com/3")
    s.evidence_data("https://example.com/3", shot.sha256)
    s.mark_evidence_gone(at(1))
    s.purge_evidence(at(2))
    s.delete_evidence("https://example.com/3")
    run = s.add_discovery_run(discovery_run())
    s.update_discovery_run(run)
    s.get_discovery_run(run.id)
    s.discovery_runs(work="山城旧事", limit=5)
    s.put_discovery_query(query(run.id))
    s.discovery_queries(run.id)
    s.add_discovered_urls([DiscoveredUrl(url="https://example.com/4", site="example.com", run=run.id)])
    s.seen_urls(["https://example.com/4"])
    s.upsert_org(Organisation("north"))
    s.get_org("north")
    s.orgs()
    s.set_owner("work", "山城旧事", "north")
    s.owner("work", "山城旧事")
    s.owners("work")
    s.add_token(token("t1"))
    s.token_by_hash("h-t1")
    s.tokens("north")
    s.touch_token("t1", at(1))
    s.delete_token("t1")
    s.add_signing_key(signing_key("north"))
    s.signing_key("north")
    s.put_seen_text(seen())
    s.get_seen_text(seen().key)
    list(s.seen_text_keys())
    s.count_seen_texts()
    s.put_seen_filter(b"FPBF", 1)
    s.seen_filter()
    s.upsert_work(Work(id="removed", title="removed", created_at=T0))
    s.upsert_chapter(chapter("removed/1", number=1))
    s.delete_work("removed")
    s.counts()
    s.failures(limit=5)
    s.close()


def test_every_store_method_sends_only_what_a_sharded_cluster_accepts():
    log: list[Op] = []
    called = Called(MongoStore(client=RecordingClient(log), db="fptrack_test"))
    exercise(called)
    missed = store_methods() - called.names
    assert not missed, f"store methods this test does not exercise (add them to exercise()): {sorted(missed)}"
    problems = all_violations(log)
    assert not problems, "operations a sharded collection would refuse:\n" + "\n".join(problems)
    # The checks had something to check: every sharded collection took a write that names its key.
    for collection, _key in SHARD_KEYS.items():
        writes = [op for op in log if op.collection == collection and op.method in UPSERTABLE | set(SINGLE)]
        assert writes, f"no write on {collection} was recorded"
        assert any(op.kwargs.get("upsert") for op in writes), f"no upsert on {collection} was recorded"
    used = {op.collection for op in log if op.collection}
    assert used == set(SHARD_KEYS) | UNSHARDED, f"collections used but not planned, or planned but unused: " \
        f"{sorted(used ^ (set(SHARD_KEYS) | UNSHARDED))}"


# ---- the checks catch what would break a sharded cluster -------------------------------------

@pytest.mark.parametrize("op, complaint", [
    (Op("chapters", "create_index", ([("doc", 1)],), {"unique": True, "name": "doc_1"}),
     "unique index on chapters must start with the shard key key"),
    (Op("matches", "create_index", ([("chapter", 1), ("page", 1)],), {"unique": True}),
     "must start with the shard key page"),
    (Op("pages", "update_one", ({"url": "u"}, {"$set": {"x": 1}}), {"upsert": True}),
     "upsert on pages must name the whole shard key key"),
    (Op("pages", "update_one", ({"key": {"$in": ["a", "b"]}}, {"$set": {"x": 1}}, True), {}),
     "upsert on pages"),
    (Op("matches", "find_one_and_update", ({"work": "w"}, {"$set": {"status": "x"}}), {}),
     "single-document find_one_and_update on matches must name the shard key page"),
    (Op("matches", "find_one_and_update", ({"_id": 1}, {"$set": {"status": "x"}}), {}), "shard key page"),
    (Op("pages", "delete_one", ({"url": "u"},), {}), "delete_one on pages must name the shard key key or _id"),
    (Op("pages", "update_one", ({"key": "k"}, {"$set": {"key": "other"}}), {}), "must not change the shard key"),
    (Op("fingerprints", "replace_one", ({"chapter": "a", "params_hash": "p"}, {"chapter": "b"}), {"upsert": True}),
     "replacement must keep the shard key field chapter"),
    (Op("pages", "insert_one", ({"url": "u"},), {}), "lacks the shard key"),
    (Op("matches", "aggregate", ([{"$match": {}}, {"$out": "copy"}],), {}), "$out cannot write"),
    (Op("works", "aggregate", ([{"$lookup": {"from": "chapters"}}],), {}), "$lookup"),
    (Op("pages", "estimated_document_count", (), {}), "orphaned documents"),
    (Op("sessions", "rename", ("old_sessions",), {}), "renameCollection"),
    (Op("", "command", ("mapReduce",), {}), "mapReduce command"),
    (Op("reviews", "find_one", ({},), {}), "no place in the sharding plan"),
])
def test_the_checks_catch_an_operation_that_breaks_sharding(op, complaint):
    found = violations(op)
    assert any(complaint in v for v in found), found


@pytest.mark.parametrize("op", [
    Op("pages", "update_one", ({"key": "k", "content_hash": "h"}, {"$set": {"text": "t"}}), {}),
    Op("pages", "update_one", ({"key": {"$eq": "k"}}, {"$setOnInsert": {"text": "t"}}), {"upsert": True}),
    Op("sessions", "update_one", ({"user": "u"}, {"$set": {"x": 1}}), {"upsert": True}),  # not sharded
    Op("pages", "delete_one", ({"_id": 5},), {}),
    Op("pages", "delete_many", ({"site": "s"},), {}),
    Op("matches", "find", ({"status": "new"},), {}),
    Op("matches", "create_index", ([("site", 1), ("status", 1)],), {"unique": False}),
])
def test_the_checks_accept_what_a_sharded_cluster_accepts(op):
    assert violations(op) == []


def test_the_plan_fits_the_store_indexes():
    assert plan_problems(MongoStore.INDEXES) == []
    planned = set(SHARD_KEYS) | UNSHARDED
    assert set(MongoStore.INDEXES) | {"counters"} == planned
    assert not set(SHARD_KEYS) & UNSHARDED
    for collection, key in SHARD_KEYS.items():
        assert list(key.values()) == ["hashed"], f"{collection}: a single hashed field, for even writes"
        unique = [tuple(f for f, _ in keys) for keys, u in MongoStore.INDEXES[collection] if u]
        assert unique, f"{collection} has no unique index"
        # The shard key leads the unique key every upsert names, so every write targets one shard.
        assert all(u[:1] == shard_key_fields(collection) for u in unique), (collection, unique)


def test_the_plan_refuses_a_unique_index_it_cannot_shard():
    bad = {**MongoStore.INDEXES, "chapters": [*MongoStore.INDEXES["chapters"], ([("doc", 1)], True)],
           "reviews": [([("id", 1)], True)]}
    problems = plan_problems(bad)
    assert any("chapters: unique index ('doc',) does not start with the shard key ('key',)" in p for p in problems)
    assert any("reviews: no shard key chosen" in p for p in problems)


def test_an_older_unique_doc_index_is_made_again_without_uniqueness():
    """A database made before chapters were shardable has doc_1 unique: opening the store keeps
    working (MongoDB refuses the same index name with other options) and the data stays."""
    client = mongomock.MongoClient()
    chapters = client["fptrack"]["chapters"]
    chapters.create_index([("doc", 1)], unique=True, name="doc_1")
    chapters.insert_one({"key": "w/1", "doc": 1})
    MongoStore(client=client, db="fptrack")
    info = chapters.index_information()
    assert "doc_1" in info and not info["doc_1"].get("unique")
    assert info["key_1"].get("unique")
    assert chapters.count_documents({}) == 1


# ---- setting a cluster up ---------------------------------------------------------------------

class FakeAdmin:
    """The admin commands of a mongos (or of a replica set member), with the checks a real
    server makes when sharding a collection."""

    def __init__(self, client: FakeCluster, hello: dict[str, Any]):
        self.client, self.hello, self.calls = client, hello, []

    def command(self, command: str, value: Any = 1, **kwargs: Any) -> dict[str, Any]:
        name = command  # pymongo's parameter name: addShard passes name= as a field of the command
        self.calls.append((name, value, kwargs))
        if name == "hello":
            return dict(self.hello)
        if self.hello.get("msg") != "isdbgrid":
            raise OperationFailure(f"no such command: '{name}'", code=59)
        if name == "listShards":
            return {"shards": [{"_id": n, "host": h} for n, h in self.client.shards.items()]}
        if name == "addShard":
            self.client.shards[kwargs["name"]] = value
            return {"shardAdded": kwargs["name"]}
        if name == "enableSharding":
            return {}
        if name == "shardCollection":
            db, collection = value.split(".", 1)
            key = kwargs["key"]
            coll = self.client[db][collection]
            for index in coll.index_information().values():
                names = [f for f, _ in index["key"]]
                if index.get("unique") and names[0] != "_id" and names[:len(key)] != list(key):
                    raise OperationFailure(f"can't shard collection '{value}' with unique index on {index['key']}",
                                           code=72)
            supported = any([f for f, _ in i["key"]][:len(key)] == list(key) for i in coll.index_information().values())
            if coll.count_documents({}) and not supported:
                raise OperationFailure("Please create an index that starts with the proposed shard key", code=72)
            self.client["config"]["collections"].insert_one({"_id": value, "key": key})
            return {"collectionsharded": value}
        raise AssertionError(f"unexpected command {name}")


class FakeCluster:
    def __init__(self, hello: dict[str, Any] | None = None):
        self._real = mongomock.MongoClient()
        self.shards: dict[str, str] = {}
        self.admin = FakeAdmin(self, {"msg": "isdbgrid"} if hello is None else hello)

    def __getitem__(self, name: str) -> Any:
        return self._real[name]

    def close(self) -> None:
        pass


SHARDS = ["shard-a/mongo-shard-a:27018", "shard-b/mongo-shard-b:27018"]


def commands(cluster: FakeCluster, name: str) -> list[tuple]:
    return [c for c in cluster.admin.calls if c[0] == name]


def test_shard_store_adds_shards_and_shards_every_planned_collection():
    cluster = FakeCluster()
    done = sharding.shard_store(cluster, "fptrack", shards=SHARDS)
    assert cluster.shards == {"shard-a": "shard-a/mongo-shard-a:27018", "shard-b": "shard-b/mongo-shard-b:27018"}
    assert commands(cluster, "enableSharding") == [("enableSharding", "fptrack", {})]
    sharded = {c[1]: c[2]["key"] for c in commands(cluster, "shardCollection")}
    assert sharded == {f"fptrack.{c}": k for c, k in SHARD_KEYS.items()}
    assert not any(c.split(".")[1] in UNSHARDED for c in sharded)
    assert "fptrack.pages: sharded on {'key': 'hashed'}" in done and "shard shard-a: added" in done
    # the store's unique indexes were in place before sharding, so the server checked them
    assert cluster["fptrack"]["pages"].index_information()["key_1"]["unique"]
    assert "key_hashed" in cluster["fptrack"]["pages"].index_information()


def test_shard_store_twice_changes_nothing():
    cluster = FakeCluster()
    sharding.shard_store(cluster, "fptrack", shards=SHARDS)
    before = len(commands(cluster, "shardCollection"))
    done = sharding.shard_store(cluster, "fptrack", shards=SHARDS)
    assert len(commands(cluster, "shardCollection")) == before
    assert len(commands(cluster, "addShard")) == 2
    assert "shard shard-b: already added" in done
    assert "fptrack.matches: already sharded on {'page': 'hashed'}" in done


def test_shard_store_shards_a_collection_that_already_holds_documents():
    cluster = FakeCluster()
    store = MongoStore(client=cluster, db="fptrack")
    store.upsert_page(page("https://example.com/1"))
    store.upsert_chapter(chapter("w/1"))
    sharding.shard_store(cluster, "fptrack", shards=SHARDS)
    assert "fptrack.pages" in {c[1] for c in commands(cluster, "shardCollection")}
    assert store.get_page("https://example.com/1").key == "https://example.com/1"


def test_a_unique_index_outside_the_plan_stops_the_sharding():
    """The stand-in refuses what a real mongos refuses, so the tests above are not vacuous."""
    cluster = FakeCluster()
    cluster["fptrack"]["pages"].create_index([("url", 1)], unique=True, name="url_1")
    with pytest.raises(OperationFailure, match="can't shard collection 'fptrack.pages' with unique index"):
        sharding.shard_store(cluster, "fptrack", shards=SHARDS)


def test_shard_store_refuses_a_collection_sharded_on_another_key():
    cluster = FakeCluster()
    cluster["config"]["collections"].insert_one({"_id": "fptrack.pages", "key": {"site": 1}})
    with pytest.raises(StoreError, match=r"fptrack.pages is sharded on \{'site': 1\}, not on \{'key': 'hashed'\}"):
        sharding.shard_store(cluster, "fptrack", shards=SHARDS)


def test_shard_store_needs_a_shard():
    with pytest.raises(StoreError, match="has no shard: add one"):
        sharding.shard_store(FakeCluster(), "fptrack")


@pytest.mark.parametrize("hello, kind", [
    ({"setName": "rs0", "isWritablePrimary": True}, "a member of replica set 'rs0'"),
    ({"isWritablePrimary": True}, "a single server"),
])
def test_shard_store_on_a_server_that_is_not_a_mongos_says_so(hello, kind):
    cluster = FakeCluster(hello)
    with pytest.raises(NotMongos) as e:
        sharding.shard_store(cluster, "fptrack", shards=SHARDS, where="mongodb://db:27017")
    assert str(e.value).startswith(f"mongodb://db:27017 is not a mongos but {kind}: shard through the cluster's router")
    assert "\n" not in str(e.value)
    assert [c[0] for c in cluster.admin.calls] == ["hello"]  # nothing was changed


def test_the_command_prints_one_line_for_a_server_that_is_not_a_mongos(monkeypatch, capsys):
    monkeypatch.setattr(sharding, "MongoClient", lambda url, **kw: FakeCluster({"setName": "rs0"}))
    assert sharding.main(["shard", "mongodb://u:secret@db:27017", "--add-shard", SHARDS[0]]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: mongodb://u:***@db:27017 is not a mongos")
    assert "secret" not in err


def test_the_command_shards_and_reports(monkeypatch, capsys):
    cluster = FakeCluster()
    monkeypatch.setattr(sharding, "MongoClient", lambda url, **kw: cluster)
    assert sharding.main(["shard", "mongodb://mongos:27017", "--db", "other", *(a for s in SHARDS
                                                                                 for a in ("--add-shard", s))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "other.chapters: sharded on {'key': 'hashed'}" in out and len(out) == 2 + len(SHARD_KEYS)


def test_the_command_refuses_a_malformed_shard(capsys):
    with pytest.raises(SystemExit) as e:
        sharding.main(["shard", "mongodb://mongos:27017", "--add-shard", "mongo-shard-a:27018"])
    assert e.value.code == 2
    assert "is not NAME/HOST:PORT" in capsys.readouterr().err


class FakeMember:
    """A mongod started with --replSet (or without), reached directly."""

    def __init__(self, set_name: str | None, replication: bool = True):
        self.set_name, self.replication, self.calls = set_name, replication, []
        self.admin = self

    def command(self, command: str, value: Any = 1, **kwargs: Any) -> dict[str, Any]:
        name = command
        self.calls.append((name, value))
        if name == "replSetGetStatus":
            if not self.replication:
                raise OperationFailure("not running with --replSet", code=76)
            if self.set_name is None:
                raise OperationFailure("no replset config has been received", code=94)
            return {"set": self.set_name}
        if name == "replSetInitiate":
            self.set_name = value["_id"]
            return {}
        if name == "hello":
            return {"isWritablePrimary": self.set_name is not None}
        raise AssertionError(name)

    def close(self) -> None:
        pass


def test_initiate_replica_set_once_and_then_leaves_it():
    member = FakeMember(None)
    connected = []

    def connect(url, **kw):
        connected.append(url)
        return member

    done = sharding.initiate_replica_set("cfg/mongo-config:27019", configsvr=True, connect=connect)
    assert done == "replica set cfg: initiated with mongo-config:27019"
    assert connected == ["mongodb://mongo-config:27019/?directConnection=true"]
    initiate = [v for n, v in member.calls if n == "replSetInitiate"]
    assert initiate == [{"_id": "cfg", "members": [{"_id": 0, "host": "mongo-config:27019"}], "configsvr": True}]
    again = sharding.initiate_replica_set("cfg/mongo-config:27019", configsvr=True, connect=connect)
    assert again == "replica set cfg: already initiated"
    assert len([n for n, _ in member.calls if n == "replSetInitiate"]) == 1


def test_a_shard_replica_set_is_not_a_config_server():
    member = FakeMember(None)
    sharding.initiate_replica_set("shard-a/mongo-shard-a:27018", connect=lambda url, **kw: member)
    assert [v for n, v in member.calls if n == "replSetInitiate"][0] == {
        "_id": "shard-a", "members": [{"_id": 0, "host": "mongo-shard-a:27018"}]}


@pytest.mark.parametrize("member, message", [
    (FakeMember("other"), "belongs to replica set 'other', not 'shard-a'"),
    (FakeMember(None, replication=False), "was started without --replSet: start it with --replSet shard-a"),
])
def test_initiate_replica_set_names_a_misconfigured_member(member, message):
    with pytest.raises(StoreError, match=message):
        sharding.initiate_replica_set("shard-a/mongo-shard-a:27018", connect=lambda url, **kw: member)


def test_the_command_names_an_unreachable_server_in_one_line(capsys):
    assert sharding.main(["shard", "mongodb://127.0.0.1:1", "--timeout", "0.3"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "127.0.0.1:1" in err and "running and reachable" in err
    assert "Topology" not in err
