"""SQLite: texts judged before, by exact key, and the saved Bloom filter over their keys."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ..seen_texts import SeenText, check_seen_text
from ..values import to_text
from .connection import SQLiteBase, _guarded, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS seen_texts (
    key TEXT PRIMARY KEY,
    page TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    judged_under TEXT NOT NULL,
    matches TEXT NOT NULL,
    judged_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seen_filter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    data BLOB NOT NULL,
    keys INTEGER NOT NULL
);
"""
KEYS_PAGE = 10_000


def _seen(r: sqlite3.Row) -> SeenText:
    return SeenText(key=r["key"], page=r["page"], content_hash=r["content_hash"], judged_under=r["judged_under"],
                    matches=loads(r["matches"]), judged_at=from_text(r["judged_at"]))


class SeenTextsSQL(SQLiteBase):
    """Seen texts in SQLite."""

    @_guarded
    def put_seen_text(self, seen: SeenText) -> None:
        check_seen_text(seen)
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO seen_texts (key, page, content_hash, judged_under, matches, judged_at) "
                      "VALUES (?, ?, ?, ?, ?, ?)", (seen.key, seen.page, seen.content_hash, seen.judged_under,
                                                    dumps(seen.matches), to_text(seen.judged_at)))

    @_guarded
    def get_seen_text(self, key: str) -> SeenText:
        return _seen(self._one("SELECT * FROM seen_texts WHERE key = ?", (key,), f"no seen text {key!r}"))

    def seen_text_keys(self) -> Iterator[str]:
        """A page of KEYS_PAGE keys per query, each after the last one read (no statement stays open)."""
        last = ""
        while True:
            try:
                rows = self._read("SELECT key FROM seen_texts WHERE key > ? ORDER BY key LIMIT ?", (last, KEYS_PAGE))
            except sqlite3.Error as e:
                raise self._error(e) from e
            yield from (r[0] for r in rows)
            if len(rows) < KEYS_PAGE:
                return
            last = rows[-1][0]

    @_guarded
    def count_seen_texts(self) -> int:
        return self._read("SELECT COUNT(*) FROM seen_texts")[0][0]

    @_guarded
    def put_seen_filter(self, data: bytes, keys: int) -> None:
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO seen_filter (id, data, keys) VALUES (1, ?, ?)", (bytes(data), int(keys)))

    @_guarded
    def seen_filter(self) -> tuple[bytes, int]:
        r = self._one("SELECT data, keys FROM seen_filter WHERE id = 1", (), "no saved filter of seen texts")
        return bytes(r["data"]), int(r["keys"])
