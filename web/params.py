"""Query and form parameters checked at the edge: a bad value is a 400 that says what
is allowed, never a traceback from deeper down."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask import abort, request

from pagetext.scrub import scrub
from tracker.store import MATCH_SORTS, MATCH_STATUSES, PAGE_STATUSES

#: What a report counts: "active" is the copies still up (tracker.store.ACTIVE_STATUSES: not removed, not dismissed).
ACTIVE = "active"
SCOPES = (ACTIVE, "all", *MATCH_STATUSES)
MAX_PER_PAGE = 500
MAX_TEXT = 500  # characters in a filter value
#: Half of a UTF-16 pair on its own: JSON can spell one ("\ud800") but no UTF-8 text holds it,
#: so it would fail deep in the store or in writing the answer. (Pairs decode to one character.)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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


def replace_surrogates(text: str) -> tuple[str, int]:
    """The text with each lone surrogate replaced by U+FFFD, and how many there were."""
    return scrub(text)


def _has_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:  # not recursive: nesting depth is the sender's choice
        v = stack.pop()
        if isinstance(v, str):
            if LONE_SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def json_body(*, surrogates_in: str | None = None) -> dict[str, Any]:
    """The request's JSON object (Content-Type: application/json), else a 400 that says so.
    A lone surrogate anywhere is a 400 too, except in the field `surrogates_in`, whose caller
    replaces them (replace_surrogates)."""
    if not request.is_json:
        abort(400, "send a JSON object with Content-Type: application/json")
    try:
        body = request.get_json(silent=True)
    except RecursionError:
        abort(400, "the JSON nests too deeply")
    if not isinstance(body, dict):
        abort(400, "the body must be a JSON object")
    rest = {k: v for k, v in body.items() if k != surrogates_in} if surrogates_in else body
    if _has_surrogate(rest):
        abort(400, "the JSON holds a lone surrogate (such as \\ud800), which is not a character; "
                   "send text that UTF-8 can encode")
    return body
