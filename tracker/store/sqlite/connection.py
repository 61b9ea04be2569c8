"""The embedded store's connection: one SQLite file, no server to run.

A worker process and the `fptrack` command often use the same file at once, so:
WAL lets readers go on while one process writes; `busy_timeout` makes a second
writer wait for the lock instead of failing with "database is locked"; every
write, and every read-modify-write (upsert_match, set_match_status, ...), runs
inside `BEGIN IMMEDIATE`, which takes the write lock before reading, so two
processes can never interleave between the read and the write.

Iterators never keep a statement open between items (an open statement pins an
old snapshot of the file, and a later write from that snapshot fails at once
with SQLITE_BUSY): they read the ordered keys first, then the records in batches.

Datetimes are kept as ISO strings in UTC to the millisecond (fixed width, so
they sort as text), dicts and lists as JSON. Each concern's module (originals,
pages, matches, sites, accounts) holds its tables and the methods on them;
`SQLiteBase` here holds what they share.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from ..records import BadRecord, NotFound, StoreError, now
from ..values import to_text

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000
BATCH = 500  # records fetched per query by the iterators (well under SQLite's 32766 parameters)

T = TypeVar("T")


# ---- values ---------------------------------------------------------------

def from_text(s: str) -> datetime:
    return datetime.fromisoformat(s)


def _json_default(o: Any) -> Any:
    if isinstance(o, datetime):
        return {"$datetime": to_text(o)}
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    raise TypeError(f"cannot store a {type(o).__name__} in a JSON column; use str, int, float, bool, "
                    "list, dict or datetime")


def _json_hook(d: dict[str, Any]) -> Any:
    if len(d) == 1 and "$datetime" in d:
        return from_text(d["$datetime"])
    return d


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def loads(text: str) -> Any:
    return json.loads(text, object_hook=_json_hook)


def _where(filters: Sequence[tuple[str, Any]]) -> tuple[str, list[Any]]:
    """("WHERE a = ? AND b IN (?, ?)", [values]) for the filters that are not None (a list: any of)."""
    parts, args = [], []
    for column, value in filters:
        if isinstance(value, list):
            parts.append(f"{column} IN ({','.join('?' * len(value))})")
            args.extend(value)
        elif value is not None:
            parts.append(f"{column} = ?")
            args.append(value)
    return (f"WHERE {' AND '.join(parts)}" if parts else ""), args


def _guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn sqlite3 errors into StoreError with what to do about them."""
    @wraps(fn)
    def wrapper(self: SQLiteBase, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise self._error(e) from e
        except UnicodeEncodeError as e:  # sqlite3 encodes every str as UTF-8: a lone surrogate fails
            raise BadRecord(f"SQLite cannot store this record: its text holds {e.object[e.start:e.end]!a}, "
                            "which is not a character (replace it with U+FFFD)") from e
    return wrapper


class SQLiteBase:
    """Connections, transactions and schema creation. A concern adds its tables in
    SCHEMA (statements separated by ";") and columns added after its release in
    ADDED_COLUMNS ({table: ((column, declaration), ...)})."""

    SCHEMA = ""
    ADDED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {}
    #: CREATE TRIGGER statements (whole: their bodies hold ";"), run after SCHEMA
    TRIGGERS: tuple[str, ...] = ()
    #: {table: INSERT ... SELECT}: tables derived from others, filled when the store first has them
    FILLS: dict[str, str] = {}

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._lock = threading.RLock()
        # Reads go through one connection per thread, so the admin's threads read side by side
        # (WAL lets readers run during a write); writes share one connection and the lock.
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._closed = False
        try:
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                         check_same_thread=False)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the SQLite store at {self.path}: {e}; check that the folder exists "
                             "and is writable, or set FPT_HOME to another folder") from e
        try:
            self._conn.row_factory = sqlite3.Row
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._set_wal()
            self._conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: a crash loses no committed data
            self._create_schema()
        except sqlite3.Error as e:
            self._conn.close()
            raise StoreError(f"cannot open the SQLite store at {self.path}: {e}; check that it is an fptrack "
                             "store (not another file) and that its folder is writable") from e
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # ---- plumbing ------------------------------------------------------------

    def _set_wal(self) -> None:
        # Switching to WAL needs a moment alone with the file; a process opening it at the
        # same moment can get SQLITE_BUSY without the busy handler, so retry briefly.
        for attempt in range(50):
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or attempt == 49:
                    raise
                time.sleep(0.05)

    def _create_schema(self) -> None:
        with self._write() as c:
            c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            found = c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
            if found is not None and found > SCHEMA_VERSION:
                raise StoreError(f"the SQLite store at {self.path} has schema version {found}, newer than this "
                                 f"fptrack understands ({SCHEMA_VERSION}); upgrade fptrack or use another FPT_HOME")
            had = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for statement in self.SCHEMA.split(";"):
                if statement.strip():
                    c.execute(statement)
            # Columns added since a table's first release: a store made before them gets them here,
            # empty. Additive columns need no new version (an older fptrack reads past them).
            for table, added in self.ADDED_COLUMNS.items():
                have = {r["name"] for r in c.execute(f"PRAGMA table_info({table})")}
                for column, declaration in added:
                    if column not in have:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            for table, fill in self.FILLS.items():
                if table not in had:  # a store made before this table: fill it from what is there
                    c.execute(fill)
            for trigger in self.TRIGGERS:
                c.execute(trigger)
            if found is None:
                c.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taking the write lock up front (waits up to busy_timeout)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's read connection (None for an in-memory store: it cannot have a second one)."""
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        conn = getattr(self._local, "conn", None)
        if conn is None and self.path != ":memory:" and not self.path.startswith("file::memory:"):
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            with self._lock:
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        conn = self._reader()
        if conn is not None:
            return conn.execute(sql, args).fetchall()
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def _one(self, sql: str, args: Sequence[Any], missing: str) -> sqlite3.Row:
        rows = self._read(sql, args)
        if not rows:
            raise NotFound(missing)
        return rows[0]

    def _error(self, e: sqlite3.Error) -> StoreError:
        text = str(e)
        if isinstance(e, sqlite3.ProgrammingError) and "closed" in text:
            return StoreError(f"the SQLite store at {self.path} was closed; open it again (open_store)")
        if "locked" in text or "busy" in text:
            return StoreError(f"the SQLite store at {self.path} stayed locked for more than "
                              f"{BUSY_TIMEOUT_MS // 1000} s ({text}): another process is holding a long write; "
                              "retry, or stop a stuck fptrack process")
        return StoreError(f"the SQLite store at {self.path} failed: {text}; check the disk has space and the "
                          "file is writable")

    def _iter(self, keys_sql: str, keys_args: Sequence[Any], rows_sql: str, rows_args: Sequence[Any],
              key: Callable[[sqlite3.Row], Any], convert: Callable[[sqlite3.Row], T]) -> Iterator[T]:
        """Records in the order of `keys_sql`, fetched BATCH at a time by `rows_sql` (which
        ends in "IN" and gets the batch's keys appended); records gone meanwhile are skipped."""
        try:
            keys = [tuple(r) if len(r) > 1 else r[0] for r in self._read(keys_sql, keys_args)]
            for i in range(0, len(keys), BATCH):
                batch = keys[i:i + BATCH]
                marks = ",".join("?" * len(batch))
                found = {key(r): r for r in self._read(f"{rows_sql} ({marks})", [*rows_args, *batch])}
                for k in batch:
                    if k in found:
                        yield convert(found[k])
        except sqlite3.Error as e:
            raise self._error(e) from e

    def _set_status(self, table: str, key: dict[str, Any], status: str, by: str) -> sqlite3.Row | None:
        """Set a review status and append {"status", "by", "at"} to the history, unless the record
        has that status already; the row as it is now (None when there is none). The entry's "at"
        is ISO-8601 text in UTC, so history stays plain JSON for every reader."""
        where = " AND ".join(f"{k} = ?" for k in key)
        args = tuple(key.values())
        with self._write() as c:
            row = c.execute(f"SELECT status, history FROM {table} WHERE {where}", args).fetchone()
            if row is None:
                return None
            if row["status"] != status:
                history = loads(row["history"])
                history.append({"status": status, "by": by, "at": to_text(now())})
                c.execute(f"UPDATE {table} SET status = ?, history = ? WHERE {where}", (status, dumps(history), *args))
            return c.execute(f"SELECT * FROM {table} WHERE {where}", args).fetchone()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._conn.close()
