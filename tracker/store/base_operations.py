"""The store interface for the work around what is tracked: watched sites and their crawls
(`SitesStore`), the follow-up of matches (`FollowUpStore`), the evidence of pages
(`EvidenceStore`) and discovery (`DiscoveryStore`). Part of `tracker.store.base.Store`."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime

from .discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun
from .evidence import Evidence
from .followup import Delivery, Event, Recheck, Subscription
from .records import CrawlRun, Site


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
    (tracker.discovery.discover)."""

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
