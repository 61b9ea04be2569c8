"""The embedded store: one SQLite file, no server to run.

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
they sort as text), dicts and lists as JSON.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from .base import (
    MATCH_GROUPS,
    MATCH_SORTS,
    MATCH_STATUSES,
    PAGE_GROUPS,
    PAGE_STATUSES,
    ROLES,
    BadRecord,
    Chapter,
    CrawlRun,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Site,
    Store,
    StoreError,
    User,
    UserSession,
    Work,
    content_hash,
    now,
)
from .values import (
    check_groups,
    check_role,
    check_status,
    check_window,
    clean_counts,
    clean_scores,
    clean_spans,
    parse_sort,
    statuses,
    to_text,
)

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000
ADDED_PAGE_COLUMNS = ("etag", "last_modified")
BATCH = 500  # records fetched per query by the iterators (well under SQLite's 32766 parameters)

T = TypeVar("T")

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
CREATE TABLE IF NOT EXISTS fingerprints (
    chapter TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (chapter, params_hash)
);
CREATE INDEX IF NOT EXISTS fingerprints_params ON fingerprints (params_hash, chapter);
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
CREATE INDEX IF NOT EXISTS matches_order ON matches (containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_work ON matches (work, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_site ON matches (site, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS matches_chapter ON matches (chapter);
CREATE INDEX IF NOT EXISTS matches_first_seen ON matches (first_seen);
CREATE INDEX IF NOT EXISTS matches_last_seen ON matches (last_seen);
CREATE INDEX IF NOT EXISTS matches_site_status ON matches (site, status, containment DESC, page, chapter);
CREATE INDEX IF NOT EXISTS pages_site_status ON pages (site, status, fetched_at);
CREATE INDEX IF NOT EXISTS matches_similarity ON matches (similarity);
CREATE INDEX IF NOT EXISTS matches_page_share ON matches (page_share);
CREATE INDEX IF NOT EXISTS pages_fetched ON pages (fetched_at DESC, key);
CREATE TABLE IF NOT EXISTS sites (
    name TEXT PRIMARY KEY,
    start_urls TEXT NOT NULL,
    rules TEXT NOT NULL,
    recrawl INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
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
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    failed_logins INTEGER NOT NULL,
    locked_until TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    stamp TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user, created_at);
CREATE INDEX IF NOT EXISTS sessions_last_seen ON sessions (last_seen);
CREATE INDEX IF NOT EXISTS sessions_created ON sessions (created_at);
"""


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


# ---- rows -> records ---------------------------------------------------------

def _work(r: sqlite3.Row) -> Work:
    return Work(id=r["id"], title=r["title"], author=r["author"], created_at=from_text(r["created_at"]))


def _chapter(r: sqlite3.Row) -> Chapter:
    return Chapter(key=r["key"], work=r["work"], title=r["title"], text=r["text"], number=r["number"],
                   content_hash=r["content_hash"], doc=r["doc"], updated_at=from_text(r["updated_at"]))


def _page(r: sqlite3.Row) -> Page:
    return Page(key=r["key"], text=r["text"], url=r["url"], site=r["site"], fetched_at=from_text(r["fetched_at"]),
                content_hash=r["content_hash"], status=r["status"], reason=r["reason"], attempts=r["attempts"],
                updated_at=from_text(r["updated_at"]), meta=loads(r["meta"]), etag=r["etag"] or "",
                last_modified=r["last_modified"] or "")


def _fingerprint(r: sqlite3.Row) -> FingerprintRecord:
    return FingerprintRecord(chapter=r["chapter"], params_hash=r["params_hash"], params=loads(r["params"]),
                             data=bytes(r["data"]), created_at=from_text(r["created_at"]))


def _match(r: sqlite3.Row) -> MatchRecord:
    return MatchRecord(page=r["page"], chapter=r["chapter"], work=r["work"], site=r["site"],
                       similarity=r["similarity"], containment=r["containment"], page_share=r["page_share"],
                       verdict=r["verdict"], scores=loads(r["scores"]), spans=loads(r["spans"]), status=r["status"],
                       first_seen=from_text(r["first_seen"]), last_seen=from_text(r["last_seen"]),
                       history=loads(r["history"]))


def _site(r: sqlite3.Row) -> Site:
    return Site(name=r["name"], start_urls=loads(r["start_urls"]), rules=loads(r["rules"]), recrawl=bool(r["recrawl"]),
                created_at=from_text(r["created_at"]), updated_at=from_text(r["updated_at"]))


def _crawl_run(r: sqlite3.Row) -> CrawlRun:
    return CrawlRun(site=r["site"], job=r["job"], started_at=from_text(r["started_at"]),
                    finished_at=from_text(r["finished_at"]), outcome=r["outcome"], counts=loads(r["counts"]),
                    skipped=loads(r["skipped"]), failed=loads(r["failed"]), id=r["id"])


