"""SQLite: discovery runs, their queries, and the URLs searches returned."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun, check_query, check_run
from ..records import NotFound
from ..values import check_window, clean_counts, to_text
from .connection import BATCH, SQLiteBase, _guarded, _where, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS discovery_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    provider TEXT NOT NULL,
    outcome TEXT NOT NULL,
    work TEXT NOT NULL,
    counts TEXT NOT NULL,
    sites_added TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS discovery_runs_started ON discovery_runs (started_at DESC);
CREATE TABLE IF NOT EXISTS discovery_queries (
    run INTEGER NOT NULL,
    n INTEGER NOT NULL,
    work TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    returned INTEGER NOT NULL,
    new INTEGER NOT NULL,
    stored INTEGER NOT NULL,
    matches INTEGER NOT NULL,
    sites TEXT NOT NULL,
    error TEXT NOT NULL,
    PRIMARY KEY (run, n)
);
CREATE TABLE IF NOT EXISTS discovered_urls (
    url TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    work TEXT NOT NULL,
    run INTEGER NOT NULL,
    query TEXT NOT NULL,
    first_seen TEXT NOT NULL
);
"""


def _run(r: sqlite3.Row) -> DiscoveryRun:
    return DiscoveryRun(id=r["id"], started_at=from_text(r["started_at"]), finished_at=from_text(r["finished_at"]),
                        provider=r["provider"], outcome=r["outcome"], work=r["work"], counts=loads(r["counts"]),
                        sites_added=loads(r["sites_added"]))


def _query(r: sqlite3.Row) -> DiscoveryQuery:
    return DiscoveryQuery(run=r["run"], n=r["n"], work=r["work"], kind=r["kind"], text=r["text"],
                          returned=r["returned"], new=r["new"], stored=r["stored"], matches=r["matches"],
                          sites=loads(r["sites"]), error=r["error"])


class DiscoverySQL(SQLiteBase):
    """Discovery records in SQLite."""

    @_guarded
    def add_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        check_run(run)
        with self._write() as c:
            cur = c.execute("INSERT INTO discovery_runs (started_at, finished_at, provider, outcome, work, counts, "
                            "sites_added) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (to_text(run.started_at), to_text(run.finished_at), run.provider, run.outcome, run.work,
                             dumps(clean_counts(run.counts)), dumps(list(run.sites_added))))
            return _run(c.execute("SELECT * FROM discovery_runs WHERE id = ?", (cur.lastrowid,)).fetchone())

    @_guarded
    def update_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        check_run(run)
        with self._write() as c:
            cur = c.execute("UPDATE discovery_runs SET finished_at = ?, outcome = ?, counts = ?, sites_added = ? "
                            "WHERE id = ?", (to_text(run.finished_at), run.outcome, dumps(clean_counts(run.counts)),
                                             dumps(list(run.sites_added)), run.id))
            if cur.rowcount == 0:
                raise NotFound(f"no discovery run {run.id}")
            return _run(c.execute("SELECT * FROM discovery_runs WHERE id = ?", (run.id,)).fetchone())

    @_guarded
    def get_discovery_run(self, run_id: int) -> DiscoveryRun:
        return _run(self._one("SELECT * FROM discovery_runs WHERE id = ?", (run_id,), f"no discovery run {run_id}"))

    @_guarded
    def discovery_runs(self, *, work: str | None = None, limit: int | None = 50) -> list[DiscoveryRun]:
        check_window(limit)
        cond, args = _where((("work", work),))
        rows = self._read(f"SELECT * FROM discovery_runs {cond} ORDER BY started_at DESC, id DESC LIMIT ?",
                          [*args, -1 if limit is None else limit])
        return [_run(r) for r in rows]

    @_guarded
    def put_discovery_query(self, query: DiscoveryQuery) -> DiscoveryQuery:
        check_query(query)
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO discovery_queries (run, n, work, kind, text, returned, new, stored, "
                      "matches, sites, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (query.run, query.n, query.work, query.kind, query.text, int(query.returned), int(query.new),
                       int(query.stored), int(query.matches), dumps(list(query.sites)), query.error))
            return _query(c.execute("SELECT * FROM discovery_queries WHERE run = ? AND n = ?",
                                    (query.run, query.n)).fetchone())

    @_guarded
    def discovery_queries(self, run_id: int) -> list[DiscoveryQuery]:
        return [_query(r) for r in self._read("SELECT * FROM discovery_queries WHERE run = ? ORDER BY n", (run_id,))]

    @_guarded
    def add_discovered_urls(self, urls: Sequence[DiscoveredUrl]) -> list[str]:
        new = []
        with self._write() as c:
            for u in urls:
                cur = c.execute("INSERT INTO discovered_urls (url, site, work, run, query, first_seen) "
                                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING",
                                (u.url, u.site, u.work, u.run, u.query, to_text(u.first_seen)))
                if cur.rowcount:
                    new.append(u.url)
        return new

    @_guarded
    def seen_urls(self, urls: Sequence[str]) -> set[str]:
        urls = list(dict.fromkeys(urls))
        found: set[str] = set()
        for i in range(0, len(urls), BATCH):
            part = urls[i:i + BATCH]
            rows = self._read(f"SELECT url FROM discovered_urls WHERE url IN ({','.join('?' * len(part))})", part)
            found.update(r["url"] for r in rows)
        return found
