"""Value checks and conversions both store backends apply, so they behave alike."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any


def utc(dt: datetime) -> datetime:
    """Aware UTC to the millisecond, the precision both backends keep (a naive datetime is taken as UTC)."""
    dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return dt.replace(microsecond=dt.microsecond // 1000 * 1000)


def to_text(dt: datetime) -> str:
    """Fixed-width ISO text, so that text order is time order."""
    return utc(dt).isoformat(timespec="milliseconds")


def check_status(status: str, allowed: Sequence[str], what: str) -> None:
    if status not in allowed:
        raise ValueError(f"unknown {what} {status!r}; use one of: {', '.join(allowed)}")


def check_window(limit: int | None, offset: int = 0) -> None:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more (or None for all), not {limit}")
    if offset < 0:
        raise ValueError(f"offset must be 0 or more, not {offset}")


# Scores that count something (fingerprint.engine.judge, fingerprint.track): whole numbers.
COUNT_SCORES = frozenset({"longest_run", "simhash_distance", "candidate_channels"})


def clean_scores(scores: dict[str, Any]) -> dict[str, float]:
    """Scores as written and read back: counts as ints (JSON 4070, not 4070.0), shares as floats,
    a whole share too (1.0). A count an earlier version stored as a float reads as an int."""
    out: dict[str, float] = {}
    for k, v in scores.items():
        k = str(k)
        out[k] = int(v) if k in COUNT_SCORES and float(v).is_integer() else float(v)
    return out


def clean_spans(spans: list[dict[str, Any]]) -> list[dict[str, int]]:
    return [{str(k): int(v) for k, v in s.items()} for s in spans]


def clean_counts(counts: dict[str, Any]) -> dict[str, int]:
    return {str(k): int(v) for k, v in counts.items()}


def check_groups(by: Sequence[str], allowed: Sequence[str]) -> list[str]:
    """The group fields, checked: at least one, each known, none twice."""
    by = list(by)
    if not by:
        raise ValueError(f"group by at least one of: {', '.join(allowed)}")
    for name in by:
        if name not in allowed:
            raise ValueError(f"cannot group by {name!r}; use some of: {', '.join(allowed)}")
    if len(set(by)) != len(by):
        raise ValueError(f"a field is repeated in the grouping {by}")
    return by


def parse_sort(sort: str, allowed: Sequence[str]) -> tuple[str, bool]:
    """"-containment" -> ("containment", True): the field and whether the order is descending."""
    descending = sort.startswith("-")
    name = sort[1:] if descending else sort
    if name not in allowed:
        raise ValueError(f"cannot sort by {sort!r}; use one of: {', '.join(allowed)} (\"-\" first for descending)")
    return name, descending


def check_role(role: str, allowed: Sequence[str]) -> None:
    check_status(role, allowed, "role")


def statuses(status: Any, allowed: Sequence[str]) -> str | list[str] | None:
    """A status filter, checked: one status, or a list of them (any of); None for all."""
    if status is None or isinstance(status, str):
        if status is not None:
            check_status(status, allowed, "match status")
        return status
    values = list(dict.fromkeys(status))
    if not values:
        raise ValueError(f"give at least one match status, or None for all; statuses: {', '.join(allowed)}")
    for s in values:
        check_status(s, allowed, "match status")
    return values
