"""API tokens: made once, shown once, kept only as their SHA-256.

A token is "fpt_" and 32 random bytes in URL-safe base64; its id (the first 12 hex
digits of its hash) names it in lists and when revoking it. Checking one hashes what
was sent and looks the hash up; the stored and computed hashes are then compared in
constant time as well.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from ..store import NotFound, Store, now
from ..store.tenancy import ApiToken, check_scope

PREFIX = "fpt_"
TOUCH_EVERY = timedelta(minutes=1)  # last_used is recorded to this precision


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(store: Store, org: str, scope: str, name: str = "", created_by: str = "") -> tuple[ApiToken, str]:
    """A new token of `org`: its record and the token itself (to show once; the store keeps
    only its hash). Raises NotFound for an organisation never added, ValueError for a bad scope."""
    check_scope(scope)
    if org != "default":
        store.get_org(org)
    token = PREFIX + secrets.token_urlsafe(32)
    digest = token_hash(token)
    record = store.add_token(ApiToken(id=digest[:12], hash=digest, org=org, scope=scope, name=name[:100],
                                      created_by=created_by))
    return record, token


def check_token(store: Store, token: str, at: datetime | None = None) -> ApiToken | None:
    """The token's record (its last use set to `at`), or None when it is not one we made or was revoked."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    digest = token_hash(token)
    try:
        record = store.token_by_hash(digest)
    except NotFound:
        return None
    if not hmac.compare_digest(record.hash, digest):
        return None
    at = at or now()
    if record.last_used is None or at - record.last_used >= TOUCH_EVERY:  # not one write per API call
        record.last_used = at
        store.touch_token(record.id, at)
    return record
