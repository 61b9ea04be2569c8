"""Recent results of the heavy summaries (dashboard, works, a work's report, sites), shared
between requests.

Twenty people opening the dashboard at once share one computation. A result younger than
SUMMARY_TTL seconds is served as it is. An older one is still served at once, while one
background thread computes it again (stale-while-revalidate): no request waits for a
summary that was there a moment ago, so a big catalogue costs the reader nothing but the
page. A change made through the admin clears what is kept, so the next request computes
its summary afresh and the person who made the change sees it. Work done by the crawler
and the workers shows up within SUMMARY_TTL seconds and one computation. ttl 0 turns this off.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)


class Snapshots:
    def __init__(self, ttl: float = 10.0):
        self.ttl = ttl
        self._lock = threading.Lock()
        self._items: dict[Hashable, tuple[float, Any]] = {}
        self._computing: dict[Hashable, threading.Lock] = {}
        self._refreshing: set[Hashable] = set()
        self._generation = 0  # moves on at every clear(): a refresh begun before it is thrown away
        # One thread for every refresh: it keeps one database connection (the SQLite store has one
        # per thread) and never takes more than one core's worth from the requests.
        self._refresher: ThreadPoolExecutor | None = None

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The kept value of `key`; computed now (once, however many ask) when there is none, and
        in the background when the kept one is older than ttl."""
        if self.ttl <= 0:
            return compute()
        with self._lock:
            hit = self._items.get(key)
        if hit is not None:
            if time.monotonic() - hit[0] >= self.ttl:
                self._refresh(key, compute)
            return hit[1]
        with self._lock:
            lock = self._computing.setdefault(key, threading.Lock())
        with lock:  # the others asking for the same key meanwhile wait for this computation
            with self._lock:
                hit = self._items.get(key)
                generation = self._generation
            if hit is not None:
                return hit[1]
            value = compute()
            self._keep(key, value, generation)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._generation += 1

    def close(self) -> None:
        """Stop the background thread (waits for a refresh under way)."""
        with self._lock:
            refresher, self._refresher = self._refresher, None
        if refresher is not None:
            refresher.shutdown(wait=True)

    def _keep(self, key: Hashable, value: Any, generation: int) -> None:
        with self._lock:
            if generation == self._generation:  # not cleared meanwhile: still true of the store
                self._items[key] = (time.monotonic(), value)

    def _refresh(self, key: Hashable, compute: Callable[[], Any]) -> None:
        with self._lock:
            if key in self._refreshing:
                return
            self._refreshing.add(key)
            generation = self._generation
            if self._refresher is None:
                self._refresher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fpt-summaries")
            refresher = self._refresher

        def run() -> None:
            try:
                self._keep(key, compute(), generation)
            except Exception:
                log.warning("refreshing the summary %r failed; the previous one is still shown", key, exc_info=True)
            finally:
                with self._lock:
                    self._refreshing.discard(key)

        refresher.submit(run)
