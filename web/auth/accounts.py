"""Accounts: password hashes, and sign-in with a per-account lock after repeated failures."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from werkzeug.security import check_password_hash, generate_password_hash

from tracker.store import ROLES, NotFound, Store, User, now

MIN_PASSWORD = 8
MAX_FAILURES = 5
LOCK_FOR = timedelta(minutes=15)
RECORD_EVERY = timedelta(minutes=1)  # a user's last sign-in is kept to within this much
WRONG = "wrong name or password"


class AccountError(ValueError):
    """A name, role or password that cannot be used; the message says why."""


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    return generate_password_hash(password)


def check_name(name: str) -> str:
    if not name or any(c.isspace() or ord(c) < 32 for c in name) or len(name) > 64:
        raise AccountError("a user name is 1 to 64 characters with no spaces")
    return name


def new_user(name: str, password: str, role: str = "viewer") -> User:
    if role not in ROLES:
        raise AccountError(f"unknown role {role!r}; use one of: {', '.join(ROLES)}")
    return User(name=check_name(name), password_hash=hash_password(password), role=role)


def session_token(user: User) -> str:
    """Changes with the password, so changing a password ends the sessions made with the old one."""
    return hashlib.sha256(user.password_hash.encode()).hexdigest()[:20]


@cache
def _decoy_hash() -> str:
    return generate_password_hash("no such user")


@dataclass
class SignIn:
    user: User | None
    message: str = ""
    locked: bool = False  # for the caller's records only: the message is the same either way


def refusal(max_failures: int, lock_for: timedelta) -> str:
    """The one answer to every failed sign-in, so it never tells whether an account exists or is locked."""
    return (f"{WRONG} (after {max_failures} failed sign-ins in a row an account is locked for "
            f"{max(1, int(lock_for.total_seconds() // 60))} minutes)")


def sign_in(store: Store, name: str, password: str, *, max_failures: int = MAX_FAILURES,
            lock_for: timedelta = LOCK_FOR, at: datetime | None = None) -> SignIn:
    """Check a name and password. Every `max_failures`-th failure in a row locks the account for
    `lock_for` and ends its sessions; while locked, even the right password is refused. Every
    refusal has the same message and costs one password hash check."""
    at = at or now()
    refused = refusal(max_failures, lock_for)
    try:
        user = store.get_user(name)
    except NotFound:
        check_password_hash(_decoy_hash(), password)  # the same time as a real check: names stay secret
        return SignIn(None, refused)
    right = check_password_hash(user.password_hash, password)  # also when locked: the same time again
    if user.locked_until is not None and user.locked_until > at:
        return SignIn(None, refused, locked=True)
    if not right:
        # One atomic write: a password change or another attempt at the same moment is not lost.
        user = store.record_login(name, False, max_failures=max_failures, lock_for=lock_for, at=at)
        if user.failed_logins % max_failures == 0:
            store.delete_sessions(name)  # someone is guessing: whoever holds a session signs in again
            return SignIn(None, refused, locked=True)
        return SignIn(None, refused)
    # Clears the failures and records when, for the Users page; at most once a minute, as HTTP
    # Basic signs in on every API call and a read should not cost a write.
    if (user.failed_logins or user.locked_until is not None or user.last_login is None
            or at - user.last_login >= RECORD_EVERY):
        user = store.record_login(name, True, max_failures=max_failures, lock_for=lock_for, at=at)
    return SignIn(user)
