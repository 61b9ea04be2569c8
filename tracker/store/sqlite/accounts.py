"""SQLite: the admin's users and their signed-in sessions."""
from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from ..records import ROLES, NotFound, User, UserSession, now
from ..values import check_role, to_text
from .connection import SQLiteBase, _guarded, _where, from_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    failed_logins INTEGER NOT NULL,
    locked_until TEXT,
    created_at TEXT NOT NULL,
    last_login TEXT
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
ADDED_COLUMNS = {"users": (("last_login", "TEXT"),)}


def _user(r: sqlite3.Row) -> User:
    return User(name=r["name"], password_hash=r["password_hash"], role=r["role"], failed_logins=r["failed_logins"],
                locked_until=from_text(r["locked_until"]) if r["locked_until"] else None,
                created_at=from_text(r["created_at"]),
                last_login=from_text(r["last_login"]) if r["last_login"] else None)


def _session(r: sqlite3.Row) -> UserSession:
    return UserSession(id=r["id"], user=r["user"], created_at=from_text(r["created_at"]),
                       last_seen=from_text(r["last_seen"]), stamp=r["stamp"])


class AccountsSQL(SQLiteBase):
    """Users and sessions in SQLite."""

    # ---- users -----------------------------------------------------------------------

    @_guarded
    def upsert_user(self, user: User) -> User:
        check_role(user.role, ROLES)
        with self._write() as c:
            c.execute("INSERT INTO users (name, password_hash, role, failed_logins, locked_until, created_at, "
                      "last_login) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                      "password_hash = excluded.password_hash, role = excluded.role, "
                      "failed_logins = excluded.failed_logins, locked_until = excluded.locked_until",
                      (user.name, user.password_hash, user.role, int(user.failed_logins),
                       to_text(user.locked_until) if user.locked_until else None, to_text(user.created_at),
                       to_text(user.last_login) if user.last_login else None))
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
                c.execute("UPDATE users SET failed_logins = 0, locked_until = NULL, last_login = ? WHERE name = ?",
                          (to_text(at), name))
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
