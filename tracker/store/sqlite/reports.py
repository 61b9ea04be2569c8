"""SQLite: the totals and recent failures the dashboard shows."""
from __future__ import annotations

from typing import Any

from ..records import MATCH_STATUSES, PAGE_STATUSES, Page
from ..values import check_window
from .connection import SQLiteBase, _guarded
from .pages import _page


class ReportsSQL(SQLiteBase):
    """Totals and failures from SQLite."""

    # ---- reports -------------------------------------------------------------------

    @_guarded
    def counts(self) -> dict[str, Any]:
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot for all the numbers
            try:
                works = self._conn.execute("SELECT COUNT(*) FROM works").fetchone()[0]
                chapters = self._conn.execute("SELECT COUNT(*) FROM chapters").fetchone()[0]
                # pages and matches from their running totals (rollups.py): no scan
                pages = dict(self._conn.execute("SELECT status, SUM(n) FROM page_groups GROUP BY status").fetchall())
                matches = dict(self._conn.execute("SELECT status, SUM(n) FROM match_days GROUP BY status"
                                                  ).fetchall())
                registered = self._conn.execute("SELECT COUNT(*) FROM work_images").fetchone()[0]
                found = dict(self._conn.execute("SELECT status, COUNT(*) FROM page_images GROUP BY status").fetchall())
                copies = dict(self._conn.execute("SELECT status, COUNT(*) FROM image_matches GROUP BY status"
                                                 ).fetchall())
            finally:
                self._conn.execute("COMMIT")
        return {"works": works, "chapters": chapters,
                "pages": {s: pages.get(s, 0) for s in PAGE_STATUSES},
                "matches": {s: matches.get(s, 0) for s in MATCH_STATUSES},
                "images": {"registered": registered, "found": {s: found.get(s, 0) for s in PAGE_STATUSES},
                           "matches": {s: copies.get(s, 0) for s in MATCH_STATUSES}}}

    @_guarded
    def failures(self, limit: int = 50) -> list[Page]:
        check_window(limit)
        rows = self._read("SELECT * FROM pages WHERE status = 'failed' ORDER BY updated_at DESC, key LIMIT ?",
                          (limit,))
        return [_page(r) for r in rows]
