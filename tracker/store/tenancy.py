"""The records of tenancy: organisations, what belongs to each, and API tokens.

Works, sites and users belong to an organisation; matches belong to their work's. What
no organisation was named for belongs to DEFAULT_ORG, so a deployment made before
organisations existed (one team) keeps working as the default organisation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .records import now

DEFAULT_ORG = "default"
#: What an organisation owns (a match belongs to the organisation of its work).
OWNED_KINDS = ("work", "site", "user")
#: What an API token may do: read answers GET only; write may also change things.
TOKEN_SCOPES = ("read", "write")


@dataclass
class Organisation:
    name: str  # unique, e.g. "default", "north-press"
    created_at: datetime = field(default_factory=now)


@dataclass
class ApiToken:
    """A token a script sends as `Authorization: Bearer ...`. The store keeps only the
    SHA-256 of the token, so a copy of the store cannot be replayed against the API."""
    id: str  # short, public: names the token in lists and to revoke it
    hash: str  # SHA-256 (hex) of the token
    org: str  # Organisation.name: the only organisation it sees
    scope: str  # one of TOKEN_SCOPES
    name: str = ""  # what it is for
    created_by: str = ""
    created_at: datetime = field(default_factory=now)
    last_used: datetime | None = None


def check_kind(kind: str) -> str:
    if kind not in OWNED_KINDS:
        raise ValueError(f"unknown kind {kind!r}; an organisation owns one of: {', '.join(OWNED_KINDS)}")
    return kind


def check_scope(scope: str) -> str:
    if scope not in TOKEN_SCOPES:
        raise ValueError(f"unknown token scope {scope!r}; use one of: {', '.join(TOKEN_SCOPES)}")
    return scope


def check_org_name(name: str) -> str:
    if not name or len(name) > 64 or any(c.isspace() or ord(c) < 32 or c in "/\\" for c in name):
        raise ValueError("an organisation's name is 1 to 64 characters with no spaces or slashes")
    return name
