"""This request's organisation: the scope set once per request and the views read through it.

The scope is set in access.guard, from the signed-in user or the API token (set_scope):
`services().store` is then a tracker.store.scoped.ScopedStore of that organisation
(scoped_store), so every view and report reads and writes through it and none filters by
itself, and the shared summaries are kept apart per organisation (snapshots_of). An
operator (role OPERATOR) sees every organisation: no scope.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from flask import g

from tracker.store import Store
from tracker.store.scoped import ScopedStore
from tracker.store.tenancy import DEFAULT_ORG

OPERATOR = "operator"


def set_scope(root: Store, org: str, role: str) -> None:
    """Scope this request's store to `org`, unless the role is the operator's or there is no
    organisation but the default one (a single-team deployment reads its store as it is)."""
    g.org = org
    alone = org == DEFAULT_ORG and all(o.name == DEFAULT_ORG for o in root.orgs())
    g.scoped_store = None if role == OPERATOR or alone else ScopedStore(root, org)


def scoped_store() -> Store | None:
    return g.get("scoped_store")


class ScopedSnapshots:
    """The shared summaries, kept apart per organisation (the same key means another thing in each)."""

    def __init__(self, snapshots: Any, org: str | None):
        self.snapshots, self.org = snapshots, org

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        return self.snapshots.get((self.org, key), compute)

    def clear(self) -> None:
        self.snapshots.clear()


def snapshots_of(snapshots: Any, store: Any) -> ScopedSnapshots:
    return ScopedSnapshots(snapshots, getattr(store, "org", None))
