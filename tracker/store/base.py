"""The store interface: one abstract class per concern, and `Store`, all of them.

Two backends implement it: SQLite (the embedded default, no server) and
MongoDB (production). One contract test suite runs against both. Unique keys
make every write idempotent: storing the same page, chapter or match twice
updates the record and never duplicates it. Every method is safe to call twice
with the same arguments.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from .followup import Delivery, Event, Recheck, Subscription
from .discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun
from .evidence import Evidence
from .keys import SigningKey
from .tenancy import ApiToken, Organisation
from .records import PageScope
from .records import (
    Chapter,
    CrawlRun,
    FingerprintRecord,
    ImageMatch,
    MatchRecord,
    NotFound,
    Page,
    PageImage,
    Site,
    User,
    UserSession,
    Work,
    WorkImage,
)


class OriginalsStore(ABC):
    """Works, their chapters, and the chapters' fingerprints."""

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
    def catalog_stamp(self) -> tuple[int, str]:
        """(the number of chapters, the latest updated_at as ISO text, "" for none): it changes
        whenever a chapter is added, changed or removed, so a process holding a copy of the
        index in memory knows when to load it again."""

    @abstractmethod
    def delete_chapter(self, key: str) -> None:
        """Remove a chapter and its fingerprints (its matches stay, for the record)."""

    @abstractmethod
    def delete_work(self, work_id: str) -> list[int]:
        """Remove a work with its chapters, their fingerprints and matches, and its registered
        images with their matches; returns the removed chapters' doc numbers (to take them out
        of the index). Raises NotFound when there is no such work."""

    # fingerprints
    @abstractmethod
    def put_fingerprint(self, record: FingerprintRecord) -> None:
        """Insert or replace the fingerprint of (chapter, params_hash)."""

    @abstractmethod
    def fingerprints(self, params_hash: str) -> Iterator[FingerprintRecord]:
        """All fingerprints made with these parameters."""



class PagesStore(ABC):
    """Crawled and ingested pages."""

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
                   limit: int | None = 50, offset: int = 0, seen_by: PageScope | None = None) -> list[Page]:
        """Pages for listing and search, most recently fetched first (then by key). With `seen_by`
        (sites, works): only the pages of those sites and the pages a match ties to those works."""

    @abstractmethod
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None, seen_by: PageScope | None = None) -> int:
        """How many pages find_pages would list without a limit."""

    @abstractmethod
    def page_summary(self, by: Sequence[str], *, seen_by: PageScope | None = None) -> list[dict[str, Any]]:
        """Pages grouped by some of PAGE_GROUPS: one dict per group with those fields and
        "pages", "last_fetched"; most pages first, then by the group fields. `seen_by` as in
        find_pages."""



