"""The production store: MongoDB, shared by every worker and the web app.

Every write is a single atomic MongoDB operation keyed by a unique index, so
workers racing on the same page or match cannot create duplicates: upserts use
`update_one`/`find_one_and_update` with `upsert=True` and `$setOnInsert` for the
fields only the first write may set (first_seen, created_at, status, history, doc).
Chapter `doc` numbers come from an atomic `$inc` counter and are never reused.
Where the result depends on what was stored (a page or chapter whose text
changed), the update is conditional on the content_hash that was read, and
retried if another writer got there first.

MongoDB keeps datetimes in UTC to the millisecond and, unless the client was made
with tz_aware=True, returns them naive; records read back are made aware UTC so
they equal what was stored.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from functools import wraps
from typing import Any, TypeVar

from bson import Binary
from bson.errors import BSONError
from pymongo import ASCENDING, DESCENDING, MongoClient, ReturnDocument
from pymongo.errors import DocumentTooLarge, DuplicateKeyError, PyMongoError

from .base import (
    MATCH_GROUPS,
    MATCH_SORTS,
    MATCH_STATUSES,
    PAGE_GROUPS,
    PAGE_STATUSES,
    ROLES,
    BadRecord,
    Chapter,
    CrawlRun,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Site,
    Store,
    StoreError,
    User,
    UserSession,
    Work,
    content_hash,
    now,
)
from .values import (
    check_groups,
    check_role,
    check_status,
    check_window,
    clean_counts,
    clean_scores,
    clean_spans,
    parse_sort,
    statuses,
    to_text,
    utc,
)

T = TypeVar("T")
RETRIES = 8  # conditional updates lost to concurrent writers before giving up
NO_ID = {"_id": False}

INDEXES: dict[str, list[tuple[list[tuple[str, int]], bool]]] = {
    "works": [([("id", ASCENDING)], True)],
    "chapters": [
        ([("key", ASCENDING)], True),
        ([("doc", ASCENDING)], True),
        ([("work", ASCENDING), ("number", ASCENDING), ("key", ASCENDING)], False),
    ],
    "pages": [
        ([("key", ASCENDING)], True),
        ([("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("status", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("site", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("fetched_at", DESCENDING), ("key", ASCENDING)], False),
        ([("site", ASCENDING), ("status", ASCENDING), ("fetched_at", DESCENDING)], False),
    ],
    "fingerprints": [
        ([("chapter", ASCENDING), ("params_hash", ASCENDING)], True),
        ([("params_hash", ASCENDING), ("chapter", ASCENDING)], False),
    ],
    "matches": [
        ([("page", ASCENDING), ("chapter", ASCENDING)], True),
        ([("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("work", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("site", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("site", ASCENDING), ("status", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING),
          ("chapter", ASCENDING)], False),
        ([("status", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("chapter", ASCENDING)], False),
        ([("first_seen", ASCENDING)], False),
        ([("last_seen", ASCENDING)], False),
        ([("similarity", ASCENDING)], False),
        ([("page_share", ASCENDING)], False),
    ],
    "sites": [([("name", ASCENDING)], True)],
    "crawl_runs": [
        ([("id", ASCENDING)], True),
        ([("site", ASCENDING), ("started_at", DESCENDING)], False),
        ([("started_at", DESCENDING)], False),
    ],
    "users": [([("name", ASCENDING)], True)],
    "sessions": [
        ([("id", ASCENDING)], True),
        ([("user", ASCENDING), ("created_at", ASCENDING)], False),
        ([("last_seen", ASCENDING)], False),
        ([("created_at", ASCENDING)], False),
    ],
}


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]*):[^@/]*@", r"\1:***@", url)


def aware(value: Any) -> Any:
    """Datetimes (also inside dicts and lists) as aware UTC, whatever the client's tz_aware."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    if isinstance(value, dict):
        return {k: aware(v) for k, v in value.items()}
    if isinstance(value, list):
        return [aware(v) for v in value]
    return value


