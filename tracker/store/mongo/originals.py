"""MongoDB: works, their chapters, and the chapters' fingerprints."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bson import Binary
from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.errors import DuplicateKeyError

from ..records import Chapter, FingerprintRecord, NotFound, Work, content_hash
from ..values import to_text, utc
from .connection import NO_ID, RETRIES, _guarded, _query, aware, storable
from .totals import TotalsMongo

INDEXES = {
    "works": [([("id", ASCENDING)], True)],
    # doc is not unique: on a sharded cluster a unique index must start with the shard key
    # (key, see sharding.py). Docs are unique by construction: an atomic $inc counter.
    "chapters": [
        ([("key", ASCENDING)], True),
        ([("doc", ASCENDING)], False),
        ([("work", ASCENDING), ("number", ASCENDING), ("key", ASCENDING)], False),
        ([("updated_at", ASCENDING)], False),
    ],
    "fingerprints": [
        ([("chapter", ASCENDING), ("params_hash", ASCENDING)], True),
        ([("params_hash", ASCENDING), ("chapter", ASCENDING)], False),
    ],
}


def _work(d: dict[str, Any]) -> Work:
    return Work(id=d["id"], title=d["title"], author=d["author"], created_at=aware(d["created_at"]))


def _chapter(d: dict[str, Any]) -> Chapter:
    return Chapter(key=d["key"], work=d["work"], title=d["title"], text=d["text"], number=d.get("number"),
                   content_hash=d["content_hash"], doc=int(d["doc"]), updated_at=aware(d["updated_at"]))


def _fingerprint(d: dict[str, Any]) -> FingerprintRecord:
    return FingerprintRecord(chapter=d["chapter"], params_hash=d["params_hash"], params=aware(d["params"]),
                             data=bytes(d["data"]), created_at=aware(d["created_at"]))


class OriginalsMongo(TotalsMongo):
    """Works, chapters and fingerprints in MongoDB."""

    def _next_doc(self) -> int:
        r = self._counters.find_one_and_update({"_id": "chapter_doc"}, {"$inc": {"value": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        return int(r["value"])

    # ---- works -----------------------------------------------------------------

    @_guarded
    def upsert_work(self, work: Work) -> Work:
        return _work(self._upsert(self._works, {"id": work.id},
                                  {"$set": {"title": work.title, "author": work.author},
                                   "$setOnInsert": {"created_at": utc(work.created_at)}}, "work"))

    @_guarded
    def get_work(self, work_id: str) -> Work:
        d = self._works.find_one({"id": work_id}, NO_ID)
        if d is None:
            raise NotFound(f"no work {work_id!r}")
        return _work(d)

    @_guarded
    def works(self) -> list[Work]:
        return [_work(d) for d in self._works.find({}, NO_ID).sort("id", ASCENDING)]

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
    def catalog_stamp(self) -> tuple[int, str]:
        latest = self._chapters.find_one({}, {"_id": False, "updated_at": True}, sort=[("updated_at", DESCENDING)])
        return self._chapters.count_documents({}), "" if latest is None else to_text(aware(latest["updated_at"]))

    @_guarded
    def delete_chapter(self, key: str) -> None:
        self._chapters.delete_one({"key": key})
        self._fingerprints.delete_many({"chapter": key})

    @_guarded
    def delete_work(self, work_id: str) -> list[int]:
        if self._works.find_one({"id": work_id}, NO_ID) is None:
            raise NotFound(f"no work {work_id!r}")
        # Dependants first, the work last: a removal cut short is finished by calling it again.
        docs, keys = [], []
        for d in self._chapters.find({"work": work_id}, {"_id": False, "key": True, "doc": True}):
            docs.append(int(d["doc"]))
            keys.append(d["key"])
        for key in keys:
            self._fingerprints.delete_many({"chapter": key})
        self._matches.delete_many({"work": work_id})
        self._forget_work_totals(work_id)
        self._image_matches.delete_many({"work": work_id})
        self._work_images.delete_many({"work": work_id})
        self._chapters.delete_many({"work": work_id})
        self._works.delete_one({"id": work_id})
        return sorted(docs)

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
