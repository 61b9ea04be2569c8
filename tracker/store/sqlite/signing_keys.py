"""SQLite: each organisation's evidence signing key."""
from __future__ import annotations

import sqlite3

from ..signing_keys import SigningKey, check_signing_key
from ..values import to_text
from .connection import SQLiteBase, _guarded, from_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS signing_keys (
    org TEXT PRIMARY KEY,
    algorithm TEXT NOT NULL,
    public_key BLOB NOT NULL,
    private_key BLOB NOT NULL,
    created_at TEXT NOT NULL
);
"""


def _key(r: sqlite3.Row) -> SigningKey:
    return SigningKey(org=r["org"], algorithm=r["algorithm"], public_key=bytes(r["public_key"]),
                      private_key=bytes(r["private_key"]), created_at=from_text(r["created_at"]))


class KeysSQL(SQLiteBase):
    """Signing keys in SQLite."""

    @_guarded
    def add_signing_key(self, key: SigningKey) -> SigningKey:
        check_signing_key(key)
        with self._write() as c:
            c.execute("INSERT INTO signing_keys (org, algorithm, public_key, private_key, created_at) "
                      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (org) DO NOTHING",
                      (key.org, key.algorithm, key.public_key, key.private_key, to_text(key.created_at)))
            return _key(c.execute("SELECT * FROM signing_keys WHERE org = ?", (key.org,)).fetchone())

    @_guarded
    def signing_key(self, org: str) -> SigningKey:
        return _key(self._one("SELECT * FROM signing_keys WHERE org = ?", (org,),
                              f"no signing key for organisation {org!r}"))
