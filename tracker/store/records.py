"""The records the stores keep, their statuses and the store's errors."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

PAGE_STATUSES = ("queued", "done", "failed")
MATCH_STATUSES = ("new", "confirmed", "dismissed", "takedown-sent", "removed")
#: The copies still up: what the reports count by default (not removed, and not dismissed as no copy).
ACTIVE_STATUSES = ("new", "confirmed", "takedown-sent")
#: operator: an admin of every organisation; admin: of its own; viewer: reads its own.
ROLES = ("admin", "viewer", "operator")
#: Orders `matches` accepts ("-" first: descending); ties are broken by page, then chapter.
MATCH_SORTS = ("containment", "similarity", "page_share", "first_seen", "last_seen", "site", "work", "chapter",
               "status")
#: Fields `match_summary` groups by; "day" is the UTC date of first_seen, as YYYY-MM-DD.
MATCH_GROUPS = ("work", "site", "chapter", "status", "day", "verdict")
PAGE_GROUPS = ("site", "status")
#: What an organisation sees of the pages (find_pages' `seen_by`): every page of these sites
#: (its own), and the pages a match ties to these works (its own) wherever they are.
PageScope = tuple[Sequence[str], Sequence[str]]
#: Orders `image_matches` accepts; ties are broken by image, then registered image.
IMAGE_MATCH_SORTS = ("distance", "first_seen", "last_seen", "site", "work", "status")


def now() -> datetime:
    """The current time in UTC, to the millisecond (what both backends can store)."""
    t = datetime.now(UTC)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def content_hash(text: str) -> str:
    """A hash of the exact text (SHA-256, hex), to tell whether a chapter or page changed."""
    # surrogatepass: hashing never fails; a lone surrogate that reaches the store is refused there
    # as one BadRecord (entry points replace them first, see pagetext.scrub).
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
    recrawl: bool = True  # crawled on its schedule (False: paused)
    created_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)
    # Its schedule (tracker.sites.schedule): the UTC hour of its crawl (None: FPT_RECRAWL_HOUR), every N days.
    hour: int | None = None
    every: int = 1
    # The slot of its last scheduled crawl; written only by Store.claim_site_slot, kept by upsert_site.
    last_scheduled: datetime | None = None


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
    last_login: datetime | None = None  # the last successful sign-in (set by record_login)


@dataclass
class UserSession:
    """A signed-in browser session of the admin. The cookie holds a random secret; the store
    keeps only its hash, so a copy of the store cannot be replayed as a cookie."""
    id: str  # SHA-256 (hex) of the cookie's secret
    user: str  # User.name
    created_at: datetime = field(default_factory=now)
    last_seen: datetime = field(default_factory=now)
    stamp: str = ""  # derived from the password hash at sign-in: a changed password ends the session


@dataclass
class WorkImage:
    """A registered image of a work: its cover, an illustration."""
    key: str  # unique: "<work>/<name>"
    work: str  # Work.id
    name: str  # the file's name, unique within the work
    data: bytes  # the file as registered ("" in listings that leave the bytes out)
    fingerprint: dict[str, Any]  # fingerprint.image.ImageFingerprint.to_dict()
    media_type: str = ""
    sha256: str = ""  # of data; set by the store
    created_at: datetime = field(default_factory=now)


@dataclass
class PageImage:
    """An image a crawled page shows, as it was served; matched against the registered images."""
    key: str  # unique: its URL (an inline data: image: "data:<sha256>")
    url: str
    site: str
    found_on: str  # the page that shows it
    data: bytes  # the body as fetched ("" in listings that leave the bytes out)
    media_type: str = ""
    sha256: str = ""  # of data; set by the store
    fingerprint: dict[str, Any] = field(default_factory=dict)  # set when it is processed
    status: str = "queued"  # queued | done | failed
    reason: str = ""
    attempts: int = 0
    fetched_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)
    etag: str = ""  # the response's validators, sent back when it is fetched again
    last_modified: str = ""
    position: int = 0  # its place among the pictures of the page that shows it (page order)
    # What OCR made of it (tracker.media.pictures): {"status": "read" | "no text" | ..., "text", "lines",
    # "engine", ...}; {} until it is judged. New bytes clear it; the same bytes keep it.
    reading: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImageMatch:
    """A page image that copies a registered image."""
    image: str  # PageImage.key
    work_image: str  # WorkImage.key
    work: str
    site: str
    found_on: str  # the page that shows the copy
    distance: int  # of the perceptual hashes, in bits of 64
    colour_agreement: float  # share of the colour-map blocks that agree
    status: str = "new"
    first_seen: datetime = field(default_factory=now)
    last_seen: datetime = field(default_factory=now)
    history: list[dict[str, Any]] = field(default_factory=list)  # {"status", "by", "at"} per change
