"""The traps of the sample pirate site that are made up per request: the endless calendar
(`calendar_page`), links given fresh session ids (`_with_sid`), and `respond`, which answers a
request from the built pages and makes those traps up on the fly.
"""
from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import parse_qsl, urlencode, urlsplit

from web.demo.pages import Resource, _not_found


def calendar_page(day: _dt.date) -> Resource:
    """One day of the endless calendar: it links to the day before and the day after."""
    links = []
    for label, delta in (("前一天", -1), ("后一天", 1)):
        try:
            other = day + _dt.timedelta(days=delta)
        except OverflowError:
            continue
        links.append(f'<a href="/calendar?d={other.isoformat()}">{label}</a>')
    body = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>万年历 {day.isoformat()}</title></head><body><h1>{day.year}年{day.month}月{day.day}日</h1>"
        f"<p>宜：出行、会友。忌：动土。</p><p>{' '.join(links)}</p><p><a href='/'>首页</a></p></body></html>"
    )
    headers = (("Content-Type", "text/html; charset=utf-8"),)
    return Resource(200, headers, body.encode("utf-8"), "trap", encoding="utf-8")


_HREF = re.compile(rb'href="(/[^"#]*)"')


def _with_sid(body: bytes, new_sid: Callable[[], str]) -> bytes:
    """Give every site link of `body` a fresh session id, as sites that track sessions in URLs do."""
    def add(m: re.Match) -> bytes:
        link = m.group(1)
        return b'href="' + link + (b"&" if b"?" in link else b"?") + b"sid=" + new_sid().encode() + b'"'

    return _HREF.sub(add, body)


def respond(pages: dict[str, Resource], target: str, new_sid: Callable[[], str] | None = None) -> Resource:
    """The answer to a request for `target` (path and query): calendar days and session ids are made up on the fly."""
    if target in pages:
        return pages[target]
    parts = urlsplit(target)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(k == "sid" for k, _ in query):
        rest = urlencode([(k, v) for k, v in query if k != "sid"])
        canonical = respond(pages, parts.path + (f"?{rest}" if rest else ""), None)
        if canonical.status != 200 or not (canonical.header("Content-Type") or "").startswith("text/html"):
            return canonical
        body = _with_sid(canonical.body, new_sid) if new_sid else canonical.body
        return replace(canonical, kind="duplicate", body=body)
    if parts.path == "/calendar":
        try:
            return calendar_page(_dt.date.fromisoformat(dict(query).get("d", "")))
        except ValueError:
            return _not_found(kind="")
    return _not_found(kind="")
