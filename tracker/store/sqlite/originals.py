"""SQLite: works, their chapters, and the chapters' fingerprints."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ..records import Chapter, FingerprintRecord, NotFound, Work, content_hash
from ..values import to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads
from .rollups import MATCH_ROLLUPS

SCHEMA = """
CREATE TABLE IF NOT EXISTS works (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chapters (
    doc INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    work TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    number INTEGER,
    content_hash TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chapters_order ON chapters (work, number, key);
CREATE INDEX IF NOT EXISTS chapters_updated ON chapters (updated_at);
CREATE TABLE IF NOT EXISTS fingerprints (
    chapter TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (chapter, params_hash)
);
CREATE INDEX IF NOT EXISTS fingerprints_params ON fingerprints (params_hash, chapter);
"""


# ---- rows -> records ---------------------------------------------------------

def _work(r: sqlite3.Row) -> Work:
    return Work(id=r["id"], title=r["title"], author=r["author"], created_at=from_text(r["created_at"]))


def _chapter(r: sqlite3.Row) -> Chapter:
    return Chapter(key=r["key"], work=r["work"], title=r["title"], text=r["text"], number=r["number"],
                   content_hash=r["content_hash"], doc=r["doc"], updated_at=from_text(r["updated_at"]))


def _fingerprint(r: sqlite3.Row) -> FingerprintRecord:
    return FingerprintRecord(chapter=r["chapter"], params_hash=r["params_hash"], params=loads(r["params"]),
                             data=bytes(r["data"]), created_at=from_text(r["created_at"]))


class OriginalsSQL(SQLiteBase):
    """Works, chapters and fingerprints in SQLite."""

    # ---- works -----------------------------------------------------------------

    @_guarded
    def upsert_work(self, work: Work) -> Work:
        with self._write() as c:
            c.execute("INSERT INTO works (id, title, author, created_at) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (id) DO UPDATE SET title = excluded.title, author = excluded.author",
                      (work.id, work.title, work.author, to_text(work.created_at)))
            return _work(c.execute("SELECT * FROM works WHERE id = ?", (work.id,)).fetchone())

    @_guarded
    def get_work(self, work_id: str) -> Work:
        return _work(self._one("SELECT * FROM works WHERE id = ?", (work_id,), f"no work {work_id!r}"))

    @_guarded
    def works(self) -> list[Work]:
        return [_work(r) for r in self._read("SELECT * FROM works ORDER BY id")]

    # ---- chapters ----------------------------------------------------------------

    @_guarded
    def upsert_chapter(self, chapter: Chapter) -> tuple[Chapter, bool]:
        """`updated_at` (the given one) is stored when the text, title, number or work changed."""
        h = content_hash(chapter.text)
        number = None if chapter.number is None else int(chapter.number)
        with self._write() as c:
            old = c.execute("SELECT work, title, number, content_hash FROM chapters WHERE key = ?",
                            (chapter.key,)).fetchone()
            changed = old is None or old["content_hash"] != h
            if old is None:
                c.execute("INSERT INTO chapters (key, work, title, text, number, content_hash, updated_at) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (chapter.key, chapter.work, chapter.title, chapter.text, number, h,
                           to_text(chapter.updated_at)))
            elif changed or tuple(old)[:3] != (chapter.work, chapter.title, number):
                c.execute("UPDATE chapters SET work = ?, title = ?, text = ?, number = ?, content_hash = ?, "
                          "updated_at = ? WHERE key = ?",
                          (chapter.work, chapter.title, chapter.text, number, h, to_text(chapter.updated_at),
                           chapter.key))
            row = c.execute("SELECT * FROM chapters WHERE key = ?", (chapter.key,)).fetchone()
        return _chapter(row), changed

    @_guarded
    def get_chapter(self, key: str) -> Chapter:
        return _chapter(self._one("SELECT * FROM chapters WHERE key = ?", (key,), f"no chapter {key!r}"))

    @_guarded
    def chapter_by_doc(self, doc: int) -> Chapter:
        return _chapter(self._one("SELECT * FROM chapters WHERE doc = ?", (int(doc),), f"no chapter with doc {doc}"))

    def chapters(self, work: str | None = None) -> Iterator[Chapter]:
        where, args = ("WHERE work = ?", [work]) if work is not None else ("", [])
        return self._iter(f"SELECT key FROM chapters {where} ORDER BY work, number, key", args,
                          "SELECT * FROM chapters WHERE key IN", [], lambda r: r["key"], _chapter)

    @_guarded
    def chapter_headers(self, work: str | None = None) -> list[Chapter]:
        cond, args = _where((("work", work),))
        rows = self._read(f"SELECT doc, key, work, title, '' AS text, number, content_hash, updated_at FROM chapters "
                          f"{cond} ORDER BY work, number, key", args)
        return [_chapter(r) for r in rows]

    @_guarded
    def count_chapters(self, work: str | None = None) -> int:
        cond, args = _where((("work", work),))
        return self._read(f"SELECT COUNT(*) FROM chapters {cond}", args)[0][0]

    @_guarded
    def catalog_stamp(self) -> tuple[int, str]:
        n, latest = self._read("SELECT COUNT(*), MAX(updated_at) FROM chapters")[0]
        return n, latest or ""

    @_guarded
    def delete_chapter(self, key: str) -> None:
        with self._write() as c:
            c.execute("DELETE FROM fingerprints WHERE chapter = ?", (key,))
            c.execute("DELETE FROM chapters WHERE key = ?", (key,))

    @_guarded
    def delete_work(self, work_id: str) -> list[int]:
        with self._write() as c:
            if c.execute("SELECT 1 FROM works WHERE id = ?", (work_id,)).fetchone() is None:
                raise NotFound(f"no work {work_id!r}")
            docs = [r[0] for r in c.execute("SELECT doc FROM chapters WHERE work = ? ORDER BY doc", (work_id,))]
            c.execute("DELETE FROM fingerprints WHERE chapter IN (SELECT key FROM chapters WHERE work = ?)",
                      (work_id,))
            for rollup in MATCH_ROLLUPS:  # first, so the triggers of the deletes below find nothing to do
                c.execute(f"DELETE FROM {rollup.table} WHERE work = ?", (work_id,))
            c.execute("DELETE FROM matches WHERE work = ?", (work_id,))
            c.execute("DELETE FROM image_matches WHERE work = ?", (work_id,))
            c.execute("DELETE FROM work_images WHERE work = ?", (work_id,))
            c.execute("DELETE FROM chapters WHERE work = ?", (work_id,))
            c.execute("DELETE FROM works WHERE id = ?", (work_id,))
        return docs

    # ---- fingerprints --------------------------------------------------------------

    @_guarded
    def put_fingerprint(self, record: FingerprintRecord) -> None:
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO fingerprints (chapter, params_hash, params, data, created_at) "
                      "VALUES (?, ?, ?, ?, ?)",
                      (record.chapter, record.params_hash, dumps(record.params), bytes(record.data),
                       to_text(record.created_at)))

    def fingerprints(self, params_hash: str) -> Iterator[FingerprintRecord]:
        """By chapter key."""
        return self._iter("SELECT chapter FROM fingerprints WHERE params_hash = ? ORDER BY chapter", [params_hash],
                          "SELECT * FROM fingerprints WHERE params_hash = ? AND chapter IN", [params_hash],
                          lambda r: r["chapter"], _fingerprint)
