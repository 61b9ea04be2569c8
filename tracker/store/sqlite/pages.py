"""SQLite: crawled and ingested pages, with their status and HTTP validators."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from ..records import PAGE_GROUPS, PAGE_STATUSES, NotFound, Page, PageScope, content_hash, now
from ..values import check_groups, check_status, check_window, to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    url TEXT NOT NULL,
    site TEXT NOT NULL,
    fetched_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    meta TEXT NOT NULL,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS pages_updated ON pages (updated_at, key);
CREATE INDEX IF NOT EXISTS pages_status ON pages (status, updated_at, key);
CREATE INDEX IF NOT EXISTS pages_site ON pages (site, updated_at, key);
CREATE INDEX IF NOT EXISTS pages_site_status ON pages (site, status, fetched_at);
CREATE INDEX IF NOT EXISTS pages_fetched ON pages (fetched_at DESC, key);
"""
# Columns added since the store's first release: a store made before them gets them, empty.
ADDED_COLUMNS = {"pages": (("etag", "TEXT NOT NULL DEFAULT ''"), ("last_modified", "TEXT NOT NULL DEFAULT ''"))}


def _page(r: sqlite3.Row) -> Page:
    return Page(key=r["key"], text=r["text"], url=r["url"], site=r["site"], fetched_at=from_text(r["fetched_at"]),
                content_hash=r["content_hash"], status=r["status"], reason=r["reason"], attempts=r["attempts"],
                updated_at=from_text(r["updated_at"]), meta=loads(r["meta"]), etag=r["etag"] or "",
                last_modified=r["last_modified"] or "")


