"""How long evidence is kept: FPT_EVIDENCE_DAYS days after its page is gone from the store,
or after every copy on it was marked removed; 0 keeps it as long as the page is stored.

`expire_evidence` is what the daily task calls; it is safe to run at any time and twice."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from tracker.store import Store, now


@dataclass
class Expired:
    marked: int  # pages found gone from the store (their evidence counts its days from now)
    removed: int  # evidence files removed


def _removed_at(history: list[dict]) -> datetime | None:
    """When a match was last marked removed (its history's last "removed" entry)."""
    for entry in reversed(history or []):
        if entry.get("status") == "removed":
            at = entry.get("at")
            if isinstance(at, datetime):
                return at
            try:
                return datetime.fromisoformat(str(at))
            except ValueError:
                return None
    return None


def expire_evidence(store: Store, days: int, *, at: datetime | None = None) -> Expired:
    """Mark the evidence of pages gone from the store, and remove the evidence that has been kept
    `days` days past its page (days = 0: as soon as the page is gone)."""
    at = at or now()
    cutoff = at - timedelta(days=days)
    marked = store.mark_evidence_gone(at)
    removed = store.purge_evidence(cutoff)
    if days > 0:
        # Pages still stored whose every copy was taken down: kept `days` days after the last removal.
        by_page: dict[str, list[datetime | None]] = {}
        for m in store.matches(status="removed"):
            by_page.setdefault(m.page, []).append(_removed_at(m.history))
        for page, times in by_page.items():
            if None in times or max(times) > cutoff:
                continue
            if store.count_matches(page=page) == len(times) and store.evidence(page):
                removed += store.delete_evidence(page)
    return Expired(marked, removed)