class MatchesStore(ABC):
    """Matches of pages with chapters, and their review."""

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
    def match_totals(self, by: Sequence[str], *, work: str | Sequence[str] | None = None, site: str | None = None,
                     status: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Like match_summary without the distinct counts: one dict per group with its fields and
        "matches", "first_seen", "last_seen", in the same order. What the reports ask on every
        view, so a backend answers it from totals it keeps up to date rather than by a scan."""

    @abstractmethod
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Change a match's status and append {"status", "by", "at"} to its history.
        Raises NotFound, ValueError for a bad status."""



class SitesStore(ABC):
    """Watched sites and their crawls."""

    # sites and crawls
    @abstractmethod
    def upsert_site(self, site: Site) -> Site:
        """Insert or replace a site's start URLs, rules, recrawl flag and schedule (hour, every);
        keeps created_at and last_scheduled."""

    @abstractmethod
    def claim_site_slot(self, name: str, slot: datetime) -> bool:
        """Record `slot` as the site's last scheduled crawl when it is later than the one recorded;
        whether it was (False: a check took this slot already, or there is no such site)."""

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



class AccountsStore(ABC):
    """The admin's users and sessions."""

    # users
    @abstractmethod
    def upsert_user(self, user: User) -> User:
        """Insert or replace a user (keeps created_at and last_login). Raises ValueError for an unknown role."""

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
        """Record a sign-in attempt atomically: success clears failed_logins and locked_until and
        sets last_login to `at`;
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



class ImagesStore(ABC):
    """Registered images of works (covers, illustrations), images found on crawled pages, and
    the matches between them. The bytes of an image are read only when asked for: listings
    leave them out (`data` is b"")."""

    @abstractmethod
    def upsert_work_image(self, image: WorkImage) -> tuple[WorkImage, bool]:
        """Insert or replace a registered image (keeps created_at); returns it, with its sha256,
        and whether its bytes are new or changed."""

    @abstractmethod
    def get_work_image(self, key: str) -> WorkImage:
        """With its bytes. Raises NotFound."""

    @abstractmethod
    def work_images(self, work: str | None = None, *, with_data: bool = False) -> list[WorkImage]:
        """Registered images (of one work), by key; their bytes only `with_data`."""

    @abstractmethod
    def count_work_images(self, work: str | None = None) -> int:
        """How many images (of one work) are registered."""

    @abstractmethod
    def delete_work_image(self, key: str) -> None:
        """Forget a registered image (its matches stay, for the record). Raises NotFound."""

    @abstractmethod
    def upsert_page_image(self, image: PageImage) -> tuple[PageImage, bool]:
        """Insert or update an image found on a page; returns it and whether its bytes are new or
        changed. New or changed bytes: status "queued", no fingerprint, reading, reason or attempts,
        the given updated_at. Same bytes: url, site, found_on, position, fetched_at and the
        validators are updated; status, fingerprint, reading and attempts are kept."""

    @abstractmethod
    def get_page_image(self, key: str) -> PageImage:
        """With its bytes. Raises NotFound."""

    @abstractmethod
    def page_images(self, *, status: str | None = None, site: str | None = None, found_on: str | None = None,
                    reading: str | None = None, limit: int | None = None) -> list[PageImage]:
        """Images found on pages (on the page `found_on`; whose reading has the status `reading`),
        without their bytes, oldest update first."""

    @abstractmethod
    def set_page_image_reading(self, key: str, reading: dict[str, Any]) -> None:
        """Record what OCR made of a page image (tracker.pictures); its status is left alone.
        Raises NotFound."""

    @abstractmethod
    def set_page_image_status(self, key: str, status: str, reason: str = "", *,
                              fingerprint: dict[str, Any] | None = None) -> None:
        """Record the outcome of processing (counts an attempt), and the fingerprint when given.
        Raises NotFound, ValueError for a bad status."""

    def page_image_validators(self, key: str) -> tuple[str, str]:
        """(etag, last_modified) of a stored page image; ("", "") when it has none or is not stored."""
        try:
            image = self.get_page_image(key)
        except NotFound:
            return "", ""
        return image.etag, image.last_modified

    @abstractmethod
    def upsert_image_match(self, match: ImageMatch) -> ImageMatch:
        """Insert, or update the distance, agreement and last_seen (forward only) of, the match
        (image, work_image); keeps first_seen, status and history."""

    @abstractmethod
    def get_image_match(self, image: str, work_image: str) -> ImageMatch:
        """Raises NotFound."""

    @abstractmethod
    def image_matches(self, *, work: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None, image: str | None = None,
                      limit: int | None = None, offset: int = 0, sort: str = "distance") -> list[ImageMatch]:
        """Image matches, ordered by `sort` (one of IMAGE_MATCH_SORTS, "-" for descending), then by
        image and registered image."""

    @abstractmethod
    def count_image_matches(self, *, work: str | None = None, site: str | None = None,
                            status: str | Sequence[str] | None = None, image: str | None = None) -> int:
        """How many image matches `image_matches` would return without a limit."""

    @abstractmethod
    def set_image_match_status(self, image: str, work_image: str, status: str, by: str = "") -> ImageMatch:
        """Change an image match's status and append {"status", "by", "at"} to its history (nothing
        when it has that status already). Raises NotFound, ValueError for a bad status."""


class FollowUpStore(ABC):
    """What happens after a match is found: the events people are told about, who is told
    (subscriptions per work or site), each delivery with its log, and the latest re-check of
    each page whose takedown was sent. Records in tracker.store.followup."""

    @abstractmethod
    def upsert_subscription(self, sub: Subscription) -> Subscription:
        """Insert or update (target, scope, secret, kinds) a subscription; keeps created_at.
        Raises ValueError for an unknown channel or event kind."""

    @abstractmethod
    def get_subscription(self, sub_id: str) -> Subscription:
        """Raises NotFound."""

    @abstractmethod
    def subscriptions(self) -> list[Subscription]:
        """All subscriptions, oldest first (then by id)."""

    @abstractmethod
    def delete_subscription(self, sub_id: str) -> None:
        """Forget a subscription and its pending deliveries (sent ones stay, for the record). Raises NotFound."""

    @abstractmethod
    def add_event(self, event: Event) -> tuple[Event, bool]:
        """Record an event once: returns the stored event and whether it is new (an event with
        its id already stored is left as it was)."""

    @abstractmethod
    def get_event(self, event_id: str) -> Event:
        """Raises NotFound."""

    @abstractmethod
    def events(self, *, kind: str | None = None, routed: bool | None = None, site: str | None = None,
               limit: int | None = 50) -> list[Event]:
        """Events, most recent first (then by id)."""

    @abstractmethod
    def set_event_routed(self, event_id: str) -> None:
        """Note that the event's deliveries have been made. Raises NotFound."""

    @abstractmethod
    def purge_events(self, before: datetime, *, batch: int = 500, dry_run: bool = False) -> tuple[int, int]:
        """Remove the events older than `before` whose deliveries are all finished (none pending;
        an event no one wanted has none), with those deliveries, `batch` events at a time (one
        write each); never an event not yet routed or with a delivery still pending. Returns
        (events, deliveries) removed; `dry_run`: counts them and removes nothing. Raises
        ValueError for a batch under 1."""

    @abstractmethod
    def add_delivery(self, delivery: Delivery) -> tuple[Delivery, bool]:
        """Insert a pending delivery of (event, subscription) unless there is one; returns it and
        whether it is new (an existing one keeps its status, attempts and log)."""

    @abstractmethod
    def deliveries(self, *, subscription: str | None = None, status: str | None = None, event: str | None = None,
                   limit: int | None = None) -> list[Delivery]:
        """Deliveries, oldest first (then by event and subscription)."""

    @abstractmethod
    def record_delivery(self, event: str, subscription: str, ok: bool, detail: str = "",
                        at: datetime | None = None) -> Delivery:
        """Log one attempt ({"at", "ok", "detail"}); a success marks the delivery sent (sent_at = at),
        a failure leaves it pending. Raises NotFound."""

    @abstractmethod
    def put_recheck(self, recheck: Recheck) -> Recheck:
        """Insert or replace the latest re-check of a page. Raises ValueError for an unknown outcome."""

    @abstractmethod
    def get_recheck(self, page: str) -> Recheck:
        """Raises NotFound."""

    @abstractmethod
    def rechecks(self, *, site: str | None = None) -> list[Recheck]:
        """The latest re-check of each page (of one site), by page."""


