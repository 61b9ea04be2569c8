"""Stores: one interface (`base.Store`, a class per concern), an embedded SQLite backend
(`sqlite/`) and a MongoDB backend (`mongo/`), each a module per concern."""
from .base import Store
from .records import (
    MATCH_GROUPS,
    MATCH_SORTS,
    MATCH_STATUSES,
    PAGE_GROUPS,
    PAGE_STATUSES,
    ROLES,
    BadRecord,
    Chapter,
    CrawlRun,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Site,
    StoreError,
    User,
    UserSession,
    Work,
    content_hash,
    now,
)

__all__ = [
    "MATCH_GROUPS", "MATCH_SORTS", "MATCH_STATUSES", "PAGE_GROUPS", "PAGE_STATUSES", "ROLES", "BadRecord", "Chapter",
    "CrawlRun", "FingerprintRecord", "MatchRecord", "NotFound", "Page", "Site", "Store", "StoreError", "User",
    "UserSession", "Work", "content_hash", "now",
]
