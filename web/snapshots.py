"""Recent results of the heavy summaries (dashboard, works, sites), kept a few seconds.

With 100k matches a dashboard costs a few hundred milliseconds of grouped queries;
twenty people opening it at once would queue twenty of them. Here they share one
computation per SUMMARY_TTL seconds (0 turns this off), and any change made through
the admin clears what is kept. Work done by the crawler and the workers shows up
within SUMMARY_TTL seconds.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any


class Snapshots:
    def __init__(self, ttl: float = 10.0):
        self.ttl = ttl
        self._lock = threading.Lock()
        self._items: dict[Hashable, tuple[float, Any]] = {}
        self._computing: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The kept value of `key` if it is recent enough, else `compute()` (once, however many ask)."""
        if self.ttl <= 0:
            return compute()
        fresh = self._fresh(key)
        if fresh is not None:
            return fresh[1]
        with self._lock:
            lock = self._computing.setdefault(key, threading.Lock())
        with lock:  # the others asking for the same key meanwhile wait for this computation
            fresh = self._fresh(key)
            if fresh is not None:
                return fresh[1]
            value = compute()
            with self._lock:
                self._items[key] = (time.monotonic(), value)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _fresh(self, key: Hashable) -> tuple[float, Any] | None:
        with self._lock:
            hit = self._items.get(key)
        return hit if hit is not None and time.monotonic() - hit[0] < self.ttl else None
