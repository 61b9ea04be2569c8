"""The production store: MongoDB (see connection.py for how concurrent writers stay
consistent). One module per concern; `MongoStore` puts them together. sharding.py holds
the shard key of each collection and sets a sharded cluster up for the store.

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
    seen_texts,
    signing_keys,
    sites,
    tenancy,
    totals,
)
from .accounts import AccountsMongo
from .connection import MongoBase, redact
from .discovery import DiscoveryMongo
from .evidence import EvidenceMongo
from .images import ImagesMongo
from .matches import MatchesMongo
from .notifications import NotificationsMongo
from .originals import OriginalsMongo
from .pages import PagesMongo
from .reports import ReportsMongo
from .seen_texts import SeenTextsMongo
from .signing_keys import KeysMongo
from .sites import SitesMongo
from .tenancy import TenancyMongo

__all__ = ["MongoStore", "redact"]

_CONCERNS = (originals, pages, matches, sites, accounts, images, notifications, evidence, discovery, tenancy,
             totals, signing_keys, seen_texts)


class MongoStore(OriginalsMongo, PagesMongo, MatchesMongo, SitesMongo, AccountsMongo, ImagesMongo,
                 NotificationsMongo, EvidenceMongo, DiscoveryMongo, TenancyMongo, KeysMongo, SeenTextsMongo,
                 ReportsMongo, MongoBase, Store):
    """The store in a MongoDB database. `client` takes an existing client (tests pass
    mongomock.MongoClient()); otherwise one is made for `url`, failing within
    `timeout_ms` when no server answers."""

    INDEXES = {name: idx for m in _CONCERNS for name, idx in m.INDEXES.items()}
