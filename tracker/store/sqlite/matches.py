"""SQLite: matches of pages with chapters, their scores, evidence spans and review history."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..records import MATCH_GROUPS, MATCH_SORTS, MATCH_STATUSES, MatchRecord, NotFound
from ..totals import totals_for
from ..values import check_groups, check_status, check_window, clean_scores, clean_spans, parse_sort, statuses, to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads
from .rollups import MATCH_ROLLUPS, Rollup

_ROLLUPS = {r.table: r for r in MATCH_ROLLUPS}


def rollup_for(fields: set[str]) -> Rollup | None:
    """The smallest rollup keyed by every field a query groups or filters by; None: none is."""
    name = totals_for(fields)
    return None if name is None else _ROLLUPS[name]

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    page TEXT NOT NULL,
    chapter TEXT NOT NULL,
    work TEXT NOT NULL,
    site TEXT NOT NULL,
    similarity REAL NOT NULL,
    containment REAL NOT NULL,
    page_share REAL NOT NULL,
    verdict TEXT NOT NULL,
    scores TEXT NOT NULL,
    spans TEXT NOT NULL,
    status TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    history TEXT NOT NULL,
    PRIMARY KEY (page, chapter)
);
-- the default order, covering every filter: a deep page skips its offset in the index alone
CREATE INDEX IF NOT EXISTS matches_ranked ON matches (containment DESC, page, chapter, work, site, status);
DROP INDEX IF EXISTS matches_order;
CREATE INDEX IF NOT EXISTS matches_work ON matches (work, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_site ON matches (site, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_site_status ON matches (site, status, containment DESC, page, chapter);
-- A chapter's matches, and a group's of each running total (tracker/store/sqlite/rollups.py: when
-- a match that held a group's earliest or latest time leaves it, the triggers read the group again).
DROP INDEX IF EXISTS matches_groups;
CREATE INDEX IF NOT EXISTS matches_verdicts ON matches (chapter, site, status, work, verdict, first_seen, last_seen);
CREATE INDEX IF NOT EXISTS matches_day ON matches (work, status, first_seen, last_seen);
CREATE INDEX IF NOT EXISTS matches_site_work ON matches (site, work, status, first_seen, last_seen);
DROP INDEX IF EXISTS matches_chapter;
DROP INDEX IF EXISTS matches_group;
CREATE INDEX IF NOT EXISTS matches_first_seen ON matches (first_seen);
CREATE INDEX IF NOT EXISTS matches_last_seen ON matches (last_seen);
CREATE INDEX IF NOT EXISTS matches_similarity ON matches (similarity);
CREATE INDEX IF NOT EXISTS matches_page_share ON matches (page_share);
"""


def _match(r: sqlite3.Row) -> MatchRecord:
    return MatchRecord(page=r["page"], chapter=r["chapter"], work=r["work"], site=r["site"],
                       similarity=r["similarity"], containment=r["containment"], page_share=r["page_share"],
                       verdict=r["verdict"], scores=clean_scores(loads(r["scores"])), spans=loads(r["spans"]),
                       status=r["status"],
                       first_seen=from_text(r["first_seen"]), last_seen=from_text(r["last_seen"]),
                       history=loads(r["history"]))


