"""Template filters: dates, numbers, shares and links, all safe for crawled values."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import Flask, request, url_for
from markupsafe import Markup, escape

from clikit.plural import counted as _counted
from tracker.wording import copy_kind

from .review.highlight import highlight


def when(value: datetime | str | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A UTC time for people; empty for none."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime(fmt)


def day(value: datetime | str | None) -> str:
    return when(value, "%Y-%m-%d")


def num(value: int | float | None) -> str:
    """1234567 -> 1,234,567."""
    if value is None:
        return ""
    return f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"


def score(value: float | None) -> str:
    """A channel score: counts (a Hamming distance, a run length) as integers, shares to 3 decimals."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


def counted(value: int | None, noun: str, many: str | None = None) -> str:
    """{{ n|counted('chapter') }}: "1 chapter", "1,024 chapters" (the noun agrees with the number)."""
    return _counted(int(value or 0), noun, many, sep=",")


def pct(value: float | None) -> str:
    """0.953 -> 95%; small shares keep a decimal (0.004 -> 0.4%)."""
    if value is None:
        return ""
    p = value * 100
    return f"{p:.0f}%" if p >= 10 or p == 0 else f"{p:.1f}%"


def kind(verdict: str | None) -> str:
    """A match's verdict as people name the kind of copy: full copy, part, excerpt (tracker.wording)."""
    return copy_kind(verdict or "")


def is_web_url(url: str | None) -> bool:
    """Only http(s) URLs with a host become links; javascript:, data: and the like stay text."""
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def link(url: str | None, text: str | None = None) -> Markup:
    """An outbound link for an http(s) URL (no referrer, no follow), else the escaped text."""
    label = url if text is None else text
    if not is_web_url(url):
        return escape(label or "")
    return Markup('<a href="{}" rel="noopener noreferrer nofollow" target="_blank">{}</a>').format(url, label)


def url_with(**changes: Any) -> str:
    """This page's URL with some query parameters changed (None removes one). The query is
    encoded here, never passed to url_for as keywords, where _scheme or _external would count."""
    args = request.args.to_dict()
    for k, v in changes.items():
        if v is None:
            args.pop(k, None)
        else:
            args[k] = str(v)
    base = url_for(request.endpoint, **(request.view_args or {}))
    return f"{base}?{urlencode(args)}" if args else base


#: What url_for leaves unquoted in a query (werkzeug, after the URL standard): the same links either way.
QUERY_SAFE = "!$'()*,/:;?@"


def with_query(base: str, **params: Any) -> str:
    """`base` (a URL built once with url_for) with a query: for a link on every row of a long
    table, where building each with url_for costs as much as the rest of the row."""
    return f"{base}?{urlencode(params, safe=QUERY_SAFE)}"


def init_app(app: Flask) -> None:
    for f in (when, day, num, pct, score, link, kind, counted):
        app.add_template_filter(f)
    app.add_template_global(highlight)
    app.add_template_global(is_web_url)
    app.add_template_global(url_with)
    app.add_template_global(with_query)
