"""Costly requests a few at a time: the others are told to come back in a few seconds
instead of queueing, so one slow request never holds every server thread."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from werkzeug.exceptions import ServiceUnavailable

RETRY_AFTER = 5  # seconds a refused caller is asked to wait


class Busy(ServiceUnavailable):
    """Every slot is taken: a 503 with Retry-After."""

    title = "Busy"

    def __init__(self, description: str):
        super().__init__(description, retry_after=RETRY_AFTER)


class Slots:
    """At most `n` holders at once; one more is refused at once, never made to wait."""

    def __init__(self, n: int):
        self._free = threading.BoundedSemaphore(n)

    @contextmanager
    def take(self, busy: str) -> Iterator[None]:
        """Hold a slot for the block, or raise Busy(busy) when none is free."""
        if not self._free.acquire(blocking=False):
            raise Busy(busy)
        try:
            yield
        finally:
            self._free.release()
