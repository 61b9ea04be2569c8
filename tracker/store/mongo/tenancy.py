"""MongoDB: organisations, what each owns, and API tokens."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING

from ..records import NotFound
from ..tenancy import DEFAULT_ORG, ApiToken, Organisation, check_kind, check_org_name, check_scope
from ..values import utc
from .connection import NO_ID, MongoBase, _guarded, aware

INDEXES = {
    "orgs": [([("name", ASCENDING)], True)],
    "owners": [([("kind", ASCENDING), ("key", ASCENDING)], True), ([("kind", ASCENDING), ("org", ASCENDING)], False)],
    "api_tokens": [([("id", ASCENDING)], True), ([("hash", ASCENDING)], True),
                   ([("org", ASCENDING), ("created_at", ASCENDING)], False)],
}


def _org(d: dict[str, Any]) -> Organisation:
    return Organisation(name=d["name"], created_at=aware(d["created_at"]))


def _token(d: dict[str, Any]) -> ApiToken:
    return ApiToken(id=d["id"], hash=d["hash"], org=d["org"], scope=d["scope"], name=d.get("name", ""),
                    created_by=d.get("created_by", ""), created_at=aware(d["created_at"]),
                    last_used=aware(d["last_used"]) if d.get("last_used") else None)


class TenancyMongo(MongoBase):
    """Organisations, owners and API tokens in MongoDB."""

    @_guarded
    def upsert_org(self, org: Organisation) -> Organisation:
        check_org_name(org.name)
        return _org(self._upsert(self._orgs, {"name": org.name},
                                 {"$setOnInsert": {"created_at": utc(org.created_at)}}, "organisation"))

    @_guarded
    def get_org(self, name: str) -> Organisation:
        d = self._orgs.find_one({"name": name}, NO_ID)
        if d is None:
            raise NotFound(f"no organisation {name!r}")
        return _org(d)

    @_guarded
    def orgs(self) -> list[Organisation]:
        return [_org(d) for d in self._orgs.find({}, NO_ID).sort("name", ASCENDING)]

    @_guarded
    def set_owner(self, kind: str, key: str, org: str) -> None:
        check_kind(kind)
        self._owners.update_one({"kind": kind, "key": key}, {"$set": {"org": org}}, upsert=True)

    @_guarded
    def owner(self, kind: str, key: str) -> str:
        check_kind(kind)
        d = self._owners.find_one({"kind": kind, "key": key}, NO_ID)
        return d["org"] if d else DEFAULT_ORG

    @_guarded
    def owners(self, kind: str) -> dict[str, str]:
        check_kind(kind)
        return {d["key"]: d["org"] for d in self._owners.find({"kind": kind}, NO_ID)}

    @_guarded
    def add_token(self, token: ApiToken) -> ApiToken:
        check_scope(token.scope)
        return _token(self._upsert(self._api_tokens, {"id": token.id}, {
            "$set": {"name": token.name},
            "$setOnInsert": {"hash": token.hash, "org": token.org, "scope": token.scope,
                             "created_by": token.created_by, "created_at": utc(token.created_at),
                             "last_used": utc(token.last_used) if token.last_used else None}}, "token"))

    @_guarded
    def token_by_hash(self, token_hash: str) -> ApiToken:
        d = self._api_tokens.find_one({"hash": token_hash}, NO_ID)
        if d is None:
            raise NotFound("no such token")
        return _token(d)

    @_guarded
    def tokens(self, org: str | None = None) -> list[ApiToken]:
        query = {} if org is None else {"org": org}
        return [_token(d) for d in self._api_tokens.find(query, NO_ID).sort([("created_at", ASCENDING),
                                                                              ("id", ASCENDING)])]

    @_guarded
    def delete_token(self, token_id: str) -> None:
        if self._api_tokens.delete_one({"id": token_id}).deleted_count == 0:
            raise NotFound(f"no token {token_id!r}")

    @_guarded
    def touch_token(self, token_id: str, at: datetime) -> None:
        self._api_tokens.update_one({"id": token_id}, {"$set": {"last_used": utc(at)}})
