"""SQLite: organisations, what each owns, and API tokens."""
from __future__ import annotations

import sqlite3
from datetime import datetime

from ..records import NotFound
from ..tenancy import DEFAULT_ORG, ApiToken, Organisation, check_kind, check_org_name, check_scope
from ..values import to_text
from .connection import SQLiteBase, _guarded, from_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS orgs (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owners (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    org TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS owners_org ON owners (kind, org);
CREATE TABLE IF NOT EXISTS api_tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    org TEXT NOT NULL,
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used TEXT
);
CREATE INDEX IF NOT EXISTS api_tokens_org ON api_tokens (org, created_at);
"""


def _org(r: sqlite3.Row) -> Organisation:
    return Organisation(name=r["name"], created_at=from_text(r["created_at"]))


def _token(r: sqlite3.Row) -> ApiToken:
    return ApiToken(id=r["id"], hash=r["hash"], org=r["org"], scope=r["scope"], name=r["name"],
                    created_by=r["created_by"], created_at=from_text(r["created_at"]),
                    last_used=from_text(r["last_used"]) if r["last_used"] else None)


class TenancySQL(SQLiteBase):
    """Organisations, owners and API tokens in SQLite."""

    @_guarded
    def upsert_org(self, org: Organisation) -> Organisation:
        check_org_name(org.name)
        with self._write() as c:
            c.execute("INSERT INTO orgs (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                      (org.name, to_text(org.created_at)))
            return _org(c.execute("SELECT * FROM orgs WHERE name = ?", (org.name,)).fetchone())

    @_guarded
    def get_org(self, name: str) -> Organisation:
        return _org(self._one("SELECT * FROM orgs WHERE name = ?", (name,), f"no organisation {name!r}"))

    @_guarded
    def orgs(self) -> list[Organisation]:
        return [_org(r) for r in self._read("SELECT * FROM orgs ORDER BY name")]

    @_guarded
    def set_owner(self, kind: str, key: str, org: str) -> None:
        check_kind(kind)
        with self._write() as c:
            c.execute("INSERT INTO owners (kind, key, org) VALUES (?, ?, ?) "
                      "ON CONFLICT (kind, key) DO UPDATE SET org = excluded.org", (kind, key, org))

    @_guarded
    def owner(self, kind: str, key: str) -> str:
        check_kind(kind)
        rows = self._read("SELECT org FROM owners WHERE kind = ? AND key = ?", (kind, key))
        return rows[0]["org"] if rows else DEFAULT_ORG

    @_guarded
    def owners(self, kind: str) -> dict[str, str]:
        check_kind(kind)
        return {r["key"]: r["org"] for r in self._read("SELECT key, org FROM owners WHERE kind = ?", (kind,))}

    @_guarded
    def add_token(self, token: ApiToken) -> ApiToken:
        check_scope(token.scope)
        with self._write() as c:
            c.execute("INSERT INTO api_tokens (id, hash, org, scope, name, created_by, created_at, last_used) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name",
                      (token.id, token.hash, token.org, token.scope, token.name, token.created_by,
                       to_text(token.created_at), to_text(token.last_used) if token.last_used else None))
            return _token(c.execute("SELECT * FROM api_tokens WHERE id = ?", (token.id,)).fetchone())

    @_guarded
    def token_by_hash(self, token_hash: str) -> ApiToken:
        return _token(self._one("SELECT * FROM api_tokens WHERE hash = ?", (token_hash,), "no such token"))

    @_guarded
    def tokens(self, org: str | None = None) -> list[ApiToken]:
        if org is None:
            rows = self._read("SELECT * FROM api_tokens ORDER BY created_at, id")
        else:
            rows = self._read("SELECT * FROM api_tokens WHERE org = ? ORDER BY created_at, id", (org,))
        return [_token(r) for r in rows]

    @_guarded
    def delete_token(self, token_id: str) -> None:
        with self._write() as c:
            if c.execute("DELETE FROM api_tokens WHERE id = ?", (token_id,)).rowcount == 0:
                raise NotFound(f"no token {token_id!r}")

    @_guarded
    def touch_token(self, token_id: str, at: datetime) -> None:
        with self._write() as c:
            c.execute("UPDATE api_tokens SET last_used = ? WHERE id = ?", (to_text(at), token_id))
