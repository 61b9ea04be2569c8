"""SQLite: running totals of matches and pages, kept by triggers, so the reports never scan.

With a million matches, counting them by site or by work is a scan of the whole table
(a second or more); the admin asks for such totals on every dashboard, work report and
site list. Each rollup here is a small table keyed by a few of a row's fields (a match's
work, site, status, ...), holding how many rows have those values and the earliest and
latest of some timestamps. Triggers on the source table keep it exact in the same
transaction as every insert, update and delete, whichever code path makes them.

Counts are exact under any change. An earliest/latest value can only widen on insert;
when the row that held it is deleted or moves to another group, the trigger reads the
group's rows again through an index (its key columns lead the index) to find the new one.

A rollup created in an existing store is filled from its source table once, when the
store is opened, in the same transaction that creates its triggers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..totals import RETIRED_TOTALS


@dataclass(frozen=True)
class Rollup:
    table: str
    source: str
    #: (column, expression over a source row, where "{r}" stands for OLD or NEW)
    keys: tuple[tuple[str, str], ...]
    #: (column, "MIN" or "MAX", the source column it summarises)
    edges: tuple[tuple[str, str, str], ...]
    #: how the group's source rows are found again, "{r}" as above (index-friendly)
    rows_of_group: str

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.keys)

    def ddl(self) -> str:
        cols = ", ".join(f"{c} TEXT NOT NULL" for c in self.key_columns)
        edges = ", ".join(f"{c} TEXT NOT NULL" for c, _, _ in self.edges)
        return (f"CREATE TABLE IF NOT EXISTS {self.table} ({cols}, n INTEGER NOT NULL, {edges}, "
                f"PRIMARY KEY ({', '.join(self.key_columns)})) WITHOUT ROWID")

    def fill(self) -> str:
        exprs = ", ".join(e.format(r=self.source) for _, e in self.keys)
        edges = ", ".join(f"{agg}({src})" for _, agg, src in self.edges)
        return (f"INSERT INTO {self.table} ({', '.join(self.key_columns)}, n, "
                f"{', '.join(c for c, _, _ in self.edges)}) SELECT {exprs}, COUNT(*), {edges} FROM {self.source} "
                f"GROUP BY {', '.join(str(i + 1) for i in range(len(self.keys)))}")

    def _group(self, r: str) -> str:
        return " AND ".join(f"{c} = {e.format(r=r)}" for c, e in self.keys)

    def _add(self) -> str:
        cols = [*self.key_columns, "n", *(c for c, _, _ in self.edges)]
        values = [*(e.format(r="NEW") for _, e in self.keys), "1", *(f"NEW.{src}" for _, _, src in self.edges)]
        widen = ", ".join(f"{c} = {agg}({c}, excluded.{c})" for c, agg, _ in self.edges)
        return (f"INSERT INTO {self.table} ({', '.join(cols)}) VALUES ({', '.join(values)}) "
                f"ON CONFLICT ({', '.join(self.key_columns)}) DO UPDATE SET n = n + 1, {widen};")

    def _again(self, r: str) -> str:
        """SET clause reading a group's earliest/latest values again from its rows."""
        return ", ".join(f"{c} = (SELECT {agg}({src}) FROM {self.source} WHERE {self.rows_of_group.format(r=r)})"
                         for c, agg, src in self.edges)

    def _remove(self) -> str:
        group = self._group("OLD")
        held = " OR ".join(f"{c} = OLD.{src}" for c, _, src in self.edges)
        return (f"UPDATE {self.table} SET n = n - 1 WHERE {group};"
                f"DELETE FROM {self.table} WHERE {group} AND n <= 0;"
                f"UPDATE {self.table} SET {self._again('OLD')} WHERE {group} AND ({held});")

    def _widen(self) -> str:
        """A row that stays in its group: its edges only widen the group's, unless the row held
        an edge and moved inwards (then the group's rows are read again)."""
        group = self._group("NEW")
        widen = ", ".join(f"{c} = {agg}({c}, NEW.{src})" for c, agg, src in self.edges)
        inwards = " OR ".join(f"({c} = OLD.{src} AND NEW.{src} {'>' if agg == 'MIN' else '<'} OLD.{src})"
                              for c, agg, src in self.edges)
        return (f"UPDATE {self.table} SET {self._again('NEW')} WHERE {group} AND ({inwards});"
                f"UPDATE {self.table} SET {widen} WHERE {group};")

    def triggers(self) -> list[str]:
        keys = sorted({c for _, e in self.keys for c in re.findall(r"\{r\}\.(\w+)", e)})
        moved = " OR ".join(f"{e.format(r='OLD')} IS NOT {e.format(r='NEW')}" for _, e in self.keys)
        edges = sorted({src for _, _, src in self.edges})
        name, src = self.table, self.source
        return [
            f"CREATE TRIGGER IF NOT EXISTS {name}_insert AFTER INSERT ON {src} BEGIN {self._add()} END",
            f"CREATE TRIGGER IF NOT EXISTS {name}_delete AFTER DELETE ON {src} BEGIN {self._remove()} END",
            f"CREATE TRIGGER IF NOT EXISTS {name}_move AFTER UPDATE OF {', '.join(keys)} ON {src} "
            f"WHEN {moved} BEGIN {self._remove()} {self._add()} END",
            f"CREATE TRIGGER IF NOT EXISTS {name}_widen AFTER UPDATE OF {', '.join(edges)} ON {src} "
            f"WHEN NOT ({moved}) AND ({' OR '.join(f'OLD.{c} IS NOT NEW.{c}' for c in edges)}) "
            f"BEGIN {self._widen()} END",
        ]


