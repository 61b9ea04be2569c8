"""The store methods that concern no organisation's data, and the error for any other one that the
per-organisation view (tracker.store.scoped) does not redefine."""
from __future__ import annotations

#: Store methods that go to the store as they are: sign-in and sessions (before the scope is
#: known), what the crawler, matcher and workers write and read by key (a text judged before: against
#: every organisation's chapters), and the organisations themselves. Every other method of the store is
#: redefined in tracker/store/scoped.py (tests/tracker/test_store_scoped.py).
UNSCOPED = frozenset({
    "add_session", "get_session", "sessions", "touch_session", "delete_session", "delete_sessions", "purge_sessions",
    "record_login", "token_by_hash", "touch_token",
    "chapter_by_doc", "chapter_headers", "count_chapters", "catalog_stamp", "fingerprints", "put_fingerprint",
    "upsert_page", "set_page_status", "delete_page", "page_validators", "upsert_match", "upsert_page_image",
    "set_page_image_status", "set_page_image_reading", "page_image_validators", "upsert_image_match",
    "add_crawl_run", "claim_site_slot", "put_seen_text", "get_seen_text", "seen_text_keys", "count_seen_texts",
    "put_seen_filter", "seen_filter",
    "put_evidence", "delete_evidence", "mark_evidence_gone", "purge_evidence",
    "add_event", "set_event_routed", "purge_events", "add_delivery", "record_delivery", "put_recheck",
    "add_discovery_run", "update_discovery_run", "put_discovery_query", "add_discovered_urls", "seen_urls",
    "upsert_org", "get_org", "orgs", "set_owner", "owner", "owners", "close",
})


class UnscopedMethod(AttributeError):
    """A store method that is neither scoped to one organisation nor declared organisation-free:
    the per-organisation view refuses it rather than hand it to the whole store."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Store.{name} is neither scoped to one organisation nor declared organisation-free: "
                         "redefine it in tracker/store/scoped.py, or add it to UNSCOPED in tracker/store/unscoped.py")
        self.name = name
