"""Keep the HTTP exchanges of the crawl until their page is stored, as evidence.

Scrapy's `response_downloaded` signal fires as the download handler returns, before any
downloader middleware runs: the body is as the server sent it (still gzip- or
br-encoded when it was), the headers as received, the request's headers as sent. Each
response that could be a page is held here by URL, newest last, within a byte budget
(the oldest go first); when the store pipeline stores a page it asks for the exchanges of
the page's parts and keeps them as one WARC file (tracker.evidence.warc), so only stored
pages cost a WARC. The WARC of a response is made once and shared by every page cut from
it (the chapters of a page that holds a whole work), so they share its bytes in the store.

A page rendered in the browser (crawler.render) has two fetches of one URL: the static one
(held as above: what the server sent) and the browser's, whose DOM is added to the WARC as
a conversion record, and whose full-page screenshot is kept beside it.
"""
from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

from tracker.evidence.warc import Captured, Exchange, exchange_warc, rendered_warc
from tracker.store import now

log = logging.getLogger(__name__)

KEEP_BYTES = 64 * 1024 * 1024  # bodies held at most, all responses together (at least 4 x the evidence limit)
# Responses no page is made of: the spider's callbacks for these never yield a PageItem. (An image
# is held too: a picture that holds text is evidence of a chapter posted as pictures; the store
# pipeline takes it out at once, kept or not: crawler.pipelines.store.)
_NOT_PAGES = frozenset({"parse_robots", "parse_sitemap"})


@dataclass
class Held:
    """What the crawl fetched at one URL, until a page made of it is stored."""
    exchange: Exchange | None = None
    rendered: bytes | None = None  # the browser's DOM
    rendered_at: datetime | None = None
    screenshot: bytes | None = None
    warc: Captured | None = None  # made on first use, then shared
    size: int = 0

    def files(self, url: str, max_bytes: int) -> tuple[Captured | None, bytes | None]:
        """The WARC (exchange, then the rendered DOM) and the screenshot of this URL."""
        if self.warc is None and (self.exchange is not None or self.rendered is not None):
            parts = []
            if self.exchange is not None:
                parts.append(exchange_warc(self.exchange, max_bytes))
            if self.rendered is not None:
                parts.append(rendered_warc(url, self.rendered, self.rendered_at or now(), max_bytes))
            first = parts[0]
            self.warc = Captured(b"".join(p.data for p in parts), url, first.fetched_at,
                                 any(p.truncated for p in parts), first.body_sha256, first.body_length)
        return self.warc, self.screenshot


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """Scrapy's Headers (bytes, several values per name) as (name, value) text pairs."""
    out = []
    for name, values in headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        for v in values if isinstance(values, (list, tuple)) else [values]:
            out.append((key, v.decode("latin-1") if isinstance(v, bytes) else str(v)))
    return out


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _protocol(name: str | None) -> str:
    """The HTTP version as a status line writes it ("h2", Scrapy's name for HTTP/2, is "HTTP/2")."""
    if name and name.upper().startswith("HTTP/"):
        return name.upper()
    return "HTTP/2" if name and "2" in name else "HTTP/1.1"


def screenshot_of(request: Any) -> bytes | None:
    """The screenshot crawler.render took of this request's page (taken out of its meta: it is big)."""
    from .render import take_screenshot

    for pm in request.meta.get("playwright_page_methods") or ():
        if getattr(pm, "method", None) is take_screenshot and isinstance(pm.result, bytes):
            shot, pm.result = pm.result, None
            return shot
    return None


class Captures:
    """The exchanges of recent responses, by URL, within `keep_bytes` of bodies."""

    def __init__(self, max_bytes: int, keep_bytes: int | None = None):
        self.max_bytes = max_bytes
        self.keep_bytes = max(keep_bytes or KEEP_BYTES, 4 * max_bytes)
        self.held: OrderedDict[str, Held] = OrderedDict()
        self.size = 0

    def on_response(self, response: Any, request: Any, spider: Any = None) -> None:
        """The response_downloaded signal: hold what may become a page."""
        callback = getattr(request.callback, "__name__", "")
        if callback in _NOT_PAGES or response.status == 304:
            return
        try:
            self._hold(response, request)
        except Exception:  # evidence never stops the crawl
            log.exception("cannot hold the exchange of %s as evidence", response.url)

    def _hold(self, response: Any, request: Any) -> None:
        whole = response.body
        body = whole if len(whole) <= self.max_bytes else whole[: self.max_bytes]  # the rest is never kept
        entry = self.held.pop(response.url, None) or Held()
        self.size -= entry.size
        entry.warc = None
        if request.meta.get("playwright"):
            entry.rendered, entry.rendered_at = whole, now()  # rendered_warc cuts it, saying so
            shot = screenshot_of(request)
            entry.screenshot = shot if shot is not None and len(shot) <= self.max_bytes else None
        else:
            entry.exchange = Exchange(
                url=response.url, method=request.method, request_headers=_pairs(request.headers),
                status=response.status, reason=_reason(response.status),
                protocol=_protocol(getattr(response, "protocol", None)), headers=_pairs(response.headers),
                body=body, fetched_at=now(), ip=str(getattr(response, "ip_address", None) or ""),
                body_length=len(whole), body_sha256=hashlib.sha256(whole).hexdigest() if len(whole) > len(body) else "")
        entry.size = sum(len(b) for b in (entry.exchange.body if entry.exchange else b"", entry.rendered or b"",
                                           entry.screenshot or b""))
        self.held[response.url] = entry
        self.size += entry.size
        while self.size > self.keep_bytes and len(self.held) > 1:
            _, old = self.held.popitem(last=False)
            self.size -= old.size

    def take(self, url: str) -> Captured | None:
        """The WARC of one URL's exchange (an image's), no longer held afterwards; None when not held."""
        entry = self.held.pop(url, None)
        if entry is None:
            return None
        self.size -= entry.size
        return entry.files(url, self.max_bytes)[0]

    def files(self, urls: list[str]) -> tuple[Captured | None, list[tuple[str, bytes]], list[str]]:
        """For a page made of these URLs (its parts, in order): one WARC of them all, the
        screenshots (url, png), and the URLs whose exchange is no longer held."""
        warcs, shots, missing = [], [], []
        for url in urls:
            entry = self.held.get(url)
            if entry is None:
                missing.append(url)
                continue
            warc, shot = entry.files(url, self.max_bytes)
            if warc is not None:
                warcs.append(warc)
            if shot:
                shots.append((url, shot))
        if not warcs:
            return None, shots, missing
        if len(warcs) == 1:
            return warcs[0], shots, missing
        first = warcs[0]
        return (Captured(b"".join(w.data for w in warcs), first.url, first.fetched_at, any(w.truncated for w in warcs),
                         first.body_sha256, first.body_length), shots, missing)
