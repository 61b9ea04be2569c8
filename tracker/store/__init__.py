"""Stores: one interface (`base.Store`), an embedded SQLite backend and a MongoDB backend."""
from .base import (
    MATCH_STATUSES,
    PAGE_STATUSES,
    Chapter,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Store,
    StoreError,
    Work,
    content_hash,
    now,
)

__all__ = [
    "MATCH_STATUSES", "PAGE_STATUSES", "Chapter", "FingerprintRecord", "MatchRecord", "NotFound", "Page",
    "Store", "StoreError", "Work", "content_hash", "now",
]
