"""MongoDB: each organisation's evidence signing key."""
from __future__ import annotations

from typing import Any

from bson import Binary
from pymongo import ASCENDING

from ..records import NotFound
from ..signing_keys import SigningKey, check_signing_key
from ..values import utc
from .connection import NO_ID, MongoBase, _guarded, aware

INDEXES = {"signing_keys": [([("org", ASCENDING)], True)]}


def _key(d: dict[str, Any]) -> SigningKey:
    return SigningKey(org=d["org"], algorithm=d["algorithm"], public_key=bytes(d["public_key"]),
                      private_key=bytes(d["private_key"]), created_at=aware(d["created_at"]))


class KeysMongo(MongoBase):
    """Signing keys in MongoDB."""

    @_guarded
    def add_signing_key(self, key: SigningKey) -> SigningKey:
        check_signing_key(key)
        return _key(self._upsert(self._signing_keys, {"org": key.org}, {"$setOnInsert": {
            "algorithm": key.algorithm, "public_key": Binary(key.public_key), "private_key": Binary(key.private_key),
            "created_at": utc(key.created_at)}}, "signing key"))

    @_guarded
    def signing_key(self, org: str) -> SigningKey:
        d = self._signing_keys.find_one({"org": org}, NO_ID)
        if d is None:
            raise NotFound(f"no signing key for organisation {org!r}")
        return _key(d)
