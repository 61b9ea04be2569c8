"""The store interface for who uses the system: users and their sessions (`AccountsStore`),
organisations with what they own and their API tokens (`TenancyStore`), and each
organisation's signing key (`KeysStore`). Part of `tracker.store.base.Store`."""
from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime, timedelta

from .records import User, UserSession
from .signing_keys import SigningKey
from .tenancy import ApiToken, Organisation


class AccountsStore(ABC):
    """The admin's users and sessions."""

    # users
    @abstractmethod
    def upsert_user(self, user: User) -> User:
        """Insert or replace a user (keeps created_at and last_login). Raises ValueError for an unknown role."""

    @abstractmethod
    def get_user(self, name: str) -> User:
        """Raises NotFound."""

    @abstractmethod
    def users(self) -> list[User]:
        """All users, by name."""

    @abstractmethod
    def delete_user(self, name: str) -> None:
        """Raises NotFound."""

    @abstractmethod
    def record_login(self, name: str, ok: bool, *, max_failures: int, lock_for: timedelta,
                     at: datetime | None = None) -> User:
        """Record a sign-in attempt atomically: success clears failed_logins and locked_until and
        sets last_login to `at`;
        failure adds one, and every `max_failures`-th failure in a row locks the account until
        at + lock_for. Returns the user as it is now. Raises NotFound."""

    # sessions: deleting one that is gone already is no error (two sign-outs at once)
    @abstractmethod
    def add_session(self, session: UserSession) -> UserSession:
        """Insert a session (or replace the one with its id)."""

    @abstractmethod
    def get_session(self, session_id: str) -> UserSession:
        """Raises NotFound."""

    @abstractmethod
    def sessions(self, user: str | None = None) -> list[UserSession]:
        """Sessions (of one user), oldest first (then by id)."""

    @abstractmethod
    def touch_session(self, session_id: str, at: datetime) -> None:
        """Set last_seen; a session that is gone stays gone (never created again)."""

    @abstractmethod
    def delete_session(self, session_id: str) -> None:
        """End one session."""

    @abstractmethod
    def delete_sessions(self, user: str) -> int:
        """End every session of a user; returns how many there were."""

    @abstractmethod
    def purge_sessions(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete the sessions last seen before `seen_before` or created before `created_before`
        (idle or too old); returns how many."""


class TenancyStore(ABC):
    """Organisations, what each owns (works, sites, users; what none was named for belongs to
    tenancy.DEFAULT_ORG) and API tokens (records in tracker.store.tenancy)."""

    @abstractmethod
    def upsert_org(self, org: Organisation) -> Organisation:
        """Insert an organisation unless it exists (keeps created_at). Raises ValueError for a bad name."""

    @abstractmethod
    def get_org(self, name: str) -> Organisation:
        """Raises NotFound."""

    @abstractmethod
    def orgs(self) -> list[Organisation]:
        """All organisations, by name."""

    @abstractmethod
    def set_owner(self, kind: str, key: str, org: str) -> None:
        """Make `org` the owner of a work, site or user (one of tenancy.OWNED_KINDS). Raises ValueError."""

    @abstractmethod
    def owner(self, kind: str, key: str) -> str:
        """The organisation that owns it; DEFAULT_ORG when none was set."""

    @abstractmethod
    def owners(self, kind: str) -> dict[str, str]:
        """key -> organisation of every `kind` an owner was set for."""

    @abstractmethod
    def add_token(self, token: ApiToken) -> ApiToken:
        """Insert a token (another with its id only changes name). Raises ValueError for a bad scope."""

    @abstractmethod
    def token_by_hash(self, token_hash: str) -> ApiToken:
        """Raises NotFound."""

    @abstractmethod
    def tokens(self, org: str | None = None) -> list[ApiToken]:
        """Tokens (of one organisation), oldest first (then by id)."""

    @abstractmethod
    def delete_token(self, token_id: str) -> None:
        """Revoke a token. Raises NotFound."""

    @abstractmethod
    def touch_token(self, token_id: str, at: datetime) -> None:
        """Set last_used; a revoked token stays revoked."""


class KeysStore(ABC):
    """Each organisation's key that signs its evidence packages (records in tracker.store.signing_keys)."""

    @abstractmethod
    def add_signing_key(self, key: SigningKey) -> SigningKey:
        """Keep the organisation's key unless it has one; returns the one kept (of two made at
        once, the first stored wins). Raises ValueError for a bad key."""

    @abstractmethod
    def signing_key(self, org: str) -> SigningKey:
        """Raises NotFound."""
