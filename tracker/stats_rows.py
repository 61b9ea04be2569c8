"""`fptrack stats` as records for the machine formats: one per count, then one per failed page."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

STATS_COLUMNS = ["group", "status", "count", "page", "reason"]


def stats_rows(counts: Mapping[str, Any], failures: Iterable[Any] = ()) -> Iterator[dict[str, Any]]:
    """Store.counts() flattened: {"group": "pages", "status": "queued", "count": 3}, ...; then the failed
    pages: {"group": "failed page", "status": "failed", "count": <attempts>, "page": key, "reason": why}."""
    yield {"group": "works", "status": "", "count": counts["works"]}
    yield {"group": "chapters", "status": "", "count": counts["chapters"]}
    for group in ("pages", "matches"):
        for status, n in counts[group].items():
            yield {"group": group, "status": status, "count": n}
    images = counts["images"]
    yield {"group": "images registered", "status": "", "count": images["registered"]}
    for status, n in images["found"].items():
        yield {"group": "images found", "status": status, "count": n}
    for status, n in images["matches"].items():
        yield {"group": "image matches", "status": status, "count": n}
    for page in failures:
        yield {"group": "failed page", "status": page.status, "count": page.attempts, "page": page.key,
               "reason": page.reason}
