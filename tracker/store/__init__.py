"""Stores: one interface (`base.Store`), an embedded SQLite backend and a MongoDB backend."""
from .base import (
    MATCH_GROUPS,
    MATCH_SORTS,
    MATCH_STATUSES,
    PAGE_GROUPS,
    PAGE_STATUSES,
    ROLES,
    Chapter,
    CrawlRun,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Site,
    Store,
    StoreError,
    User,
    UserSession,
    Work,
    content_hash,
    now,
)

__all__ = [
    "MATCH_GROUPS", "MATCH_SORTS", "MATCH_STATUSES", "PAGE_GROUPS", "PAGE_STATUSES", "ROLES", "Chapter", "CrawlRun",
    "FingerprintRecord", "MatchRecord", "NotFound", "Page", "Site", "Store", "StoreError", "User", "UserSession",
    "Work", "content_hash", "now",
]
