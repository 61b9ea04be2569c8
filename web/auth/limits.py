"""Failed sign-ins per client address, in this process's memory.

The store limits guesses per account (failed_logins, locked_until); this limits
one address guessing across many accounts, without a write per attempt.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

MAX_ADDRESSES = 10_000  # the oldest addresses are forgotten first, so memory stays bounded


class FailureLimiter:
    def __init__(self, max_failures: int, window_seconds: float, clock: Callable[[], float] = time.monotonic):
        self.max_failures, self.window, self.clock = max_failures, window_seconds, clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def blocked(self, key: str) -> bool:
        """Whether `key` used up its failures in the current window."""
        with self._lock:
            return len(self._recent(key, self.clock())) >= self.max_failures

    def retry_after(self, key: str) -> int:
        """Seconds until `key` may try again (0 when it may now)."""
        with self._lock:
            now = self.clock()
            times = self._recent(key, now)
            if len(times) < self.max_failures:
                return 0
            return max(1, int(self.window - (now - times[-self.max_failures])) + 1)

    def fail(self, key: str) -> None:
        with self._lock:
            now = self.clock()
            times = self._recent(key, now)
            if not times:
                self._failures[key] = times
            times.append(now)
            self._failures.move_to_end(key)
            while len(self._failures) > MAX_ADDRESSES:
                self._failures.popitem(last=False)
