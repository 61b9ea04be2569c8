"""The users table of an SQLite store made before last sign-ins were recorded gets the column."""
from __future__ import annotations

import sqlite3
from datetime import timedelta

from tracker.store.sqlite import SQLiteStore

from .store_contract import T0


def test_a_store_made_before_last_sign_ins_gets_their_column(tmp_path):
    path = tmp_path / "old.sqlite3"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)  # the users table as it was first made
    raw.execute("DROP TABLE users")
    raw.execute("CREATE TABLE users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL, role TEXT NOT NULL, "
                "failed_logins INTEGER NOT NULL, locked_until TEXT, created_at TEXT NOT NULL)")
    raw.execute("INSERT INTO users VALUES ('ann', 'h', 'admin', 2, NULL, '2026-01-01T00:00:00.000+00:00')")
    raw.commit()
    raw.close()
    s = SQLiteStore(path)
    assert (s.get_user("ann").last_login, s.get_user("ann").failed_logins) == (None, 2)
    s.record_login("ann", True, max_failures=5, lock_for=timedelta(minutes=1), at=T0)
    s.close()
    s = SQLiteStore(path)  # reopening adds nothing twice
    assert s.get_user("ann").last_login == T0
    s.close()
