"""Query and form parameters checked at the edge: a bad value is a 400 that says what
is allowed, never a traceback from deeper down."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask import abort, request

from tracker.store import MATCH_SORTS, MATCH_STATUSES, PAGE_STATUSES

#: What a report counts: "active" is every match status but dismissed (judged not a copy).
ACTIVE = "active"
SCOPES = (ACTIVE, "all", *MATCH_STATUSES)
MAX_PER_PAGE = 500
MAX_TEXT = 500  # characters in a filter value


@dataclass
class Paging:
    page: int
    per_page: int
    total: int = 0

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def has_prev(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    def to_json(self) -> dict[str, int]:
        return {"page": self.page, "per_page": self.per_page, "total": self.total, "pages": self.pages}


def int_arg(name: str, default: int, lo: int, hi: int) -> int:
    raw = request.args.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        abort(400, f"{name} must be a whole number from {lo} to {hi}, not {raw!r}")
    if not lo <= value <= hi:
        abort(400, f"{name} must be a whole number from {lo} to {hi}, not {raw!r}")
    return value


def text_arg(name: str, source: Any = None) -> str | None:
    """A trimmed text value, or None when absent or empty."""
    raw = (source if source is not None else request.args).get(name, "")
    if not isinstance(raw, str):
        abort(400, f"{name} must be text")
    raw = raw.strip()
    if len(raw) > MAX_TEXT:
        abort(400, f"{name} is longer than {MAX_TEXT} characters")
    return raw or None


def choice_arg(name: str, choices: Sequence[str], default: str | None = None, source: Any = None) -> str | None:
    raw = text_arg(name, source)
    if raw is None:
        return default
    if raw not in choices:
        abort(400, f"{name} must be one of: {', '.join(choices)}; not {raw!r}")
    return raw


def paging(default_per_page: int = 50) -> Paging:
    return Paging(page=int_arg("page", 1, 1, 10**7), per_page=int_arg("per_page", default_per_page, 1, MAX_PER_PAGE))


def sort_arg(default: str = "-containment", allowed: Sequence[str] = MATCH_SORTS) -> str:
    raw = text_arg("sort") or default
    field = raw[1:] if raw.startswith("-") else raw
    if field not in allowed:
        abort(400, f"sort must be one of: {', '.join(allowed)} (with a leading - for descending), not {raw!r}")
    return raw


def scope_arg() -> str:
    return choice_arg("scope", SCOPES, ACTIVE) or ACTIVE


def match_filters() -> dict[str, str | None]:
    """The filters the match lists accept: work, site, status, chapter and page (as page_key)."""
    return {"work": text_arg("work"), "site": text_arg("site"), "status": choice_arg("status", MATCH_STATUSES),
            "chapter": text_arg("chapter"), "page": text_arg("page_key")}


def page_filters() -> dict[str, str | None]:
    return {"status": choice_arg("status", PAGE_STATUSES), "site": text_arg("site"), "url_contains": text_arg("q")}


def json_body() -> dict[str, Any]:
    """The request's JSON object (Content-Type: application/json), else a 400 that says so."""
    if not request.is_json:
        abort(400, "send a JSON object with Content-Type: application/json")
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        abort(400, "the body must be a JSON object")
    return body
