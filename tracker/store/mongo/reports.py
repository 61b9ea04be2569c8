"""MongoDB: the totals and recent failures the dashboard shows."""
from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, DESCENDING

from ..records import MATCH_STATUSES, PAGE_STATUSES, Page
from ..values import check_window
from .connection import NO_ID, MongoBase, _guarded
from .pages import _page


class ReportsMongo(MongoBase):
    """Totals and failures from MongoDB."""

    # ---- reports -------------------------------------------------------------------

    def _by_status(self, collection: Any, statuses: tuple[str, ...]) -> dict[str, int]:
        found = {r["_id"]: int(r["n"]) for r in collection.aggregate([{"$group": {"_id": "$status",
                                                                                  "n": {"$sum": 1}}}])}
        return {s: found.get(s, 0) for s in statuses}

    @_guarded
    def counts(self) -> dict[str, Any]:
        return {"works": self._works.count_documents({}), "chapters": self._chapters.count_documents({}),
                "pages": self._by_status(self._pages, PAGE_STATUSES),
                "matches": self._by_status(self._matches, MATCH_STATUSES),
                "images": {"registered": self._work_images.count_documents({}),
                           "found": self._by_status(self._page_images, PAGE_STATUSES),
                           "matches": self._by_status(self._image_matches, MATCH_STATUSES)}}

    @_guarded
    def failures(self, limit: int = 50) -> list[Page]:
        check_window(limit)
        if limit == 0:
            return []
        cursor = self._pages.find({"status": "failed"}, NO_ID).sort(
            [("updated_at", DESCENDING), ("key", ASCENDING)]).limit(limit)
        return [_page(d) for d in cursor]
