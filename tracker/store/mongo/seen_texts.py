"""MongoDB: texts judged before, by exact key, and the saved Bloom filter over their keys.

The filter can outgrow a document (16 MB: a filter for some 9 million keys), so it is saved
in parts of PART_BYTES, each carrying the id of its save; a reader that finds parts of two
saves (a save under way, or two at once) answers that no filter is saved, and the caller
builds one from the keys."""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from bson import Binary
from pymongo import ASCENDING

from ..records import NotFound
from ..seen_texts import SeenText, check_seen_text
from ..values import utc
from .connection import NO_ID, MongoBase, _guarded, aware, storable

PART_BYTES = 8 * 1024 * 1024
INDEXES = {
    "seen_texts": [([("key", ASCENDING)], True)],
    "seen_filter": [([("part", ASCENDING)], True)],
}


def _seen(d: dict[str, Any]) -> SeenText:
    return SeenText(key=d["key"], page=d["page"], content_hash=d["content_hash"], judged_under=d["judged_under"],
                    matches=aware(d.get("matches") or []), judged_at=aware(d["judged_at"]))


class SeenTextsMongo(MongoBase):
    """Seen texts in MongoDB."""

    @_guarded
    def put_seen_text(self, seen: SeenText) -> None:
        check_seen_text(seen)
        self._seen_texts.replace_one({"key": seen.key}, {
            "key": seen.key, "page": seen.page, "content_hash": seen.content_hash,
            "judged_under": seen.judged_under, "matches": storable(seen.matches), "judged_at": utc(seen.judged_at),
        }, upsert=True)

    @_guarded
    def get_seen_text(self, key: str) -> SeenText:
        d = self._seen_texts.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no seen text {key!r}")
        return _seen(d)

    def seen_text_keys(self) -> Iterator[str]:
        return self._iter(lambda: self._seen_texts.find({}, {"_id": False, "key": True}).sort("key", ASCENDING),
                          lambda d: d["key"])

    @_guarded
    def count_seen_texts(self) -> int:
        return self._seen_texts.count_documents({})

    @_guarded
    def put_seen_filter(self, data: bytes, keys: int) -> None:
        save = uuid.uuid4().hex
        parts = [bytes(data[i:i + PART_BYTES]) for i in range(0, len(data), PART_BYTES)] or [b""]
        for i, part in enumerate(parts):
            self._seen_filter.replace_one({"part": i}, {"part": i, "parts": len(parts), "save": save, "keys": int(keys),
                                                        "data": Binary(part)}, upsert=True)
        self._seen_filter.delete_many({"part": {"$gte": len(parts)}})

    @_guarded
    def seen_filter(self) -> tuple[bytes, int]:
        docs = list(self._seen_filter.find({}, NO_ID).sort("part", ASCENDING))
        whole = bool(docs) and len({(d["save"], d["parts"]) for d in docs}) == 1 and len(docs) == docs[0]["parts"]
        if not whole:
            raise NotFound("no saved filter of seen texts")
        return b"".join(bytes(d["data"]) for d in docs), int(docs[0]["keys"])
