"""MongoDB: the evidence of pages. The records are the `evidence` collection (sharded on
the page, like the matches); the bytes are files in GridFS's layout, bucket "evidence"
(collections evidence.files and evidence.chunks, 255 kB chunks), one per record, its id
made of the hashes of the page key and of the bytes (never of the URL itself). Any GridFS
tool reads them (mongofiles --prefix evidence). The store writes that layout itself rather
than through gridfs.GridFSBucket so that every write goes through its own collections: each
chunk names its files_id, the chunks' shard key (sharding.py), and a test double of the
database (mongomock, whose GridFS does not work with PyMongo 4) holds them like MongoDB.

A file is written before its record and removed after it, so a record never names a file
that is not there; a crash in between leaves at worst a file with no record (its
metadata.page says whose)."""
from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from bson import Binary
from pymongo import ASCENDING

from ..evidence import SUFFIXES, Evidence, check_evidence
from ..records import NotFound, StoreError, now
from ..values import utc
from .connection import NO_ID, MongoBase, _guarded, aware

BUCKET = "evidence"
CHUNK = 255 * 1024  # GridFS's default chunk size
INDEXES = {
    "evidence": [
        ([("page", ASCENDING), ("sha256", ASCENDING)], True),
        ([("gone_since", ASCENDING)], False),
    ],
    # the indexes GridFS itself makes on a bucket, under the same names
    f"{BUCKET}.files": [([("filename", ASCENDING), ("uploadDate", ASCENDING)], False)],
    f"{BUCKET}.chunks": [([("files_id", ASCENDING), ("n", ASCENDING)], True)],
}