class MatchesSQL(SQLiteBase):
    """Matches in SQLite."""

    # ---- matches -------------------------------------------------------------------

    @_guarded
    def upsert_match(self, match: MatchRecord) -> MatchRecord:
        """`last_seen` only moves forward (a late, older observation does not take it back)."""
        check_status(match.status, MATCH_STATUSES, "match status")
        with self._write() as c:
            c.execute(
                "INSERT INTO matches (page, chapter, work, site, similarity, containment, page_share, verdict, "
                "scores, spans, status, first_seen, last_seen, history) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (page, chapter) DO UPDATE SET work = excluded.work, site = excluded.site, "
                "similarity = excluded.similarity, containment = excluded.containment, "
                "page_share = excluded.page_share, verdict = excluded.verdict, scores = excluded.scores, "
                "spans = excluded.spans, last_seen = MAX(last_seen, excluded.last_seen)",
                (match.page, match.chapter, match.work, match.site, float(match.similarity),
                 float(match.containment), float(match.page_share), match.verdict, dumps(clean_scores(match.scores)),
                 dumps(clean_spans(match.spans)), match.status, to_text(match.first_seen),
                 to_text(match.last_seen), dumps(match.history)))
            row = c.execute("SELECT * FROM matches WHERE page = ? AND chapter = ?",
                            (match.page, match.chapter)).fetchone()
        return _match(row)

    @_guarded
    def get_match(self, page: str, chapter: str) -> MatchRecord:
        return _match(self._one("SELECT * FROM matches WHERE page = ? AND chapter = ?", (page, chapter),
                                f"no match of page {page!r} with chapter {chapter!r}"))

    @_guarded
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | None = None, chapter: str | None = None, limit: int | None = None, offset: int = 0,
                sort: str = "-containment") -> list[MatchRecord]:
        status = statuses(status, MATCH_STATUSES)
        check_window(limit, offset)
        field_name, descending = parse_sort(sort, MATCH_SORTS)
        # Several works (an organisation's): not through the work index, whose ranges SQLite would
        # have to sort together (every match of every work); the order's own index, filtered, instead.
        work_column = "+work" if isinstance(work, list) and len(work) > 1 else "work"
        cond, args = _where(((work_column, work), ("page", page), ("site", site), ("status", status),
                             ("chapter", chapter)))
        order = f"{field_name} {'DESC' if descending else 'ASC'}, page, chapter"
        rows = self._read(f"SELECT * FROM matches {cond} ORDER BY {order} LIMIT ? OFFSET ?",
                          [*args, -1 if limit is None else limit, offset])
        return [_match(r) for r in rows]

    @_guarded
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | None = None, chapter: str | None = None) -> int:
        status = statuses(status, MATCH_STATUSES)
        filters = (("work", work), ("page", page), ("site", site), ("status", status), ("chapter", chapter))
        rollup = None if page is not None or chapter is not None else rollup_for(
            {f for f, v in filters if v is not None})
        cond, args = _where(filters)
        if rollup is not None:  # a page's or a chapter's matches are few: counted from their index
            return self._read(f"SELECT COALESCE(SUM(n), 0) FROM {rollup.table} {cond}", args)[0][0]
        return self._read(f"SELECT COUNT(*) FROM matches {cond}", args)[0][0]

    @_guarded
    def match_totals(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                     status: str | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, MATCH_GROUPS)
        status = statuses(status, MATCH_STATUSES)
        filters = (("work", work), ("site", site), ("status", status))
        rollup = rollup_for({*by, *(f for f, v in filters if v is not None)})
        cond, args = _where(filters)
        if rollup is not None:
            source, columns, count = rollup.table, list(by), "SUM(n)"
        else:  # the day together with a site or a chapter: no rollup holds both
            source, count = "matches", "COUNT(*)"
            columns = ["substr(first_seen, 1, 10)" if f == "day" else f for f in by]
        rows = self._read(
            f"SELECT {', '.join(f'{c} AS g{i}' for i, c in enumerate(columns))}, {count} AS n, "
            f"MIN(first_seen) AS first_seen, MAX(last_seen) AS last_seen FROM {source} {cond} "
            f"GROUP BY {', '.join(columns)} ORDER BY n DESC, {', '.join(f'g{i}' for i in range(len(by)))}", args)
        return [{**{f: r[f"g{i}"] for i, f in enumerate(by)}, "matches": r["n"],
                 "first_seen": from_text(r["first_seen"]), "last_seen": from_text(r["last_seen"])} for r in rows]

    @_guarded
    def match_summary(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                      status: str | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, MATCH_GROUPS)
        status = statuses(status, MATCH_STATUSES)
        cond, args = _where((("work", work), ("site", site), ("status", status)))
        columns = ["substr(first_seen, 1, 10)" if f == "day" else f for f in by]
        rows = self._read(
            f"SELECT {', '.join(f'{c} AS g{i}' for i, c in enumerate(columns))}, COUNT(*) AS n, "
            "COUNT(DISTINCT page) AS pages, COUNT(DISTINCT chapter) AS chapters, MIN(first_seen) AS first_seen, "
            f"MAX(last_seen) AS last_seen FROM matches {cond} GROUP BY {', '.join(columns)} "
            f"ORDER BY n DESC, {', '.join(f'g{i}' for i in range(len(by)))}", args)
        return [{**{f: r[f"g{i}"] for i, f in enumerate(by)}, "matches": r["n"], "pages": r["pages"],
                 "chapters": r["chapters"], "first_seen": from_text(r["first_seen"]),
                 "last_seen": from_text(r["last_seen"])} for r in rows]

    @_guarded
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Setting the status it already has changes nothing (no second history entry).
        The entry's "at" is ISO-8601 text in UTC, so history stays plain JSON for every reader."""
        check_status(status, MATCH_STATUSES, "match status")
        row = self._set_status("matches", {"page": page, "chapter": chapter}, status, by)
        if row is None:
            raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
        return _match(row)