_MATCH_GROUP = "work = {r}.work AND chapter = {r}.chapter AND site = {r}.site AND status = {r}.status"
_MATCH_EDGES = (("first_seen", "MIN", "first_seen"), ("last_seen", "MAX", "last_seen"))

#: Matches by work, site and status: the works and sites lists, a site's owners (small: works x sites x 3).
MATCH_SITES = Rollup(
    "match_sites", "matches",
    (("work", "{r}.work"), ("site", "{r}.site"), ("status", "{r}.status")), _MATCH_EDGES,
    "site = {r}.site AND work = {r}.work AND status = {r}.status")
#: Matches by work, chapter, site, status and verdict: a work's chapter-by-site matrix, a site's
#: chapters, and how much of each chapter is copied (in full, in part, an excerpt).
MATCH_VERDICTS = Rollup(
    "match_verdicts", "matches",
    (("work", "{r}.work"), ("chapter", "{r}.chapter"), ("site", "{r}.site"), ("status", "{r}.status"),
     ("verdict", "{r}.verdict")),
    _MATCH_EDGES, "chapter = {r}.chapter AND site = {r}.site AND status = {r}.status AND work = {r}.work "
    "AND verdict = {r}.verdict")
#: Matches by the day they were first seen, work and status: the dashboard's chart, the totals.
MATCH_DAYS = Rollup(
    "match_days", "matches",
    (("day", "substr({r}.first_seen, 1, 10)"), ("work", "{r}.work"), ("status", "{r}.status")), _MATCH_EDGES,
    "work = {r}.work AND status = {r}.status AND first_seen >= substr({r}.first_seen, 1, 10) "
    "AND first_seen < substr({r}.first_seen, 1, 10) || '~'")
#: Pages by site and status, with the latest fetch.
PAGE_GROUPS = Rollup(
    "page_groups", "pages", (("site", "{r}.site"), ("status", "{r}.status")),
    (("last_fetched", "MAX", "fetched_at"),), "site = {r}.site AND status = {r}.status")

MATCH_ROLLUPS = (MATCH_SITES, MATCH_VERDICTS, MATCH_DAYS)
ROLLUPS = (*MATCH_ROLLUPS, PAGE_GROUPS)


def retire(table: str) -> str:
    """Statements dropping a rollup of an earlier version with its triggers (its writes cost, its rows lie)."""
    return "".join(f"DROP TRIGGER IF EXISTS {table}_{t};\n" for t in ("insert", "delete", "move", "widen")
                   ) + f"DROP TABLE IF EXISTS {table};\n"


SCHEMA = "".join(retire(t) for t in RETIRED_TOTALS) + "".join(f"{r.ddl()};\n" for r in ROLLUPS)
TRIGGERS = tuple(t for r in ROLLUPS for t in r.triggers())
FILLS = {r.table: r.fill() for r in ROLLUPS}
