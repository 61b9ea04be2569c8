"""Stores: one interface (`base.Store`, a class per concern), an embedded SQLite backend
(`sqlite/`) and a MongoDB backend (`mongo/`), each a module per concern.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
from .base import Store
from .records import (
    ACTIVE_STATUSES,
    IMAGE_MATCH_SORTS,
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
    ImageMatch,
    MatchRecord,
    NotFound,
    Page,
    PageImage,
    Site,
    StoreError,
    User,
    UserSession,
    Work,
    WorkImage,
    content_hash,
    now,
)

__all__ = [
    "ACTIVE_STATUSES", "IMAGE_MATCH_SORTS", "MATCH_GROUPS", "MATCH_SORTS", "MATCH_STATUSES", "PAGE_GROUPS",
    "PAGE_STATUSES", "ROLES",
    "BadRecord", "Chapter", "CrawlRun", "FingerprintRecord", "ImageMatch", "MatchRecord", "NotFound", "Page",
    "PageImage", "Site", "Store", "StoreError", "User", "UserSession", "Work", "WorkImage", "content_hash", "now",
]
