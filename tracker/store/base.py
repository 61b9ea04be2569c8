"""The store interface: works, chapters, pages, fingerprints and matches.

Two backends implement it: SQLite (the embedded default, no server) and
MongoDB (production). One contract test suite runs against both. Unique keys
make every write idempotent: storing the same page, chapter or match twice
updates the record and never duplicates it.
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

PAGE_STATUSES = ("queued", "done", "failed")
MATCH_STATUSES = ("new", "confirmed", "dismissed", "takedown-sent", "removed")


def now() -> datetime:
    """The current time in UTC, to the millisecond (what both backends can store)."""
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def content_hash(text: str) -> str:
    """A hash of the exact text (SHA-256, hex), to tell whether a chapter or page changed."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StoreError(Exception):
    """The store cannot be reached or refused a write; the message says what to check."""


class NotFound(KeyError):
    """No record with that key."""


@dataclass
class Work:
    id: str  # slug, unique
    title: str
    author: str = ""
    created_at: datetime = field(default_factory=now)


@dataclass
class Chapter:
    key: str  # unique across works, e.g. "山城旧事/第一章"
    work: str  # Work.id
    title: str
    text: str
    number: int | None = None  # order in the work
    content_hash: str = ""
    doc: int = -1  # numeric id for the indexes, assigned by the store on first insert, never reused
    updated_at: datetime = field(default_factory=now)


@dataclass
class Page:
    key: str  # unique: the URL, or a file name for ingested files
    text: str
    url: str = ""
    site: str = ""
    fetched_at: datetime = field(default_factory=now)
    content_hash: str = ""
    status: str = "queued"  # queued | done | failed
    reason: str = ""  # why it failed
    attempts: int = 0
    updated_at: datetime = field(default_factory=now)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class FingerprintRecord:
    chapter: str  # Chapter.key
    params_hash: str  # hash of the engine + index parameters that made it
    params: dict[str, Any]
    data: bytes  # serialised IndexKeys (see tracker.fingerprints)
    created_at: datetime = field(default_factory=now)


@dataclass
class MatchRecord:
    page: str  # Page.key
    chapter: str  # Chapter.key
    work: str
    site: str
    similarity: float
    containment: float
    page_share: float
    verdict: str
    scores: dict[str, float] = field(default_factory=dict)
    spans: list[dict[str, int]] = field(default_factory=list)  # page_start, page_end, original_start, original_end
    status: str = "new"
    first_seen: datetime = field(default_factory=now)
    last_seen: datetime = field(default_factory=now)
    history: list[dict[str, Any]] = field(default_factory=list)  # {"status", "by", "at"} per change


class Store(ABC):
    """Every method is safe to call twice with the same arguments."""

    # works
    @abstractmethod
    def upsert_work(self, work: Work) -> Work:
        """Insert or update (title, author) a work; keeps created_at."""

    @abstractmethod
    def get_work(self, work_id: str) -> Work:
        """Raises NotFound."""

    @abstractmethod
    def works(self) -> list[Work]:
        """All works, by id."""

    # chapters
    @abstractmethod
    def upsert_chapter(self, chapter: Chapter) -> tuple[Chapter, bool]:
        """Insert or update a chapter; returns it (with its `doc` number and
        content_hash set) and whether its text is new or changed."""

    @abstractmethod
    def get_chapter(self, key: str) -> Chapter:
        """Raises NotFound."""

    @abstractmethod
    def chapter_by_doc(self, doc: int) -> Chapter:
        """Raises NotFound."""

    @abstractmethod
    def chapters(self, work: str | None = None) -> Iterator[Chapter]:
        """Chapters (of one work), by work then number then key."""

    @abstractmethod
    def delete_chapter(self, key: str) -> None:
        """Remove a chapter and its fingerprints (its matches stay, for the record)."""

    # pages
    @abstractmethod
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """Insert or update a page; returns it and whether its text is new or changed.
        A changed page goes back to status "queued"; an unchanged one keeps its status."""

    @abstractmethod
    def get_page(self, key: str) -> Page:
        """Raises NotFound."""

    @abstractmethod
    def pages(self, *, status: str | None = None, site: str | None = None, limit: int | None = None) -> Iterator[Page]:
        """Pages, oldest update first."""

    @abstractmethod
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        """Record the outcome of processing (counts an attempt). Raises NotFound, ValueError for a bad status."""

    # fingerprints
    @abstractmethod
    def put_fingerprint(self, record: FingerprintRecord) -> None:
        """Insert or replace the fingerprint of (chapter, params_hash)."""

    @abstractmethod
    def fingerprints(self, params_hash: str) -> Iterator[FingerprintRecord]:
        """All fingerprints made with these parameters."""

    # matches
    @abstractmethod
    def upsert_match(self, match: MatchRecord) -> MatchRecord:
        """Insert, or update the scores, spans and last_seen of, the match (page, chapter);
        keeps first_seen, status and history."""

    @abstractmethod
    def get_match(self, page: str, chapter: str) -> MatchRecord:
        """Raises NotFound."""

    @abstractmethod
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | None = None, limit: int | None = None, offset: int = 0) -> list[MatchRecord]:
        """Matches, most contained first, then by page and chapter."""

    @abstractmethod
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Change a match's status and append {"status", "by", "at"} to its history.
        Raises NotFound, ValueError for a bad status."""

    # reports
    @abstractmethod
    def counts(self) -> dict[str, Any]:
        """{"works": n, "chapters": n, "pages": {status: n}, "matches": {status: n}}."""

    @abstractmethod
    def failures(self, limit: int = 50) -> list[Page]:
        """Failed pages, most recent first, with their reasons."""

    def close(self) -> None:
        """Release connections."""
