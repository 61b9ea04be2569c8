"""Texts judged before (tracker.seen): each distinct page text, by its exact key
(fingerprint.textkeys), with the page it was judged on and the judgement, so that a copy of
it on another page (a mirror site) gets the same matches by lookup; and the Bloom filter
over those keys, saved so that a new process starts with it. Part of `tracker.store.base.Store`."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .records import now

#: What one match of a judgement holds (tracker.seen.gate writes and reads them).
MATCH_FIELDS = ("chapter", "similarity", "containment", "page_share", "verdict", "scores", "spans", "units")


@dataclass
class SeenText:
    key: str  # fingerprint.textkeys.exact_key of the page's text
    page: str  # Page.key of the page it was judged on
    content_hash: str  # of that page's text, as the store hashes it (records.content_hash)
    judged_under: str  # the engine's settings and the registered chapters it was judged against
    # The engine's matches (before any filter of the pipeline), each a dict of MATCH_FIELDS:
    # spans as on that page, units the same spans in canonical units of the text.
    matches: list[dict[str, Any]] = field(default_factory=list)
    judged_at: datetime = field(default_factory=now)


def check_seen_text(seen: SeenText) -> SeenText:
    """Raise ValueError for a record no backend should keep."""
    if not seen.key or not seen.page or not seen.judged_under:
        raise ValueError("a seen text needs its key, the page it was judged on and what it was judged under")
    for m in seen.matches:
        missing = [f for f in MATCH_FIELDS if f not in m]
        if missing:
            raise ValueError(f"a match of a seen text lacks {', '.join(missing)}")
    return seen


class SeenTextsStore(ABC):
    """Texts judged before, by exact key, and the saved Bloom filter over their keys."""

    @abstractmethod
    def put_seen_text(self, seen: SeenText) -> None:
        """Insert, or replace (a newer judgement of the same text), the record of `seen.key`."""

    @abstractmethod
    def get_seen_text(self, key: str) -> SeenText:
        """Raises NotFound."""

    @abstractmethod
    def seen_text_keys(self) -> Iterator[str]:
        """Every key stored, in key order: what a new Bloom filter is filled with."""

    @abstractmethod
    def count_seen_texts(self) -> int:
        """How many keys are stored."""

    @abstractmethod
    def put_seen_filter(self, data: bytes, keys: int) -> None:
        """Replace the saved Bloom filter (fingerprint.bloom.BloomFilter.to_bytes) and the number of
        stored keys it holds."""

    @abstractmethod
    def seen_filter(self) -> tuple[bytes, int]:
        """The saved Bloom filter and the number of keys it held when saved; raises NotFound when
        none was saved."""