def storable(value: Any) -> Any:
    """Datetimes (also inside dicts and lists) cut to what MongoDB keeps, so reads equal writes."""
    if isinstance(value, datetime):
        return utc(value)
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):  # numpy scalars
        return value.item()
    return value


def _work(d: dict[str, Any]) -> Work:
    return Work(id=d["id"], title=d["title"], author=d["author"], created_at=aware(d["created_at"]))


def _chapter(d: dict[str, Any]) -> Chapter:
    return Chapter(key=d["key"], work=d["work"], title=d["title"], text=d["text"], number=d.get("number"),
                   content_hash=d["content_hash"], doc=int(d["doc"]), updated_at=aware(d["updated_at"]))


def _page(d: dict[str, Any]) -> Page:
    return Page(key=d["key"], text=d["text"], url=d["url"], site=d["site"], fetched_at=aware(d["fetched_at"]),
                content_hash=d["content_hash"], status=d["status"], reason=d["reason"], attempts=int(d["attempts"]),
                updated_at=aware(d["updated_at"]), meta=aware(d.get("meta") or {}), etag=d.get("etag") or "",
                last_modified=d.get("last_modified") or "")  # pages stored before validators were kept have none


def _fingerprint(d: dict[str, Any]) -> FingerprintRecord:
    return FingerprintRecord(chapter=d["chapter"], params_hash=d["params_hash"], params=aware(d["params"]),
                             data=bytes(d["data"]), created_at=aware(d["created_at"]))


def _match(d: dict[str, Any]) -> MatchRecord:
    return MatchRecord(page=d["page"], chapter=d["chapter"], work=d["work"], site=d["site"],
                       similarity=d["similarity"], containment=d["containment"], page_share=d["page_share"],
                       verdict=d["verdict"], scores=d.get("scores") or {}, spans=d.get("spans") or [],
                       status=d["status"], first_seen=aware(d["first_seen"]), last_seen=aware(d["last_seen"]),
                       history=aware(d.get("history") or []))


def _site(d: dict[str, Any]) -> Site:
    return Site(name=d["name"], start_urls=list(d["start_urls"]), rules=aware(d.get("rules") or {}),
                recrawl=bool(d["recrawl"]), created_at=aware(d["created_at"]), updated_at=aware(d["updated_at"]))


def _crawl_run(d: dict[str, Any]) -> CrawlRun:
    return CrawlRun(site=d["site"], job=d["job"], started_at=aware(d["started_at"]),
                    finished_at=aware(d["finished_at"]), outcome=d["outcome"], counts=_unkeyed(d.get("counts")),
                    skipped=_unkeyed(d.get("skipped")), failed=_unkeyed(d.get("failed")), id=int(d["id"]))


def _user(d: dict[str, Any]) -> User:
    return User(name=d["name"], password_hash=d["password_hash"], role=d["role"],
                failed_logins=int(d["failed_logins"]), locked_until=aware(d.get("locked_until")),
                created_at=aware(d["created_at"]))


def _session(d: dict[str, Any]) -> UserSession:
    return UserSession(id=d["id"], user=d["user"], created_at=aware(d["created_at"]),
                       last_seen=aware(d["last_seen"]), stamp=d.get("stamp", ""))


