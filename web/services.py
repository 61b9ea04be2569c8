"""What the app holds for its whole life: the store, the chapter catalog, the matching
engine for "check this text now" and its one slot, the per-address sign-in limiter,
the session limits and the clock."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from flask import current_app, has_request_context

from fingerprint.track import Tracker
from tracker.context import Context
from tracker.settings import Settings
from tracker.store import Store, StoreError, now
from tracker.store.open import open_store

from .auth.limits import FailureLimiter
from .auth.sessions import Limits
from .busy import Slots
from .reports.catalog import ChapterCatalog
from .reports.fragments import Fragments
from .reports.queries import Reports
from .reports.snapshots import Snapshots
from .tenancy.scope import scoped_store, snapshots_of

ENGINE_MAX_AGE = 300  # seconds an in-process index is reused before it is loaded again from the store
#: Checks of a pasted text at once per process. The engine serves one caller at a time, so a
#: second check could only queue behind the first, holding a server thread: it is refused instead.
CHECKS_AT_ONCE = 1


class RedisDown(StoreError):
    """Redis (the shared index) failed; the message is redis_client.explain's one line, shown
    as the admin's 503 page like a store that cannot be reached."""


class Services:
    def __init__(self, settings: Settings, store: Store | None = None, *, login_ip_failures: int = 30,
                 login_ip_window: float = 900, summary_ttl: float = 10.0, session_limits: Limits | None = None,
                 clock: Callable[[], datetime] = now):
        self.settings = settings
        self.session_limits = session_limits or Limits()
        self.clock = clock  # the time sessions and sign-ins are judged by (tests move it)
        self.check_slots = Slots(CHECKS_AT_ONCE)
        self.snapshots = Snapshots(summary_ttl)
        self.fragments = Fragments()
        self._store = store
        self._lock = threading.Lock()
        self.catalog = ChapterCatalog()
        self.login_limiter = FailureLimiter(login_ip_failures, login_ip_window)
        self._context: Context | None = None
        self._context_key: tuple[tuple[int, str], float] | None = None
        self._engine_lock = threading.Lock()

    @property
    def store(self) -> Store:
        """The store as this request's organisation sees it (web.tenancy.scope); outside a request, all of it."""
        scoped = scoped_store() if has_request_context() else None
        return scoped if scoped is not None else self.root_store

    @property
    def root_store(self) -> Store:
        """Opened on first use, so a store that cannot be reached is a 503 page, not a failed start."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    s = self.settings
                    self._store = open_store(s)
        return self._store

    @contextmanager
    def engine(self) -> Iterator[Tracker]:
        """The tracker that matches pages, one caller at a time (its caches are not thread-safe).

        With Redis the index is shared and always current. The in-process index is a copy of
        the stored fingerprints, so it is loaded again when a chapter was added, changed or
        removed since (the store's catalog stamp moved), and after ENGINE_MAX_AGE at the latest.
        """
        with self._engine_lock:
            if self._context is None or not self.settings.redis_url:
                stamp = self.root_store.catalog_stamp()
                stale = (self._context_key is None or self._context_key[0] != stamp
                         or time.monotonic() - self._context_key[1] > ENGINE_MAX_AGE)
                if self._context is None or stale:
                    self._context = Context(self.settings, store=self.root_store)
                    self._context_key = (stamp, time.monotonic())
            try:  # opening the index (connect) and using it
                yield self._context.tracker
            except Exception as e:
                line = redis_line(e, self.settings.redis_url)
                if line is None:
                    raise
                self._context = None  # opened again on the next request
                raise RedisDown(line) from e

    def redis_status(self) -> str:
        """The index's state in one line: "embedded", "ok: ..." or the cause of a Redis failure
        and its fix (for the admin's status and health check)."""
        url = self.settings.redis_url
        if not url:
            return "embedded (in-process index; FPT_REDIS_URL is not set)"
        from tracker.redis_client import RedisUnavailable, connect, is_cluster, safe_url

        try:
            client = connect(url)
            kind = "Redis Cluster" if is_cluster(client) else "Redis"
            client.close()
        except RedisUnavailable as e:
            return str(e)
        return f"ok: {kind} at {safe_url(url)}"


def redis_line(e: BaseException, url: str) -> str | None:
    """One line naming a Redis failure's cause and fix, or None when `e` is not one."""
    if type(e).__name__ == "RedisUnavailable":
        return str(e)
    if type(e).__module__.startswith("redis."):
        from tracker.redis_client import explain

        return explain(e, url, cluster="Cluster" in type(e).__name__)
    return None


def services() -> Services:
    return current_app.extensions["fptrack"]


def store() -> Store:
    return services().store


def reports() -> Reports:
    """The reports of this request."""
    s = services()
    return Reports(s.store, s.catalog, snapshots_of(s.snapshots, s.store))
