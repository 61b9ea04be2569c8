"""The embedded store: one SQLite file, no server to run (see connection.py for how
processes share it). One module per concern; `SQLiteStore` puts them together.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
from __future__ import annotations

from ..base import Store
from . import (
    accounts,
    discovery,
    evidence,
    images,
    matches,
    notifications,
    originals,
    pages,
    rollups,
    seen_texts,
    signing_keys,
    sites,
    tenancy,
)
from .accounts import AccountsSQL
from .connection import BUSY_TIMEOUT_MS, SCHEMA_VERSION, SQLiteBase
from .discovery import DiscoverySQL
from .evidence import EvidenceSQL
from .images import ImagesSQL
from .matches import MatchesSQL
from .notifications import NotificationsSQL
from .originals import OriginalsSQL
from .pages import PagesSQL
from .reports import ReportsSQL
from .seen_texts import SeenTextsSQL
from .signing_keys import KeysSQL
from .sites import SitesSQL
from .tenancy import TenancySQL

__all__ = ["BUSY_TIMEOUT_MS", "SCHEMA_VERSION", "SQLiteStore"]

_CONCERNS = (originals, pages, matches, sites, accounts, images, notifications, evidence, discovery, tenancy,
             rollups, signing_keys, seen_texts)


class SQLiteStore(OriginalsSQL, PagesSQL, MatchesSQL, SitesSQL, AccountsSQL, ImagesSQL, NotificationsSQL,
                  EvidenceSQL, DiscoverySQL, TenancySQL, KeysSQL, SeenTextsSQL, ReportsSQL, SQLiteBase, Store):
    """The store in one SQLite file (or ":memory:"). One connection per object; use an
    object from one thread at a time (a lock serialises calls if threads do share it),
    and open one object per process to share the file."""

    SCHEMA = "".join(m.SCHEMA for m in _CONCERNS)
    ADDED_COLUMNS = {table: cols for m in _CONCERNS for table, cols in getattr(m, "ADDED_COLUMNS", {}).items()}
    TRIGGERS = rollups.TRIGGERS
    FILLS = rollups.FILLS