def _user(r: sqlite3.Row) -> User:
    return User(name=r["name"], password_hash=r["password_hash"], role=r["role"], failed_logins=r["failed_logins"],
                locked_until=from_text(r["locked_until"]) if r["locked_until"] else None,
                created_at=from_text(r["created_at"]))


def _session(r: sqlite3.Row) -> UserSession:
    return UserSession(id=r["id"], user=r["user"], created_at=from_text(r["created_at"]),
                       last_seen=from_text(r["last_seen"]), stamp=r["stamp"])


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
    def wrapper(self: SQLiteStore, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise self._error(e) from e
        except UnicodeEncodeError as e:  # sqlite3 encodes every str as UTF-8: a lone surrogate fails
            raise BadRecord(f"SQLite cannot store this record: its text holds {e.object[e.start:e.end]!a}, "
                            "which is not a character (replace it with U+FFFD)") from e
    return wrapper


class SQLiteStore(Store):
    """The store in one SQLite file (or ":memory:"). One connection per object; use an
    object from one thread at a time (a lock serialises calls if threads do share it),
    and open one object per process to share the file."""

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
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    c.execute(statement)
            # Columns added since version 1 was released: a store made before them gets them here,
            # empty. Additive columns need no new version (an older fptrack reads past them).
            have = {r["name"] for r in c.execute("PRAGMA table_info(pages)")}
            for column in ADDED_PAGE_COLUMNS:
                if column not in have:
                    c.execute(f"ALTER TABLE pages ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
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

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._conn.close()

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
    def delete_chapter(self, key: str) -> None:
        with self._write() as c:
            c.execute("DELETE FROM fingerprints WHERE chapter = ?", (key,))
            c.execute("DELETE FROM chapters WHERE key = ?", (key,))

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
    def _page_filter(status: str | None, site: str | None, url_contains: str | None) -> tuple[str, list[Any]]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        cond, args = _where((("status", status), ("site", site)))
        if url_contains:
            like = url_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            cond = f"{cond + ' AND' if cond else 'WHERE'} url LIKE ? ESCAPE '\\'"
            args.append(f"%{like}%")
        return cond, args

    @_guarded
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0) -> list[Page]:
        check_window(limit, offset)
        cond, args = self._page_filter(status, site, url_contains)
        rows = self._read(f"SELECT * FROM pages {cond} ORDER BY fetched_at DESC, key LIMIT ? OFFSET ?",
                          [*args, -1 if limit is None else limit, offset])
        return [_page(r) for r in rows]

    @_guarded
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None) -> int:
        cond, args = self._page_filter(status, site, url_contains)
        return self._read(f"SELECT COUNT(*) FROM pages {cond}", args)[0][0]

    @_guarded
    def page_summary(self, by: Sequence[str]) -> list[dict[str, Any]]:
        by = check_groups(by, PAGE_GROUPS)
        rows = self._read(f"SELECT {', '.join(by)}, COUNT(*) AS n, MAX(fetched_at) AS last FROM pages "
                          f"GROUP BY {', '.join(by)} ORDER BY n DESC, {', '.join(by)}")
        return [{**{f: r[f] for f in by}, "pages": r["n"], "last_fetched": from_text(r["last"])} for r in rows]

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
        cond, args = _where((("work", work), ("page", page), ("site", site), ("status", status),
                             ("chapter", chapter)))
        order = f"{field_name} {'DESC' if descending else 'ASC'}, page, chapter"
        rows = self._read(f"SELECT * FROM matches {cond} ORDER BY {order} LIMIT ? OFFSET ?",
                          [*args, -1 if limit is None else limit, offset])
        return [_match(r) for r in rows]

    @_guarded
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | None = None, chapter: str | None = None) -> int:
        status = statuses(status, MATCH_STATUSES)
        cond, args = _where((("work", work), ("page", page), ("site", site), ("status", status),
                             ("chapter", chapter)))
        return self._read(f"SELECT COUNT(*) FROM matches {cond}", args)[0][0]

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
        with self._write() as c:
            row = c.execute("SELECT status, history FROM matches WHERE page = ? AND chapter = ?",
                            (page, chapter)).fetchone()
            if row is None:
                raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
            if row["status"] != status:
                history = loads(row["history"])
                history.append({"status": status, "by": by, "at": to_text(now())})
                c.execute("UPDATE matches SET status = ?, history = ? WHERE page = ? AND chapter = ?",
                          (status, dumps(history), page, chapter))
            row = c.execute("SELECT * FROM matches WHERE page = ? AND chapter = ?", (page, chapter)).fetchone()
        return _match(row)

    # ---- sites and crawls -----------------------------------------------------------

    @_guarded
    def upsert_site(self, site: Site) -> Site:
        with self._write() as c:
            c.execute("INSERT INTO sites (name, start_urls, rules, recrawl, created_at, updated_at) "
                      "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET start_urls = excluded.start_urls, "
                      "rules = excluded.rules, recrawl = excluded.recrawl, updated_at = excluded.updated_at",
                      (site.name, dumps(list(site.start_urls)), dumps(site.rules), int(bool(site.recrawl)),
                       to_text(site.created_at), to_text(site.updated_at)))
            return _site(c.execute("SELECT * FROM sites WHERE name = ?", (site.name,)).fetchone())

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

    # ---- users -----------------------------------------------------------------------

    @_guarded
    def upsert_user(self, user: User) -> User:
        check_role(user.role, ROLES)
        with self._write() as c:
            c.execute("INSERT INTO users (name, password_hash, role, failed_logins, locked_until, created_at) "
                      "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                      "password_hash = excluded.password_hash, role = excluded.role, "
                      "failed_logins = excluded.failed_logins, locked_until = excluded.locked_until",
                      (user.name, user.password_hash, user.role, int(user.failed_logins),
                       to_text(user.locked_until) if user.locked_until else None, to_text(user.created_at)))
            return _user(c.execute("SELECT * FROM users WHERE name = ?", (user.name,)).fetchone())

    @_guarded
    def get_user(self, name: str) -> User:
        return _user(self._one("SELECT * FROM users WHERE name = ?", (name,), f"no user {name!r}"))

    @_guarded
    def users(self) -> list[User]:
        return [_user(r) for r in self._read("SELECT * FROM users ORDER BY name")]

    @_guarded
    def delete_user(self, name: str) -> None:
        with self._write() as c:
            if c.execute("DELETE FROM users WHERE name = ?", (name,)).rowcount == 0:
                raise NotFound(f"no user {name!r}")

    @_guarded
    def record_login(self, name: str, ok: bool, *, max_failures: int, lock_for: timedelta,
                     at: datetime | None = None) -> User:
        at = at or now()
        with self._write() as c:
            row = c.execute("SELECT failed_logins FROM users WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise NotFound(f"no user {name!r}")
            if ok:
                c.execute("UPDATE users SET failed_logins = 0, locked_until = NULL WHERE name = ?", (name,))
            else:
                failures = row["failed_logins"] + 1
                lock = to_text(at + lock_for) if failures % max_failures == 0 else None
                c.execute("UPDATE users SET failed_logins = ?, locked_until = COALESCE(?, locked_until) "
                          "WHERE name = ?", (failures, lock, name))
            return _user(c.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone())

    # ---- sessions --------------------------------------------------------------------

    @_guarded
    def add_session(self, session: UserSession) -> UserSession:
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO sessions (id, user, created_at, last_seen, stamp) "
                      "VALUES (?, ?, ?, ?, ?)",
                      (session.id, session.user, to_text(session.created_at), to_text(session.last_seen),
                       session.stamp))
            return _session(c.execute("SELECT * FROM sessions WHERE id = ?", (session.id,)).fetchone())

    @_guarded
    def get_session(self, session_id: str) -> UserSession:
        return _session(self._one("SELECT * FROM sessions WHERE id = ?", (session_id,), "no such session"))

    @_guarded
    def sessions(self, user: str | None = None) -> list[UserSession]:
        cond, args = _where((("user", user),))
        return [_session(r) for r in self._read(f"SELECT * FROM sessions {cond} ORDER BY created_at, id", args)]

    @_guarded
    def touch_session(self, session_id: str, at: datetime) -> None:
        with self._write() as c:
            c.execute("UPDATE sessions SET last_seen = ? WHERE id = ?", (to_text(at), session_id))

    @_guarded
    def delete_session(self, session_id: str) -> None:
        with self._write() as c:
            c.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    @_guarded
    def delete_sessions(self, user: str) -> int:
        with self._write() as c:
            return c.execute("DELETE FROM sessions WHERE user = ?", (user,)).rowcount

    @_guarded
    def purge_sessions(self, *, seen_before: datetime, created_before: datetime) -> int:
        with self._write() as c:
            return c.execute("DELETE FROM sessions WHERE last_seen < ? OR created_at < ?",
                             (to_text(seen_before), to_text(created_before))).rowcount

    # ---- reports -------------------------------------------------------------------

    @_guarded
    def counts(self) -> dict[str, Any]:
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot for all the numbers
            try:
                works = self._conn.execute("SELECT COUNT(*) FROM works").fetchone()[0]
                chapters = self._conn.execute("SELECT COUNT(*) FROM chapters").fetchone()[0]
                pages = dict(self._conn.execute("SELECT status, COUNT(*) FROM pages GROUP BY status").fetchall())
                matches = dict(self._conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status").fetchall())
            finally:
                self._conn.execute("COMMIT")
        return {"works": works, "chapters": chapters,
                "pages": {s: pages.get(s, 0) for s in PAGE_STATUSES},
                "matches": {s: matches.get(s, 0) for s in MATCH_STATUSES}}

    @_guarded
    def failures(self, limit: int = 50) -> list[Page]:
        check_window(limit)
        rows = self._read("SELECT * FROM pages WHERE status = 'failed' ORDER BY updated_at DESC, key LIMIT ?",
                          (limit,))
        return [_page(r) for r in rows]
