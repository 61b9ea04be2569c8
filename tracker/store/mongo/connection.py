"""The production store's connection: MongoDB, shared by every worker and the web app.

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
they equal what was stored. Each concern's module (originals, pages, matches,
sites, accounts) holds its collections' indexes and the methods on them;
`MongoBase` here holds what they share.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import wraps
from typing import Any, TypeVar

from bson.errors import BSONError
from pymongo import MongoClient, ReturnDocument
from pymongo.errors import DocumentTooLarge, DuplicateKeyError, PyMongoError

from ..records import BadRecord, StoreError, now
from ..values import to_text, utc

T = TypeVar("T")
RETRIES = 8  # conditional updates lost to concurrent writers before giving up
NO_ID = {"_id": False}


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]*):[^@/]*@", r"\1:***@", url)


def aware(value: Any) -> Any:
    """Datetimes (also inside dicts and lists) as aware UTC, whatever the client's tz_aware."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
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


def _query(filters: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Equality filters for the values that are not None (a list: any of)."""
    return {k: ({"$in": v} if isinstance(v, list) else v) for k, v in filters if v is not None}


def _guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn driver errors into StoreError with what to do about them."""
    @wraps(fn)
    def wrapper(self: MongoBase, *args: Any, **kwargs: Any) -> T:
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


def _short(e: BaseException) -> str:
    """The first line of a driver message (server selection errors append a long topology dump)."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


class MongoBase:
    """The client, the database and its collections. A concern lists its collections'
    indexes in INDEXES ({collection: [(keys, unique), ...]}); each collection is an
    attribute named after it with a leading underscore (`self._pages`)."""

    INDEXES: dict[str, list[tuple[list[tuple[str, int]], bool]]] = {}

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
        for name in self.INDEXES:
            setattr(self, f"_{name}", self._db[name])
        self._counters = self._db["counters"]

    def __repr__(self) -> str:
        return f"MongoStore({self.url!r}, {self._db.name!r})"

    # ---- plumbing ------------------------------------------------------------

    def _create_indexes(self) -> None:
        for collection, indexes in self.INDEXES.items():
            existing = None
            for keys, unique in indexes:
                name = "_".join(f"{field}_{order}" for field, order in keys)
                if not unique:
                    # An index an earlier version made unique (chapters' doc) is made again
                    # without it: creating it under the same name with other options fails.
                    existing = self._db[collection].index_information() if existing is None else existing
                    if existing.get(name, {}).get("unique"):
                        self._db[collection].drop_index(name)
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

    def _lost(self, what: str, key: str) -> StoreError:
        return StoreError(f"the {what} {key!r} kept changing under concurrent writers ({RETRIES} tries); "
                          "retry the operation")

    def _upsert(self, collection: Any, key: dict[str, Any], update: dict[str, Any], what: str, *,
                before: bool = False) -> dict[str, Any] | None:
        """One atomic upsert of the record under `key`; the record after it (or, `before`, as it was:
        None when it is new). Two writers inserting the same key at once: the loser updates instead."""
        for _ in range(RETRIES):
            try:
                return collection.find_one_and_update(
                    key, update, upsert=True, projection=NO_ID,
                    return_document=ReturnDocument.BEFORE if before else ReturnDocument.AFTER)
            except DuplicateKeyError:
                continue
        raise self._lost(what, " / ".join(str(v) for v in key.values()))

    def _upsert_changed(self, collection: Any, key: dict[str, Any], hash_field: str, new_hash: str,
                        full: dict[str, Any], light: dict[str, Any], what: str) -> bool:
        """Insert `full` under `key`, or update the record with `full` when its `hash_field` differs
        from `new_hash` and with `light` when it does not; returns whether it was new or changed.
        The update is conditional on the hash that was read, retried when another writer won."""
        for _ in range(RETRIES):
            old = collection.find_one(key, {"_id": False, hash_field: True})
            if old is None:
                try:
                    r = collection.update_one(key, {"$setOnInsert": full}, upsert=True)
                except DuplicateKeyError:
                    continue
                if r.upserted_id is None:  # inserted concurrently in between: compare with it
                    continue
                return True
            changed = old[hash_field] != new_hash
            r = collection.update_one({**key, hash_field: old[hash_field]}, {"$set": full if changed else light})
            if r.matched_count:
                return changed
        raise self._lost(what, " / ".join(str(v) for v in key.values()))

    def _set_status(self, collection: Any, key: dict[str, Any], status: str, by: str,
                    changed: Callable[[dict[str, Any], dict[str, Any]], None] | None = None) -> dict[str, Any] | None:
        """Set a review status and append {"status", "by", "at"} to the history, unless the record has
        that status already; the record as it is now (None when there is none). `changed(before,
        after)` is called when the status did change."""
        before = collection.find_one_and_update(
            {**key, "status": {"$ne": status}},
            {"$set": {"status": status}, "$push": {"history": {"status": status, "by": by, "at": to_text(now())}}},
            projection=NO_ID, return_document=ReturnDocument.BEFORE)
        after = collection.find_one(key, NO_ID)
        if before is not None and after is not None and changed is not None:
            changed(before, after)
        return after

    def close(self) -> None:
        if self._own_client:
            self._client.close()
