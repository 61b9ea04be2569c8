"""Sessions kept on the server: the cookie holds a random secret, the store a hash of it.

A session ends for good when its record goes: on sign-out, when the account's
password changes, when it is locked or removed, after SESSION_IDLE seconds
without a request, and SESSION_LIFETIME seconds after sign-in whatever happens.
A copy of the cookie then answers like no cookie at all.
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from tracker.store import NotFound, Store, User, UserSession

from .accounts import session_token

#: last_seen is written at most this often per session, so a request costs reads, not a write;
#: the idle limit is therefore kept to within this much.
TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class Limits:
    idle: timedelta = timedelta(minutes=30)
    lifetime: timedelta = timedelta(hours=12)

    def expired(self, s: UserSession, at: datetime) -> bool:
        return at - s.last_seen > self.idle or at - s.created_at > self.lifetime


def session_id(secret: str) -> str:
    """The stored id of the session whose cookie holds `secret`."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def start(store: Store, user: User, at: datetime) -> str:
    """Record a new session for `user`; returns the secret for the cookie."""
    secret = secrets.token_urlsafe(32)
    store.add_session(UserSession(id=session_id(secret), user=user.name, created_at=at, last_seen=at,
                                  stamp=session_token(user)))
    return secret


def resume(store: Store, secret: str, limits: Limits, at: datetime) -> User | None:
    """The user of the live session holding `secret`, or None. A session found idle or too old,
    or whose account is gone, locked or has another password now, is ended on the way."""
    sid = session_id(secret)
    try:
        s = store.get_session(sid)
    except NotFound:
        return None
    try:
        user: User | None = store.get_user(s.user)
    except NotFound:
        user = None
    if (user is None or limits.expired(s, at) or s.stamp != session_token(user)
            or (user.locked_until is not None and user.locked_until > at)):
        store.delete_session(sid)  # ended, not just refused: it stays ended after a lock runs out
        return None
    if at - s.last_seen >= TOUCH_EVERY:
        store.touch_session(sid, at)
    return user


def end(store: Store, secret: str) -> None:
    """End the session holding `secret` (sign-out)."""
    store.delete_session(session_id(secret))


def end_all(store: Store, name: str) -> int:
    """End every session of an account (password changed, locked, removed); returns how many."""
    return store.delete_sessions(name)


def purge(store: Store, limits: Limits, at: datetime) -> int:
    """Forget the sessions that expired (they are refused anyway; this keeps the table small)."""
    return store.purge_sessions(seen_before=at - limits.idle, created_before=at - limits.lifetime)
