"""SQLite: watched sites with their rules, and what each crawl of them did."""
from __future__ import annotations

import sqlite3
from datetime import datetime

from ..records import CrawlRun, NotFound, Site
from ..values import check_window, clean_counts, to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS sites (
    name TEXT PRIMARY KEY,
    start_urls TEXT NOT NULL,
    rules TEXT NOT NULL,
    recrawl INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    hour INTEGER,
    every INTEGER NOT NULL DEFAULT 1,
    last_scheduled TEXT
);
CREATE TABLE IF NOT EXISTS crawl_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    site TEXT NOT NULL,
    job TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    counts TEXT NOT NULL,
    skipped TEXT NOT NULL,
    failed TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS crawl_runs_site ON crawl_runs (site, started_at DESC);
CREATE INDEX IF NOT EXISTS crawl_runs_started ON crawl_runs (started_at DESC);
"""
# The schedule, added since the first release: a site stored before it is crawled daily at FPT_RECRAWL_HOUR.
ADDED_COLUMNS = {"sites": (("hour", "INTEGER"), ("every", "INTEGER NOT NULL DEFAULT 1"), ("last_scheduled", "TEXT"))}


def _site(r: sqlite3.Row) -> Site:
    last = r["last_scheduled"]
    return Site(name=r["name"], start_urls=loads(r["start_urls"]), rules=loads(r["rules"]), recrawl=bool(r["recrawl"]),
                created_at=from_text(r["created_at"]), updated_at=from_text(r["updated_at"]), hour=r["hour"],
                every=r["every"], last_scheduled=from_text(last) if last else None)


def _crawl_run(r: sqlite3.Row) -> CrawlRun:
    return CrawlRun(site=r["site"], job=r["job"], started_at=from_text(r["started_at"]),
                    finished_at=from_text(r["finished_at"]), outcome=r["outcome"], counts=loads(r["counts"]),
                    skipped=loads(r["skipped"]), failed=loads(r["failed"]), id=r["id"])


class SitesSQL(SQLiteBase):
    """Sites and crawl runs in SQLite."""

    # ---- sites and crawls -----------------------------------------------------------

    @_guarded
    def upsert_site(self, site: Site) -> Site:
        with self._write() as c:
            c.execute("INSERT INTO sites (name, start_urls, rules, recrawl, created_at, updated_at, hour, every) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                      "start_urls = excluded.start_urls, rules = excluded.rules, recrawl = excluded.recrawl, "
                      "updated_at = excluded.updated_at, hour = excluded.hour, every = excluded.every",
                      (site.name, dumps(list(site.start_urls)), dumps(site.rules), int(bool(site.recrawl)),
                       to_text(site.created_at), to_text(site.updated_at), site.hour, site.every))
            return _site(c.execute("SELECT * FROM sites WHERE name = ?", (site.name,)).fetchone())

    @_guarded
    def claim_site_slot(self, name: str, slot: datetime) -> bool:
        with self._write() as c:
            return c.execute("UPDATE sites SET last_scheduled = ? WHERE name = ? AND "
                             "(last_scheduled IS NULL OR last_scheduled < ?)",
                             (to_text(slot), name, to_text(slot))).rowcount == 1

    @_guarded
    def get_site(self, name: str) -> Site:
        return _site(self._one("SELECT * FROM sites WHERE name = ?", (name,), f"no site {name!r}"))

    @_guarded
    def sites(self) -> list[Site]:
        return [_site(r) for r in self._read("SELECT * FROM sites ORDER BY name")]

    @_guarded
    def delete_site(self, name: str) -> None:
        with self._write() as c:
            if c.execute("DELETE FROM sites WHERE name = ?", (name,)).rowcount == 0:
                raise NotFound(f"no site {name!r}")

    @_guarded
    def add_crawl_run(self, run: CrawlRun) -> CrawlRun:
        with self._write() as c:
            cur = c.execute("INSERT INTO crawl_runs (site, job, started_at, finished_at, outcome, counts, skipped, "
                            "failed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (run.site, run.job, to_text(run.started_at), to_text(run.finished_at), run.outcome,
                             dumps(clean_counts(run.counts)), dumps(clean_counts(run.skipped)),
                             dumps(clean_counts(run.failed))))
            return _crawl_run(c.execute("SELECT * FROM crawl_runs WHERE id = ?", (cur.lastrowid,)).fetchone())

    @_guarded
    def crawl_runs(self, *, site: str | None = None, limit: int | None = 50) -> list[CrawlRun]:
        check_window(limit)
        cond, args = _where((("site", site),))
        rows = self._read(f"SELECT * FROM crawl_runs {cond} ORDER BY started_at DESC, id DESC LIMIT ?",
                          [*args, -1 if limit is None else limit])
        return [_crawl_run(r) for r in rows]
