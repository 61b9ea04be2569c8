"""SQLite: the evidence of pages. The records are a table; the bytes are files beside the
store's file, under FPT_HOME/evidence/<first 2 hex digits>/<sha256>.<suffix>, named by their
hash alone (a URL never becomes a path) and shared by the pages that have the same bytes (the
chapters of one page that holds a whole work). A file is written and removed inside the write
transaction that adds or removes its last record, so two processes never disagree on it."""
from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from datetime import datetime
from pathlib import Path

from ..evidence import SUFFIXES, Evidence, check_evidence
from ..records import NotFound, StoreError
from ..values import to_text
from .connection import SQLiteBase, _guarded, from_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS evidence (
    page TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    size INTEGER NOT NULL,
    fetched_at TEXT NOT NULL,
    truncated INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    gone_since TEXT,
    PRIMARY KEY (page, sha256)
);
CREATE INDEX IF NOT EXISTS evidence_sha256 ON evidence (sha256);
CREATE INDEX IF NOT EXISTS evidence_gone ON evidence (gone_since);
"""
FOLDER = "evidence"


def _evidence(r: sqlite3.Row) -> Evidence:
    return Evidence(page=r["page"], kind=r["kind"], data=b"", url=r["url"], fetched_at=from_text(r["fetched_at"]),
                    truncated=bool(r["truncated"]), sha256=r["sha256"], size=r["size"],
                    created_at=from_text(r["created_at"]),
                    gone_since=None if r["gone_since"] is None else from_text(r["gone_since"]))


class EvidenceSQL(SQLiteBase):
    """Evidence in SQLite, its bytes in files (in memory for a ":memory:" store)."""

    def _evidence_folder(self) -> Path | None:
        if self.path == ":memory:" or self.path.startswith("file::memory:"):
            return None
        return Path(self.path).resolve().parent / FOLDER

    def _evidence_file(self, sha256: str, kind: str) -> Path:
        from tracker.safe_names import inside

        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise NotFound(f"no evidence file {sha256!r}")  # only a hex digest names a file
        folder = self._evidence_folder()
        assert folder is not None
        return inside(folder, f"{sha256[:2]}/{sha256}{SUFFIXES[kind]}")

    def _memory_files(self) -> dict[str, bytes]:
        files = self.__dict__.get("_evidence_memory")
        if files is None:
            files = self.__dict__["_evidence_memory"] = {}
        return files

    def _write_file(self, sha256: str, kind: str, data: bytes) -> None:
        if self._evidence_folder() is None:
            self._memory_files()[sha256] = data
            return
        path = self._evidence_file(sha256, kind)
        if path.is_file() and path.stat().st_size == len(data):
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # never a half-written file under the final name
        except OSError as e:
            raise StoreError(f"cannot write the evidence file {path}: {e.strerror}; check that FPT_HOME has "
                             "space and is writable") from e

    def _remove_unused(self, c: sqlite3.Connection, rows: list[sqlite3.Row]) -> None:
        for r in rows:
            if c.execute("SELECT 1 FROM evidence WHERE sha256 = ? LIMIT 1", (r["sha256"],)).fetchone():
                continue  # another page has the same bytes
            if self._evidence_folder() is None:
                self._memory_files().pop(r["sha256"], None)
                continue
            try:
                self._evidence_file(r["sha256"], r["kind"]).unlink(missing_ok=True)
            except OSError as e:
                raise StoreError(f"cannot remove the evidence file of {r['sha256']}: {e.strerror}") from e

    @_guarded
    def put_evidence(self, evidence: Evidence) -> tuple[Evidence, bool]:
        check_evidence(evidence)
        data = bytes(evidence.data)
        h = hashlib.sha256(data).hexdigest()
        with self._write() as c:
            row = c.execute("SELECT * FROM evidence WHERE page = ? AND sha256 = ?", (evidence.page, h)).fetchone()
            new = row is None
            if new:
                c.execute("INSERT INTO evidence (page, sha256, kind, url, size, fetched_at, truncated, created_at, "
                          "gone_since) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                          (evidence.page, h, evidence.kind, evidence.url, len(data), to_text(evidence.fetched_at),
                           int(evidence.truncated), to_text(evidence.created_at)))
                row = c.execute("SELECT * FROM evidence WHERE page = ? AND sha256 = ?", (evidence.page, h)).fetchone()
            self._write_file(h, evidence.kind, data)  # also when the record was there and its file was lost
        return _evidence(row), new

    @_guarded
    def evidence(self, page: str) -> list[Evidence]:
        rows = self._read("SELECT * FROM evidence WHERE page = ? ORDER BY fetched_at, kind, sha256", (page,))
        return [_evidence(r) for r in rows]

    @_guarded
    def evidence_data(self, page: str, sha256: str) -> bytes:
        r = self._one("SELECT * FROM evidence WHERE page = ? AND sha256 = ?", (page, sha256),
                      f"no evidence {sha256!r} of the page {page!r}")
        if self._evidence_folder() is None:
            data = self._memory_files().get(sha256)
            where = "memory"
        else:
            path = self._evidence_file(sha256, r["kind"])
            where = str(path)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = None
            except OSError as e:
                raise StoreError(f"cannot read the evidence file {path}: {e.strerror}") from e
        if data is None:
            raise StoreError(f"the evidence file of {sha256} is missing from {where}: it was removed outside "
                             "fptrack; the record stays, the bytes are lost")
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"the evidence file {where} no longer has the SHA-256 recorded for it ({sha256}): "
                             "it was changed outside fptrack and cannot serve as evidence")
        return data

    @_guarded
    def delete_evidence(self, page: str) -> int:
        with self._write() as c:
            rows = c.execute("SELECT sha256, kind FROM evidence WHERE page = ?", (page,)).fetchall()
            c.execute("DELETE FROM evidence WHERE page = ?", (page,))
            self._remove_unused(c, rows)
        return len(rows)

    @_guarded
    def mark_evidence_gone(self, at: datetime) -> int:
        with self._write() as c:
            c.execute("UPDATE evidence SET gone_since = NULL WHERE gone_since IS NOT NULL "
                      "AND page IN (SELECT key FROM pages)")
            marked = c.execute("SELECT COUNT(DISTINCT page) FROM evidence WHERE gone_since IS NULL "
                               "AND page NOT IN (SELECT key FROM pages)").fetchone()[0]
            c.execute("UPDATE evidence SET gone_since = ? WHERE gone_since IS NULL "
                      "AND page NOT IN (SELECT key FROM pages)", (to_text(at),))
        return marked

    @_guarded
    def purge_evidence(self, gone_before: datetime) -> int:
        with self._write() as c:
            rows = c.execute("SELECT sha256, kind FROM evidence WHERE gone_since IS NOT NULL AND gone_since <= ?",
                             (to_text(gone_before),)).fetchall()
            c.execute("DELETE FROM evidence WHERE gone_since IS NOT NULL AND gone_since <= ?",
                      (to_text(gone_before),))
            self._remove_unused(c, rows)
        return len(rows)
