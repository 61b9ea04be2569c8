"""Counting what happened to a batch of queued items (pages, images) as they are processed."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def tally(keys: Iterable[str], process: Callable[[str], Any], each: Callable[[Any], None] | None = None
          ) -> dict[str, int]:
    """Run `process` on each key; counts by outcome ("done", "failed", ...) and of the matches made."""
    counts = {"done": 0, "failed": 0, "matches": 0}
    for key in list(keys):
        r = process(key)
        counts[r.status] = counts.get(r.status, 0) + 1
        counts["matches"] += len(r.matches)
        if each:
            each(r)
    return counts
