"""The store interface: `Store`, all of the abstract classes that each hold one concern's
methods (in base_content, base_operations, base_accounts and seen_texts), and the reports.

Two backends implement it: SQLite (the embedded default, no server) and
MongoDB (production). One contract test suite runs against both. Unique keys
make every write idempotent: storing the same page, chapter or match twice
updates the record and never duplicates it. Every method is safe to call twice
with the same arguments.
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

from .base_accounts import AccountsStore, KeysStore, TenancyStore
from .base_content import ImagesStore, MatchesStore, OriginalsStore, PagesStore
from .base_operations import DiscoveryStore, EvidenceStore, FollowUpStore, SitesStore
from .records import Page
from .seen_texts import SeenTextsStore

__all__ = ["AccountsStore", "DiscoveryStore", "EvidenceStore", "FollowUpStore", "ImagesStore", "KeysStore",
           "MatchesStore", "OriginalsStore", "PagesStore", "SeenTextsStore", "SitesStore", "Store", "TenancyStore"]


class Store(OriginalsStore, PagesStore, MatchesStore, SitesStore, AccountsStore, ImagesStore, FollowUpStore,
            EvidenceStore, DiscoveryStore, TenancyStore, KeysStore, SeenTextsStore):
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