class GridFiles:
    """Files in GridFS's layout: a files document, then its chunks in order."""

    def __init__(self, db: Any, bucket: str = BUCKET):
        self.files, self.chunks = db[f"{bucket}.files"], db[f"{bucket}.chunks"]

    def put(self, file_id: str, name: str, data: bytes, metadata: dict[str, Any]) -> None:
        done = self.files.find_one({"_id": file_id}, {"_id": True, "length": True})
        if done is not None and done.get("length") == len(data):
            return  # the same id is the same bytes of the same page
        # Each chunk upserted by (files_id, n): writers racing on one file write the same bytes, and a
        # write cut short is completed by the next one. The files document last: then the file is there.
        for n, i in enumerate(range(0, len(data), CHUNK)):
            self.chunks.update_one({"files_id": file_id, "n": n},
                                   {"$set": {"data": Binary(data[i:i + CHUNK])}}, upsert=True)
        self.chunks.delete_many({"files_id": file_id, "n": {"$gte": -(-len(data) // CHUNK)}})
        self.files.replace_one({"_id": file_id}, {"_id": file_id, "length": len(data), "chunkSize": CHUNK,
                                                  "uploadDate": utc(now()), "filename": name,
                                                  "metadata": metadata}, upsert=True)

    def get(self, file_id: str) -> bytes | None:
        f = self.files.find_one({"_id": file_id}, {"_id": True, "length": True})
        if f is None:
            return None
        data = b"".join(bytes(c["data"]) for c in
                        self.chunks.find({"files_id": file_id}, {"_id": False, "data": True}).sort("n", ASCENDING))
        return data if len(data) == f["length"] else None

    def delete(self, file_id: str) -> None:
        self.files.delete_one({"_id": file_id})
        self.chunks.delete_many({"files_id": file_id})


def blob_id(page: str, sha256: str) -> str:
    return hashlib.sha256(page.encode("utf-8", "surrogatepass")).hexdigest()[:32] + "-" + sha256


def _evidence(d: dict[str, Any]) -> Evidence:
    return Evidence(page=d["page"], kind=d["kind"], data=b"", url=d.get("url", ""), fetched_at=aware(d["fetched_at"]),
                    truncated=bool(d.get("truncated")), sha256=d["sha256"], size=int(d["size"]),
                    created_at=aware(d["created_at"]),
                    gone_since=None if d.get("gone_since") is None else aware(d["gone_since"]))


class EvidenceMongo(MongoBase):
    """Evidence in MongoDB, its bytes in GridFS."""

    _evidence: Any
    _pages: Any

    @property
    def evidence_blobs(self) -> GridFiles:
        return GridFiles(self._db)

    @_guarded
    def put_evidence(self, evidence: Evidence) -> tuple[Evidence, bool]:
        check_evidence(evidence)
        data = bytes(evidence.data)
        h = hashlib.sha256(data).hexdigest()
        key = {"page": evidence.page, "sha256": h}
        self.evidence_blobs.put(blob_id(evidence.page, h), h + SUFFIXES[evidence.kind], data,
                                {"page": evidence.page, "kind": evidence.kind})
        doc = {"kind": evidence.kind, "url": evidence.url, "size": len(data),
               "fetched_at": utc(evidence.fetched_at), "truncated": bool(evidence.truncated),
               "created_at": utc(evidence.created_at), "gone_since": None}
        # The filter's fields (the shard key's among them) go in from the filter, not from $setOnInsert.
        r = self._evidence.update_one(key, {"$setOnInsert": doc}, upsert=True)
        stored = self._evidence.find_one(key, NO_ID)
        return _evidence(stored), r.upserted_id is not None

    @_guarded
    def evidence(self, page: str) -> list[Evidence]:
        docs = self._evidence.find({"page": page}, NO_ID).sort(
            [("fetched_at", ASCENDING), ("kind", ASCENDING), ("sha256", ASCENDING)])
        return [_evidence(d) for d in docs]

    @_guarded
    def evidence_data(self, page: str, sha256: str) -> bytes:
        if self._evidence.find_one({"page": page, "sha256": sha256}, NO_ID) is None:
            raise NotFound(f"no evidence {sha256!r} of the page {page!r}")
        data = self.evidence_blobs.get(blob_id(page, sha256))
        if data is None:
            raise StoreError(f"the evidence file of {sha256} is missing from GridFS (bucket {BUCKET!r}): it was "
                             "removed outside fptrack; the record stays, the bytes are lost")
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"the evidence file {blob_id(page, sha256)} in GridFS no longer has the SHA-256 "
                             f"recorded for it ({sha256}): it was changed outside fptrack")
        return data

    def _remove(self, docs: list[dict[str, Any]]) -> int:
        for d in docs:
            self._evidence.delete_one({"page": d["page"], "sha256": d["sha256"]})
            self.evidence_blobs.delete(blob_id(d["page"], d["sha256"]))
        return len(docs)

    @_guarded
    def delete_evidence(self, page: str) -> int:
        return self._remove(list(self._evidence.find({"page": page}, {"_id": False, "page": True, "sha256": True})))

    @_guarded
    def mark_evidence_gone(self, at: datetime) -> int:
        state: dict[str, bool] = {}  # page -> marked gone already (any of its records)
        for d in self._evidence.find({}, {"_id": False, "page": True, "gone_since": True}):
            state[d["page"]] = state.get(d["page"], False) or d.get("gone_since") is not None
        pages = sorted(state)
        stored: set[str] = set()
        for i in range(0, len(pages), 500):
            batch = pages[i:i + 500]
            stored |= {d["key"] for d in self._pages.find({"key": {"$in": batch}}, {"_id": False, "key": True})}
        gone = [p for p in pages if p not in stored]
        back = [p for p in pages if p in stored and state[p]]
        marked = [p for p in gone if not state[p]]
        for i in range(0, len(back), 500):
            self._evidence.update_many({"page": {"$in": back[i:i + 500]}}, {"$set": {"gone_since": None}})
        for i in range(0, len(marked), 500):
            self._evidence.update_many({"page": {"$in": marked[i:i + 500]}, "gone_since": None},
                                       {"$set": {"gone_since": utc(at)}})
        return len(marked)

    @_guarded
    def purge_evidence(self, gone_before: datetime) -> int:
        docs = list(self._evidence.find({"gone_since": {"$ne": None, "$lte": utc(gone_before)}},
                                        {"_id": False, "page": True, "sha256": True}))
        return self._remove(docs)
