"""The store interface: works, chapters, pages, fingerprints and matches.

Two backends implement it: SQLite (the embedded default, no server) and
MongoDB (production). One contract test suite runs against both. Unique keys
make every write idempotent: storing the same page, chapter or match twice
updates the record and never duplicates it.
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

PAGE_STATUSES = ("queued", "done", "failed")
MATCH_STATUSES = ("new", "confirmed", "dismissed", "takedown-sent", "removed")
ROLES = ("admin", "viewer")
#: Orders `matches` accepts ("-" first: descending); ties are broken by page, then chapter.
MATCH_SORTS = ("containment", "similarity", "page_share", "first_seen", "last_seen", "site", "work", "chapter",
               "status")
#: Fields `match_summary` groups by; "day" is the UTC date of first_seen, as YYYY-MM-DD.
MATCH_GROUPS = ("work", "site", "chapter", "status", "day")
PAGE_GROUPS = ("site", "status")


def now() -> datetime:
    """The current time in UTC, to the millisecond (what both backends can store)."""
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def content_hash(text: str) -> str:
    """A hash of the exact text (SHA-256, hex), to tell whether a chapter or page changed."""
    # surrogatepass: hashing never fails; a lone surrogate that reaches the store is refused there
    # as one BadRecord (entry points replace them first, see fingerprint.scrub).
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class StoreError(Exception):
    """The store cannot be reached or refused a write; the message says what to check."""


class BadRecord(StoreError):
    """The store refused one record (text it cannot encode, a key it cannot hold); others still go in."""


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
    # HTTP validators of the response the page came from, sent back when it is crawled again
    # (If-None-Match, If-Modified-Since) so that an unchanged page costs a 304 and no body.
    etag: str = ""
    last_modified: str = ""


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


@dataclass
class Site:
    """A watched site: where to start crawling and the rules that improve its extraction."""
    name: str  # unique, e.g. "biquge"
    start_urls: list[str]
    rules: dict[str, Any] = field(default_factory=dict)  # crawler.rules.SiteRules as a dict
    recrawl: bool = True  # crawled again by the daily run
    created_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)


@dataclass
class CrawlRun:
    """What one crawl of one site did."""
    site: str
    started_at: datetime
    finished_at: datetime
    outcome: str  # why it stopped: "finished", "shutdown" (paused), "closespider_pagecount", ...
    counts: dict[str, int] = field(default_factory=dict)  # fetched, stored, unchanged, skipped, failed, matched
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> pages
    failed: dict[str, int] = field(default_factory=dict)  # reason -> pages
    job: str = ""  # the crawl job it belongs to (a resumed crawl keeps its job)
    id: int = 0  # assigned by the store


@dataclass
class User:
    """Someone who signs in to the admin."""
    name: str
    password_hash: str  # never the password itself
    role: str = "viewer"  # admin | viewer
    failed_logins: int = 0  # since the last successful login
    locked_until: datetime | None = None
    created_at: datetime = field(default_factory=now)


@dataclass
class UserSession:
    """A signed-in browser session of the admin. The cookie holds a random secret; the store
    keeps only its hash, so a copy of the store cannot be replayed as a cookie."""
    id: str  # SHA-256 (hex) of the cookie's secret
    user: str  # User.name
    created_at: datetime = field(default_factory=now)
    last_seen: datetime = field(default_factory=now)
    stamp: str = ""  # derived from the password hash at sign-in: a changed password ends the session


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
    def chapter_headers(self, work: str | None = None) -> list[Chapter]:
        """Chapters (of one work) without their texts (text is ""), in the order of `chapters`."""

    @abstractmethod
    def count_chapters(self, work: str | None = None) -> int:
        """How many chapters (of one work) are registered."""

    @abstractmethod
    def delete_chapter(self, key: str) -> None:
        """Remove a chapter and its fingerprints (its matches stay, for the record)."""

    # pages
    @abstractmethod
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """Insert or update a page; returns it and whether its text is new or changed.
        A changed page goes back to status "queued"; an unchanged one keeps its status.
        The validators (etag, last_modified) are replaced either way."""

    @abstractmethod
    def get_page(self, key: str) -> Page:
        """Raises NotFound."""

    @abstractmethod
    def pages(self, *, status: str | None = None, site: str | None = None, limit: int | None = None) -> Iterator[Page]:
        """Pages, oldest update first."""

    def page_validators(self, key: str, made_by: str | None = None) -> tuple[str, str]:
        """(etag, last_modified) of a stored page; ("", "") when it has none, is not stored, or, with
        `made_by`, its meta["made_by"] differs (its text was made another way: it must be fetched again)."""
        try:
            page = self.get_page(key)
        except NotFound:
            return "", ""
        if made_by is not None and page.meta.get("made_by") != made_by:
            return "", ""
        return page.etag, page.last_modified

    @abstractmethod
    def delete_page(self, key: str) -> bool:
        """Remove a page that another stands for (a lone part of a chapter later stored joined),
        with its matches, unless someone reviewed one of them (any status but "new"): then the
        page and its matches stay, for the record. True when it was removed."""

    @abstractmethod
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        """Record the outcome of processing (counts an attempt). Raises NotFound, ValueError for a bad status."""

    @abstractmethod
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0) -> list[Page]:
        """Pages for listing and search, most recently fetched first (then by key)."""

    @abstractmethod
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None) -> int:
        """How many pages find_pages would list without a limit."""

    @abstractmethod
    def page_summary(self, by: Sequence[str]) -> list[dict[str, Any]]:
        """Pages grouped by some of PAGE_GROUPS: one dict per group with those fields and
        "pages", "last_fetched"; most pages first, then by the group fields."""

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

    # In the match queries below, `status` is one status or a sequence of them (any of).

    @abstractmethod
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | Sequence[str] | None = None, chapter: str | None = None, limit: int | None = None,
                offset: int = 0, sort: str = "-containment") -> list[MatchRecord]:
        """Matches, ordered by `sort` (one of MATCH_SORTS, "-" for descending), then by page and chapter."""

    @abstractmethod
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None, chapter: str | None = None) -> int:
        """How many matches `matches` would return without a limit."""

    @abstractmethod
    def match_summary(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Matches grouped by some of MATCH_GROUPS: one dict per group with those fields and
        "matches", "pages" (distinct), "chapters" (distinct), "first_seen" (earliest),
        "last_seen" (latest); most matches first, then by the group fields."""

    @abstractmethod
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Change a match's status and append {"status", "by", "at"} to its history.
        Raises NotFound, ValueError for a bad status."""

    # sites and crawls
    @abstractmethod
    def upsert_site(self, site: Site) -> Site:
        """Insert or replace a site's start URLs, rules and recrawl flag; keeps created_at."""

    @abstractmethod
    def get_site(self, name: str) -> Site:
        """Raises NotFound."""

    @abstractmethod
    def sites(self) -> list[Site]:
        """All configured sites, by name."""

    @abstractmethod
    def delete_site(self, name: str) -> None:
        """Forget a site's configuration (its pages, matches and crawl runs stay). Raises NotFound."""

    @abstractmethod
    def add_crawl_run(self, run: CrawlRun) -> CrawlRun:
        """Record a crawl; returns it with its id."""

    @abstractmethod
    def crawl_runs(self, *, site: str | None = None, limit: int | None = 50) -> list[CrawlRun]:
        """Crawls (of one site), most recent start first."""

    # users
    @abstractmethod
    def upsert_user(self, user: User) -> User:
        """Insert or replace a user (keeps created_at). Raises ValueError for an unknown role."""

    @abstractmethod
    def get_user(self, name: str) -> User:
        """Raises NotFound."""

    @abstractmethod
    def users(self) -> list[User]:
        """All users, by name."""

    @abstractmethod
    def delete_user(self, name: str) -> None:
        """Raises NotFound."""

    @abstractmethod
    def record_login(self, name: str, ok: bool, *, max_failures: int, lock_for: timedelta,
                     at: datetime | None = None) -> User:
        """Record a sign-in attempt atomically: success clears failed_logins and locked_until;
        failure adds one, and every `max_failures`-th failure in a row locks the account until
        at + lock_for. Returns the user as it is now. Raises NotFound."""

    # sessions: deleting one that is gone already is no error (two sign-outs at once)
    @abstractmethod
    def add_session(self, session: UserSession) -> UserSession:
        """Insert a session (or replace the one with its id)."""

    @abstractmethod
    def get_session(self, session_id: str) -> UserSession:
        """Raises NotFound."""

    @abstractmethod
    def sessions(self, user: str | None = None) -> list[UserSession]:
        """Sessions (of one user), oldest first (then by id)."""

    @abstractmethod
    def touch_session(self, session_id: str, at: datetime) -> None:
        """Set last_seen; a session that is gone stays gone (never created again)."""

    @abstractmethod
    def delete_session(self, session_id: str) -> None:
        """End one session."""

    @abstractmethod
    def delete_sessions(self, user: str) -> int:
        """End every session of a user; returns how many there were."""

    @abstractmethod
    def purge_sessions(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete the sessions last seen before `seen_before` or created before `created_before`
        (idle or too old); returns how many."""

    # reports
    @abstractmethod
    def counts(self) -> dict[str, Any]:
        """{"works": n, "chapters": n, "pages": {status: n}, "matches": {status: n}}."""

    @abstractmethod
    def failures(self, limit: int = 50) -> list[Page]:
        """Failed pages, most recent first, with their reasons."""

    def close(self) -> None:
        """Release connections."""