class PagesSQL(SQLiteBase):
    """Pages in SQLite."""

    # ---- pages -------------------------------------------------------------------

    @_guarded
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """New or changed text: stored with status "queued", no reason, 0 attempts and the given
        `updated_at`. Same text: url, site, fetched_at and meta are updated; status, reason,
        attempts and updated_at are kept."""
        h = content_hash(page.text)
        with self._write() as c:
            old = c.execute("SELECT content_hash FROM pages WHERE key = ?", (page.key,)).fetchone()
            changed = old is None or old["content_hash"] != h
            if changed:
                c.execute("INSERT INTO pages (key, text, url, site, fetched_at, content_hash, status, reason, "
                          "attempts, updated_at, meta, etag, last_modified) "
                          "VALUES (?, ?, ?, ?, ?, ?, 'queued', '', 0, ?, ?, ?, ?) "
                          "ON CONFLICT (key) DO UPDATE SET text = excluded.text, url = excluded.url, "
                          "site = excluded.site, fetched_at = excluded.fetched_at, "
                          "content_hash = excluded.content_hash, status = 'queued', reason = '', attempts = 0, "
                          "updated_at = excluded.updated_at, meta = excluded.meta, etag = excluded.etag, "
                          "last_modified = excluded.last_modified",
                          (page.key, page.text, page.url, page.site, to_text(page.fetched_at), h,
                           to_text(page.updated_at), dumps(page.meta), page.etag, page.last_modified))
            else:
                c.execute("UPDATE pages SET url = ?, site = ?, fetched_at = ?, meta = ?, etag = ?, last_modified = ? "
                          "WHERE key = ?", (page.url, page.site, to_text(page.fetched_at), dumps(page.meta),
                                            page.etag, page.last_modified, page.key))
            row = c.execute("SELECT * FROM pages WHERE key = ?", (page.key,)).fetchone()
        return _page(row), changed

    @_guarded
    def get_page(self, key: str) -> Page:
        return _page(self._one("SELECT * FROM pages WHERE key = ?", (key,), f"no page {key!r}"))

    @_guarded
    def page_validators(self, key: str, made_by: str | None = None) -> tuple[str, str]:
        rows = self._read("SELECT etag, last_modified, meta FROM pages WHERE key = ?", (key,))
        if not rows or (made_by is not None and loads(rows[0]["meta"]).get("made_by") != made_by):
            return "", ""
        return rows[0]["etag"], rows[0]["last_modified"]

    def pages(self, *, status: str | None = None, site: str | None = None,
              limit: int | None = None) -> Iterator[Page]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        check_window(limit)
        where, args = [], []
        for column, value in (("status", status), ("site", site)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        cond = " AND ".join(where)
        keys_sql = (f"SELECT key FROM pages {'WHERE ' + cond if cond else ''} ORDER BY updated_at, key "
                    f"LIMIT {-1 if limit is None else int(limit)}")
        rows_sql = f"SELECT * FROM pages WHERE {cond + ' AND ' if cond else ''}key IN"
        return self._iter(keys_sql, args, rows_sql, args, lambda r: r["key"], _page)

    @_guarded
    def delete_page(self, key: str) -> bool:
        with self._write() as c:
            if c.execute("SELECT 1 FROM matches WHERE page = ? AND status != 'new' LIMIT 1", (key,)).fetchone():
                return False
            c.execute("DELETE FROM matches WHERE page = ?", (key,))
            return c.execute("DELETE FROM pages WHERE key = ?", (key,)).rowcount > 0

    @_guarded
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        check_status(status, PAGE_STATUSES, "page status")
        with self._write() as c:
            cur = c.execute("UPDATE pages SET status = ?, reason = ?, attempts = attempts + 1, updated_at = ? "
                            "WHERE key = ?", (status, reason, to_text(now()), key))
            if cur.rowcount == 0:
                raise NotFound(f"no page {key!r}")

    @staticmethod
    def _page_filter(status: str | None, site: str | None, url_contains: str | None,
                     seen_by: PageScope | None = None) -> tuple[str, list[Any]]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        cond, args = _where((("status", status), ("site", site)))
        if url_contains:
            like = url_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            cond = f"{cond + ' AND' if cond else 'WHERE'} url LIKE ? ESCAPE '\\'"
            args.append(f"%{like}%")
        if seen_by is not None:
            seen, seen_args = _seen(seen_by)
            cond = f"{cond + ' AND' if cond else 'WHERE'} {seen}"
            args.extend(seen_args)
        return cond, args

    @_guarded
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0, seen_by: PageScope | None = None) -> list[Page]:
        check_window(limit, offset)
        cond, args = self._page_filter(status, site, url_contains, seen_by)
        rows = self._read(f"SELECT * FROM pages {cond} ORDER BY fetched_at DESC, key LIMIT ? OFFSET ?",
                          [*args, -1 if limit is None else limit, offset])
        return [_page(r) for r in rows]

    @_guarded
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None, seen_by: PageScope | None = None) -> int:
        cond, args = self._page_filter(status, site, url_contains, seen_by)
        return self._read(f"SELECT COUNT(*) FROM pages {cond}", args)[0][0]

    @_guarded
    def page_summary(self, by: Sequence[str], *, seen_by: PageScope | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, PAGE_GROUPS)
        cols = ", ".join(by)
        if seen_by is None:
            # from the running totals (tracker/store/sqlite/rollups.py): no scan of the pages
            rows = self._read(f"SELECT {cols}, SUM(n) AS n, MAX(last_fetched) AS last FROM page_groups "
                              f"GROUP BY {cols} ORDER BY n DESC, {cols}")
            return [{**{f: r[f] for f in by}, "pages": r["n"], "last_fetched": from_text(r["last"])} for r in rows]
        # An organisation's: its own sites from the running totals, the pages its matches found
        # elsewhere counted (few: those of its works' copies on sites it does not crawl).
        sites, works = seen_by
        groups: dict[tuple, dict[str, Any]] = {}
        if sites:
            marks = ",".join("?" * len(sites))
            own = self._read(f"SELECT {cols}, SUM(n) AS n, MAX(last_fetched) AS last FROM page_groups "
                             f"WHERE site IN ({marks}) GROUP BY {cols}", list(sites))
            for r in own:
                _add_group(groups, by, r, r["n"], r["last"])
        if works:
            marks = ",".join("?" * len(works))
            found = self._read(
                f"SELECT {cols}, COUNT(*) AS n, MAX(fetched_at) AS last FROM pages "
                f"WHERE site NOT IN ({','.join('?' * len(sites))}) AND EXISTS (SELECT 1 FROM matches m "
                f"WHERE m.page = pages.key AND m.work IN ({marks})) GROUP BY {cols}", [*sites, *works])
            for r in found:
                _add_group(groups, by, r, r["n"], r["last"])
        out = [{**g, "last_fetched": from_text(g["last_fetched"]) if g["last_fetched"] else None}
               for g in groups.values()]
        out.sort(key=lambda g: (-g["pages"], *(str(g[f]) for f in by)))
        return out


def _seen(seen_by: PageScope) -> tuple[str, list[Any]]:
    """The condition of find_pages' `seen_by`: a page of these sites, or one a match ties to these works."""
    sites, works = list(seen_by[0]), list(seen_by[1])
    parts = []
    if sites:
        parts.append(f"site IN ({','.join('?' * len(sites))})")
    if works:
        parts.append(f"EXISTS (SELECT 1 FROM matches m WHERE m.page = pages.key AND m.work IN "
                     f"({','.join('?' * len(works))}))")
    return (f"({' OR '.join(parts)})" if parts else "0"), [*sites, *works]


def _add_group(groups: dict[tuple, dict[str, Any]], by: Sequence[str], row: Any, n: int, last: str | None) -> None:
    g = groups.setdefault(tuple(row[f] for f in by), {**{f: row[f] for f in by}, "pages": 0, "last_fetched": None})
    g["pages"] += n
    if last and (g["last_fetched"] is None or last > g["last_fetched"]):
        g["last_fetched"] = last