class EvidenceStore(ABC):
    """The evidence of pages: the WARC files of their HTTP exchanges and the screenshots of
    rendered ones (records in tracker.store.evidence). The bytes are kept beside the records
    (files under FPT_HOME, GridFS), read only when asked for, and checked against their hash."""

    @abstractmethod
    def put_evidence(self, evidence: Evidence) -> tuple[Evidence, bool]:
        """Keep a file of a page's evidence unless the page has the same bytes already; returns it
        (without its bytes, with sha256 and size set) and whether it is new. Raises ValueError."""

    @abstractmethod
    def evidence(self, page: str) -> list[Evidence]:
        """A page's evidence without the bytes, oldest fetch first (then kind, sha256)."""

    @abstractmethod
    def evidence_data(self, page: str, sha256: str) -> bytes:
        """The bytes of one file, checked against its hash. Raises NotFound; StoreError when
        the bytes kept differ from the hash recorded."""

    @abstractmethod
    def delete_evidence(self, page: str) -> int:
        """Remove a page's evidence, bytes and all; returns how many files."""

    @abstractmethod
    def mark_evidence_gone(self, at: datetime) -> int:
        """Mark with gone_since = at the evidence of pages no longer stored (kept when marked
        already), unmark that of pages stored again; returns how many pages were newly marked."""

    @abstractmethod
    def purge_evidence(self, gone_before: datetime) -> int:
        """Remove the evidence marked gone at or before `gone_before`; returns how many files."""