def _query(filters: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Equality filters for the values that are not None (a list: any of)."""
    return {k: ({"$in": v} if isinstance(v, list) else v) for k, v in filters if v is not None}


def _keyed(counts: dict[str, int]) -> list[dict[str, Any]]:
    # Reasons are free text (dots, "$"): kept as a list of pairs, since MongoDB field names cannot hold them.
    return [{"k": k, "n": n} for k, n in clean_counts(counts).items()]


def _unkeyed(pairs: list[dict[str, Any]] | None) -> dict[str, int]:
    return {p["k"]: int(p["n"]) for p in pairs or []}


def _guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn driver errors into StoreError with what to do about them."""
    @wraps(fn)
    def wrapper(self: MongoStore, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except PyMongoError as e:
            raise self._error(e) from e
        except BSONError as e:
            raise BadRecord(f"MongoDB cannot store this record: {_short(e)}; dict keys (in meta, params, "
                            "scores) must be text without NUL characters") from e
        except UnicodeEncodeError as e:  # BSON strings are UTF-8: a lone surrogate fails
            raise BadRecord(f"MongoDB cannot store this record: its text holds {e.object[e.start:e.end]!a}, "
                            "which is not a character (replace it with U+FFFD)") from e
    return wrapper


class MongoStore(Store):
    """The store in a MongoDB database. `client` takes an existing client (tests pass
    mongomock.MongoClient()); otherwise one is made for `url`, failing within
    `timeout_ms` when no server answers."""

    def __init__(self, url: str = "mongodb://localhost:27017", db: str = "fptrack", *, client: Any = None,
                 timeout_ms: int = 3000):
        self.url = redact(url)
        self._own_client = client is None
        try:
            if client is None:
                client = MongoClient(url, serverSelectionTimeoutMS=timeout_ms, tz_aware=True)
            self._client = client
            self._db = client[db]
            self._create_indexes()
        except (PyMongoError, ValueError, TypeError) as e:
            if self._own_client and client is not None:
                client.close()
            raise StoreError(f"cannot reach MongoDB at {self.url}: {_short(e)}; start it (docker compose up mongo) "
                             "or unset FPT_MONGO_URL to use the embedded store") from e
        self._works = self._db["works"]
        self._chapters = self._db["chapters"]
        self._pages = self._db["pages"]
        self._fingerprints = self._db["fingerprints"]
        self._matches = self._db["matches"]
        self._counters = self._db["counters"]
        self._sites = self._db["sites"]
        self._crawl_runs = self._db["crawl_runs"]
        self._users = self._db["users"]
        self._sessions = self._db["sessions"]

    def __repr__(self) -> str:
        return f"MongoStore({self.url!r}, {self._db.name!r})"

    # ---- plumbing ------------------------------------------------------------

    def _create_indexes(self) -> None:
        for collection, indexes in INDEXES.items():
            for keys, unique in indexes:
                name = "_".join(f"{field}_{order}" for field, order in keys)
                self._db[collection].create_index(keys, unique=unique, name=name)

    def _error(self, e: PyMongoError) -> StoreError:
        if isinstance(e, DocumentTooLarge):
            return StoreError(f"a record is too large for MongoDB at {self.url} (16 MB per document): {_short(e)}; "
                              "store a shorter text (split the page or chapter)")
        return StoreError(f"MongoDB at {self.url} failed: {_short(e)}; check that the server is running and "
                          "reachable (docker compose up mongo), or unset FPT_MONGO_URL to use the embedded store")

    def _iter(self, cursor_factory: Callable[[], Any], convert: Callable[[dict[str, Any]], T]) -> Iterator[T]:
        try:
            for d in cursor_factory():
                yield convert(d)
        except PyMongoError as e:
            raise self._error(e) from e

    def _next_doc(self) -> int:
        r = self._counters.find_one_and_update({"_id": "chapter_doc"}, {"$inc": {"value": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        return int(r["value"])

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    # ---- works -----------------------------------------------------------------

    @_guarded
    def upsert_work(self, work: Work) -> Work:
        for _ in range(RETRIES):
            try:
                d = self._works.find_one_and_update(
                    {"id": work.id},
                    {"$set": {"title": work.title, "author": work.author},
                     "$setOnInsert": {"created_at": utc(work.created_at)}},
                    upsert=True, projection=NO_ID, return_document=ReturnDocument.AFTER)
                return _work(d)
            except DuplicateKeyError:  # a concurrent insert of the same id won: update it instead
                continue
        raise self._lost("work", work.id)

    @_guarded
    def get_work(self, work_id: str) -> Work:
        d = self._works.find_one({"id": work_id}, NO_ID)
        if d is None:
            raise NotFound(f"no work {work_id!r}")
        return _work(d)

    @_guarded
    def works(self) -> list[Work]:
        return [_work(d) for d in self._works.find({}, NO_ID).sort("id", ASCENDING)]

    def _lost(self, what: str, key: str) -> StoreError:
        return StoreError(f"the {what} {key!r} kept changing under concurrent writers ({RETRIES} tries); "
                          "retry the operation")

    # ---- chapters ----------------------------------------------------------------

    @_guarded
    def upsert_chapter(self, chapter: Chapter) -> tuple[Chapter, bool]:
        """`updated_at` (the given one) is stored when the text, title, number or work changed."""
        h = content_hash(chapter.text)
        number = None if chapter.number is None else int(chapter.number)
        fields = {"work": chapter.work, "title": chapter.title, "text": chapter.text, "number": number,
                  "content_hash": h}
        when = utc(chapter.updated_at)
        for _ in range(RETRIES):
            old = self._chapters.find_one({"key": chapter.key},
                                          {"_id": False, "work": True, "title": True, "number": True,
                                           "content_hash": True})
            if old is None:
                doc = self._next_doc()  # a number lost to a concurrent insert is simply never used
                try:
                    r = self._chapters.update_one(
                        {"key": chapter.key},
                        {"$set": fields, "$setOnInsert": {"doc": doc, "updated_at": when}}, upsert=True)
                except DuplicateKeyError:
                    continue
                if r.upserted_id is None:  # inserted concurrently in between: treat as an update
                    continue
                changed = True
                break
            changed = old["content_hash"] != h
            touched = changed or (old.get("work"), old.get("title"), old.get("number")) != (
                chapter.work, chapter.title, number)
            if not touched:
                changed = False
                break
            r = self._chapters.update_one({"key": chapter.key, "content_hash": old["content_hash"]},
                                          {"$set": {**fields, "updated_at": when}})
            if r.matched_count:
                break
        else:
            raise self._lost("chapter", chapter.key)
        d = self._chapters.find_one({"key": chapter.key}, NO_ID)
        if d is None:
            raise self._lost("chapter", chapter.key)
        return _chapter(d), changed

    @_guarded
    def get_chapter(self, key: str) -> Chapter:
        d = self._chapters.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no chapter {key!r}")
        return _chapter(d)

    @_guarded
    def chapter_by_doc(self, doc: int) -> Chapter:
        d = self._chapters.find_one({"doc": int(doc)}, NO_ID)
        if d is None:
            raise NotFound(f"no chapter with doc {doc}")
        return _chapter(d)

    def chapters(self, work: str | None = None) -> Iterator[Chapter]:
        query = {} if work is None else {"work": work}
        return self._iter(lambda: self._chapters.find(query, NO_ID).sort(
            [("work", ASCENDING), ("number", ASCENDING), ("key", ASCENDING)]), _chapter)

    @_guarded
    def chapter_headers(self, work: str | None = None) -> list[Chapter]:
        cursor = self._chapters.find(_query((("work", work),)), {"_id": False, "text": False}).sort(
            [("work", ASCENDING), ("number", ASCENDING), ("key", ASCENDING)])
        return [_chapter({**d, "text": ""}) for d in cursor]

    @_guarded
    def count_chapters(self, work: str | None = None) -> int:
        return self._chapters.count_documents(_query((("work", work),)))

    @_guarded
    def delete_chapter(self, key: str) -> None:
        self._chapters.delete_one({"key": key})
        self._fingerprints.delete_many({"chapter": key})

    # ---- pages -------------------------------------------------------------------

    @_guarded
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """New or changed text: stored with status "queued", no reason, 0 attempts and the given
        `updated_at`. Same text: url, site, fetched_at and meta are updated; status, reason,
        attempts and updated_at are kept."""
        h = content_hash(page.text)
        light = {"url": page.url, "site": page.site, "fetched_at": utc(page.fetched_at), "meta": storable(page.meta),
                 "etag": page.etag, "last_modified": page.last_modified}
        full = {**light, "text": page.text, "content_hash": h, "status": "queued", "reason": "", "attempts": 0,
                "updated_at": utc(page.updated_at)}
        for _ in range(RETRIES):
            old = self._pages.find_one({"key": page.key}, {"_id": False, "content_hash": True})
            if old is None:
                try:
                    r = self._pages.update_one({"key": page.key}, {"$setOnInsert": full}, upsert=True)
                except DuplicateKeyError:
                    continue
                if r.upserted_id is None:  # inserted concurrently in between: compare with it
                    continue
                changed = True
                break
            changed = old["content_hash"] != h
            r = self._pages.update_one({"key": page.key, "content_hash": old["content_hash"]},
                                       {"$set": full if changed else light})
            if r.matched_count:
                break
        else:
            raise self._lost("page", page.key)
        d = self._pages.find_one({"key": page.key}, NO_ID)
        if d is None:
            raise self._lost("page", page.key)
        return _page(d), changed

    @_guarded
    def get_page(self, key: str) -> Page:
        d = self._pages.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no page {key!r}")
        return _page(d)

    @_guarded
    def page_validators(self, key: str, made_by: str | None = None) -> tuple[str, str]:
        d = self._pages.find_one({"key": key}, {"_id": False, "etag": True, "last_modified": True,
                                                "meta.made_by": True})
        if not d or (made_by is not None and (d.get("meta") or {}).get("made_by") != made_by):
            return "", ""
        return d.get("etag") or "", d.get("last_modified") or ""

    def pages(self, *, status: str | None = None, site: str | None = None,
              limit: int | None = None) -> Iterator[Page]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        check_window(limit)
        if limit == 0:
            return iter(())
        query = {k: v for k, v in (("status", status), ("site", site)) if v is not None}

        def cursor() -> Any:
            c = self._pages.find(query, NO_ID).sort([("updated_at", ASCENDING), ("key", ASCENDING)])
            return c if limit is None else c.limit(limit)
        return self._iter(cursor, _page)

    @_guarded
    def delete_page(self, key: str) -> bool:
        if self._matches.find_one({"page": key, "status": {"$ne": "new"}}, {"_id": 1}) is not None:
            return False
        self._matches.delete_many({"page": key})
        return self._pages.delete_one({"key": key}).deleted_count > 0

    @_guarded
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        check_status(status, PAGE_STATUSES, "page status")
        r = self._pages.update_one({"key": key}, {"$set": {"status": status, "reason": reason, "updated_at": now()},
                                                  "$inc": {"attempts": 1}})
        if r.matched_count == 0:
            raise NotFound(f"no page {key!r}")

    @staticmethod
    def _page_query(status: str | None, site: str | None, url_contains: str | None) -> dict[str, Any]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        query = _query((("status", status), ("site", site)))
        if url_contains:
            query["url"] = {"$regex": re.escape(url_contains)}
        return query

    @_guarded
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0) -> list[Page]:
        check_window(limit, offset)
        query = self._page_query(status, site, url_contains)
        if limit == 0:
            return []
        cursor = self._pages.find(query, NO_ID).sort([("fetched_at", DESCENDING), ("key", ASCENDING)]).skip(offset)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_page(d) for d in cursor]

    @_guarded
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None) -> int:
        return self._pages.count_documents(self._page_query(status, site, url_contains))

    @_guarded
    def page_summary(self, by: Sequence[str]) -> list[dict[str, Any]]:
        by = check_groups(by, PAGE_GROUPS)
        rows = self._pages.aggregate([{"$group": {"_id": {f: f"${f}" for f in by}, "pages": {"$sum": 1},
                                                  "last": {"$max": "$fetched_at"}}}])
        out = [{**{f: r["_id"][f] for f in by}, "pages": int(r["pages"]), "last_fetched": aware(r["last"])}
               for r in rows]
        out.sort(key=lambda r: (-r["pages"], *(r[f] for f in by)))
        return out

    # ---- fingerprints --------------------------------------------------------------

    @_guarded
    def put_fingerprint(self, record: FingerprintRecord) -> None:
        doc = {"chapter": record.chapter, "params_hash": record.params_hash, "params": storable(record.params),
               "data": Binary(bytes(record.data)), "created_at": utc(record.created_at)}
        for _ in range(RETRIES):
            try:
                self._fingerprints.replace_one({"chapter": record.chapter, "params_hash": record.params_hash},
                                               doc, upsert=True)
                return
            except DuplicateKeyError:
                continue
        raise self._lost("fingerprint", record.chapter)

    def fingerprints(self, params_hash: str) -> Iterator[FingerprintRecord]:
        """By chapter key."""
        return self._iter(lambda: self._fingerprints.find({"params_hash": params_hash}, NO_ID).sort(
            "chapter", ASCENDING), _fingerprint)

    # ---- matches -------------------------------------------------------------------

    @_guarded
    def upsert_match(self, match: MatchRecord) -> MatchRecord:
        """`last_seen` only moves forward (a late, older observation does not take it back)."""
        check_status(match.status, MATCH_STATUSES, "match status")
        key = {"page": match.page, "chapter": match.chapter}
        update = {
            "$set": {"work": match.work, "site": match.site, "similarity": float(match.similarity),
                     "containment": float(match.containment), "page_share": float(match.page_share),
                     "verdict": match.verdict, "scores": clean_scores(match.scores),
                     "spans": clean_spans(match.spans)},
            "$max": {"last_seen": utc(match.last_seen)},
            "$setOnInsert": {"first_seen": utc(match.first_seen), "status": match.status,
                             "history": storable(match.history)},
        }
        for _ in range(RETRIES):
            try:
                d = self._matches.find_one_and_update(key, update, upsert=True, projection=NO_ID,
                                                      return_document=ReturnDocument.AFTER)
                return _match(d)
            except DuplicateKeyError:  # a concurrent insert of the same match won: update it instead
                continue
        raise self._lost("match", f"{match.page} / {match.chapter}")

    @_guarded
    def get_match(self, page: str, chapter: str) -> MatchRecord:
        d = self._matches.find_one({"page": page, "chapter": chapter}, NO_ID)
        if d is None:
            raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
        return _match(d)

    @staticmethod
    def _match_query(work: str | None, page: str | None, site: str | None, status: Any,
                     chapter: str | None) -> dict[str, Any]:
        status = statuses(status, MATCH_STATUSES)
        return _query((("work", work), ("page", page), ("site", site), ("status", status), ("chapter", chapter)))

    @_guarded
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | None = None, chapter: str | None = None, limit: int | None = None, offset: int = 0,
                sort: str = "-containment") -> list[MatchRecord]:
        query = self._match_query(work, page, site, status, chapter)
        check_window(limit, offset)
        field_name, descending = parse_sort(sort, MATCH_SORTS)
        if limit == 0:  # MongoDB reads limit 0 as "no limit"
            return []
        order = [(field_name, DESCENDING if descending else ASCENDING), ("page", ASCENDING), ("chapter", ASCENDING)]
        cursor = self._matches.find(query, NO_ID).sort(order).skip(offset)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_match(d) for d in cursor]

    @_guarded
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | None = None, chapter: str | None = None) -> int:
        return self._matches.count_documents(self._match_query(work, page, site, status, chapter))

    @_guarded
    def match_summary(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                      status: str | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, MATCH_GROUPS)
        query = self._match_query(work, None, site, status, None)
        group_id = {f: ({"$dateToString": {"format": "%Y-%m-%d", "date": "$first_seen"}} if f == "day" else f"${f}")
                    for f in by}
        rows = self._matches.aggregate([
            {"$match": query},
            {"$group": {"_id": group_id, "matches": {"$sum": 1}, "pages": {"$addToSet": "$page"},
                        "chapters": {"$addToSet": "$chapter"}, "first_seen": {"$min": "$first_seen"},
                        "last_seen": {"$max": "$last_seen"}}},
        ])
        out = [{**{f: r["_id"][f] for f in by}, "matches": int(r["matches"]), "pages": len(r["pages"]),
                "chapters": len(r["chapters"]), "first_seen": aware(r["first_seen"]),
                "last_seen": aware(r["last_seen"])} for r in rows]
        out.sort(key=lambda r: (-r["matches"], *(r[f] for f in by)))
        return out

    @_guarded
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Setting the status it already has changes nothing (no second history entry).
        The entry's "at" is ISO-8601 text in UTC, so history stays plain JSON for every reader."""
        check_status(status, MATCH_STATUSES, "match status")
        d = self._matches.find_one_and_update(
            {"page": page, "chapter": chapter, "status": {"$ne": status}},
            {"$set": {"status": status}, "$push": {"history": {"status": status, "by": by, "at": to_text(now())}}},
            projection=NO_ID, return_document=ReturnDocument.AFTER)
        return _match(d) if d is not None else self.get_match(page, chapter)

    # ---- sites and crawls -----------------------------------------------------------

    @_guarded
    def upsert_site(self, site: Site) -> Site:
        for _ in range(RETRIES):
            try:
                d = self._sites.find_one_and_update(
                    {"name": site.name},
                    {"$set": {"start_urls": list(site.start_urls), "rules": storable(site.rules),
                              "recrawl": bool(site.recrawl), "updated_at": utc(site.updated_at)},
                     "$setOnInsert": {"created_at": utc(site.created_at)}},
                    upsert=True, projection=NO_ID, return_document=ReturnDocument.AFTER)
                return _site(d)
            except DuplicateKeyError:
                continue
        raise self._lost("site", site.name)

    @_guarded
    def get_site(self, name: str) -> Site:
        d = self._sites.find_one({"name": name}, NO_ID)
        if d is None:
            raise NotFound(f"no site {name!r}")
        return _site(d)

    @_guarded
    def sites(self) -> list[Site]:
        return [_site(d) for d in self._sites.find({}, NO_ID).sort("name", ASCENDING)]

    @_guarded
    def delete_site(self, name: str) -> None:
        if self._sites.delete_one({"name": name}).deleted_count == 0:
            raise NotFound(f"no site {name!r}")

    @_guarded
    def add_crawl_run(self, run: CrawlRun) -> CrawlRun:
        r = self._counters.find_one_and_update({"_id": "crawl_run"}, {"$inc": {"value": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        doc = {"id": int(r["value"]), "site": run.site, "job": run.job, "started_at": utc(run.started_at),
               "finished_at": utc(run.finished_at), "outcome": run.outcome, "counts": _keyed(run.counts),
               "skipped": _keyed(run.skipped), "failed": _keyed(run.failed)}
        self._crawl_runs.insert_one(dict(doc))
        return _crawl_run(doc)

    @_guarded
    def crawl_runs(self, *, site: str | None = None, limit: int | None = 50) -> list[CrawlRun]:
        check_window(limit)
        if limit == 0:
            return []
        cursor = self._crawl_runs.find(_query((("site", site),)), NO_ID).sort(
            [("started_at", DESCENDING), ("id", DESCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_crawl_run(d) for d in cursor]

    # ---- users -----------------------------------------------------------------------

    @_guarded
    def upsert_user(self, user: User) -> User:
        check_role(user.role, ROLES)
        for _ in range(RETRIES):
            try:
                d = self._users.find_one_and_update(
                    {"name": user.name},
                    {"$set": {"password_hash": user.password_hash, "role": user.role,
                              "failed_logins": int(user.failed_logins),
                              "locked_until": utc(user.locked_until) if user.locked_until else None},
                     "$setOnInsert": {"created_at": utc(user.created_at)}},
                    upsert=True, projection=NO_ID, return_document=ReturnDocument.AFTER)
                return _user(d)
            except DuplicateKeyError:
                continue
        raise self._lost("user", user.name)

    @_guarded
    def get_user(self, name: str) -> User:
        d = self._users.find_one({"name": name}, NO_ID)
        if d is None:
            raise NotFound(f"no user {name!r}")
        return _user(d)

    @_guarded
    def users(self) -> list[User]:
        return [_user(d) for d in self._users.find({}, NO_ID).sort("name", ASCENDING)]

    @_guarded
    def delete_user(self, name: str) -> None:
        if self._users.delete_one({"name": name}).deleted_count == 0:
            raise NotFound(f"no user {name!r}")

    @_guarded
    def record_login(self, name: str, ok: bool, *, max_failures: int, lock_for: timedelta,
                     at: datetime | None = None) -> User:
        at = at or now()
        if ok:
            d = self._users.find_one_and_update({"name": name}, {"$set": {"failed_logins": 0, "locked_until": None}},
                                                projection=NO_ID, return_document=ReturnDocument.AFTER)
        else:  # the increment is atomic, so every max_failures-th failure is seen by exactly one caller
            d = self._users.find_one_and_update({"name": name}, {"$inc": {"failed_logins": 1}}, projection=NO_ID,
                                                return_document=ReturnDocument.AFTER)
            if d is not None and int(d["failed_logins"]) % max_failures == 0:
                d = self._users.find_one_and_update({"name": name}, {"$set": {"locked_until": utc(at + lock_for)}},
                                                    projection=NO_ID, return_document=ReturnDocument.AFTER)
        if d is None:
            raise NotFound(f"no user {name!r}")
        return _user(d)

    # ---- sessions --------------------------------------------------------------------

    @_guarded
    def add_session(self, session: UserSession) -> UserSession:
        doc = {"id": session.id, "user": session.user, "created_at": utc(session.created_at),
               "last_seen": utc(session.last_seen), "stamp": session.stamp}
        self._sessions.replace_one({"id": session.id}, doc, upsert=True)
        return _session(doc)

    @_guarded
    def get_session(self, session_id: str) -> UserSession:
        d = self._sessions.find_one({"id": session_id}, NO_ID)
        if d is None:
            raise NotFound("no such session")
        return _session(d)

    @_guarded
    def sessions(self, user: str | None = None) -> list[UserSession]:
        cursor = self._sessions.find(_query((("user", user),)), NO_ID).sort([("created_at", ASCENDING),
                                                                              ("id", ASCENDING)])
        return [_session(d) for d in cursor]

    @_guarded
    def touch_session(self, session_id: str, at: datetime) -> None:
        self._sessions.update_one({"id": session_id}, {"$set": {"last_seen": utc(at)}})  # no upsert

    @_guarded
    def delete_session(self, session_id: str) -> None:
        self._sessions.delete_one({"id": session_id})

    @_guarded
    def delete_sessions(self, user: str) -> int:
        return self._sessions.delete_many({"user": user}).deleted_count

    @_guarded
    def purge_sessions(self, *, seen_before: datetime, created_before: datetime) -> int:
        return self._sessions.delete_many({"$or": [{"last_seen": {"$lt": utc(seen_before)}},
                                                   {"created_at": {"$lt": utc(created_before)}}]}).deleted_count

    # ---- reports -------------------------------------------------------------------

    def _by_status(self, collection: Any, statuses: tuple[str, ...]) -> dict[str, int]:
        found = {r["_id"]: int(r["n"]) for r in collection.aggregate([{"$group": {"_id": "$status",
                                                                                  "n": {"$sum": 1}}}])}
        return {s: found.get(s, 0) for s in statuses}

    @_guarded
    def counts(self) -> dict[str, Any]:
        return {"works": self._works.count_documents({}), "chapters": self._chapters.count_documents({}),
                "pages": self._by_status(self._pages, PAGE_STATUSES),
                "matches": self._by_status(self._matches, MATCH_STATUSES)}

    @_guarded
    def failures(self, limit: int = 50) -> list[Page]:
        check_window(limit)
        if limit == 0:
            return []
        cursor = self._pages.find({"status": "failed"}, NO_ID).sort(
            [("updated_at", DESCENDING), ("key", ASCENDING)]).limit(limit)
        return [_page(d) for d in cursor]


def _short(e: BaseException) -> str:
    """The first line of a driver message (server selection errors append a long topology dump)."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."