class DiscoveryStore(ABC):
    """Discovery runs, what each of their search queries found, and the URLs searches returned
    (tracker.discovery)."""

    @abstractmethod
    def add_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        """Record a run; returns it with its new id (never reused)."""

    @abstractmethod
    def update_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        """Replace what run `run.id` holds (finished_at, outcome, counts, sites_added). Raises NotFound."""

    @abstractmethod
    def get_discovery_run(self, run_id: int) -> DiscoveryRun:
        """Raises NotFound."""

    @abstractmethod
    def discovery_runs(self, *, work: str | None = None, limit: int | None = 50) -> list[DiscoveryRun]:
        """Runs, most recent first (then highest id)."""

    @abstractmethod
    def put_discovery_query(self, query: DiscoveryQuery) -> DiscoveryQuery:
        """Insert or replace the query (run, n); ValueError for a bad kind or place."""

    @abstractmethod
    def discovery_queries(self, run_id: int) -> list[DiscoveryQuery]:
        """A run's queries in their order."""

    @abstractmethod
    def add_discovered_urls(self, urls: Sequence[DiscoveredUrl]) -> list[str]:
        """Remember URLs a search returned; returns those not seen before, in order. A URL seen
        before keeps its first record."""

    @abstractmethod
    def seen_urls(self, urls: Sequence[str]) -> set[str]:
        """Which of `urls` a search returned before."""


class TenancyStore(ABC):
    """Organisations, what each owns (works, sites, users; what none was named for belongs to
    tenancy.DEFAULT_ORG) and API tokens (records in tracker.store.tenancy)."""

    @abstractmethod
    def upsert_org(self, org: Organisation) -> Organisation:
        """Insert an organisation unless it exists (keeps created_at). Raises ValueError for a bad name."""

    @abstractmethod
    def get_org(self, name: str) -> Organisation:
        """Raises NotFound."""

    @abstractmethod
    def orgs(self) -> list[Organisation]:
        """All organisations, by name."""

    @abstractmethod
    def set_owner(self, kind: str, key: str, org: str) -> None:
        """Make `org` the owner of a work, site or user (one of tenancy.OWNED_KINDS). Raises ValueError."""

    @abstractmethod
    def owner(self, kind: str, key: str) -> str:
        """The organisation that owns it; DEFAULT_ORG when none was set."""

    @abstractmethod
    def owners(self, kind: str) -> dict[str, str]:
        """key -> organisation of every `kind` an owner was set for."""

    @abstractmethod
    def add_token(self, token: ApiToken) -> ApiToken:
        """Insert a token (another with its id only changes name). Raises ValueError for a bad scope."""

    @abstractmethod
    def token_by_hash(self, token_hash: str) -> ApiToken:
        """Raises NotFound."""

    @abstractmethod
    def tokens(self, org: str | None = None) -> list[ApiToken]:
        """Tokens (of one organisation), oldest first (then by id)."""

    @abstractmethod
    def delete_token(self, token_id: str) -> None:
        """Revoke a token. Raises NotFound."""

    @abstractmethod
    def touch_token(self, token_id: str, at: datetime) -> None:
        """Set last_used; a revoked token stays revoked."""


class KeysStore(ABC):
    """Each organisation's key that signs its evidence packages (records in tracker.store.keys)."""

    @abstractmethod
    def add_signing_key(self, key: SigningKey) -> SigningKey:
        """Keep the organisation's key unless it has one; returns the one kept (of two made at
        once, the first stored wins). Raises ValueError for a bad key."""

    @abstractmethod
    def signing_key(self, org: str) -> SigningKey:
        """Raises NotFound."""


class Store(OriginalsStore, PagesStore, MatchesStore, SitesStore, AccountsStore, ImagesStore, FollowUpStore,
            EvidenceStore, DiscoveryStore, TenancyStore, KeysStore):
    """Everything the system keeps."""

    # reports
    @abstractmethod
    def counts(self) -> dict[str, Any]:
        """{"works": n, "chapters": n, "pages": {status: n}, "matches": {status: n}, "images":
        {"registered": n, "found": {status: n}, "matches": {status: n}}}."""

    @abstractmethod
    def failures(self, limit: int = 50) -> list[Page]:
        """Failed pages, most recent first, with their reasons."""

    def close(self) -> None:
        """Release connections."""
