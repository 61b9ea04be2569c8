"""The external stylesheets of a page, so that text they hide is dropped on static pages too.

A site may hide its junk characters with a rule in /css/style.css rather than in a <style>
block. Static pages are read without a browser, so the crawler fetches a page's stylesheets
itself (crawler.middlewares.extract): at most MAX_PER_PAGE <link rel="stylesheet"> of the
page's own host, not print-only, each fetched once per crawl through Scrapy's downloader
(robots.txt, politeness and the size limit apply), cut to pagetext.visibility's budget.
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

__all__ = ["MAX_PER_PAGE", "stylesheet_urls"]

MAX_PER_PAGE = 4
_LINK = re.compile(r"<link\b([^<>]{0,1000})>", re.I)  # bounded: a tag is read once, whatever the page holds
_ATTR = re.compile(r"""([a-z-]{1,20})\s*=\s*(?:"([^"]{0,2000})"|'([^']{0,2000})'|([^\s"'>]{1,2000}))""", re.I)
_HEAD_END = re.compile(r"</head\s*>|<body\b", re.I)
_MAX_SCAN = 256 * 1024  # characters of the page searched for <link>s (they belong in the head)


def stylesheet_urls(html: str, page_url: str) -> list[str]:
    """Absolute URLs of the page's screen stylesheets on its own host, in order, at most MAX_PER_PAGE."""
    end = _HEAD_END.search(html, 0, _MAX_SCAN)
    head = html[: end.start() if end else _MAX_SCAN]
    host = urlsplit(page_url).hostname
    out: list[str] = []
    for m in _LINK.finditer(head):
        attrs = {a.group(1).lower(): next(v for v in a.groups()[1:] if v is not None) for a in _ATTR.finditer(m.group(1))}
        if "stylesheet" not in attrs.get("rel", "").lower().split() or not attrs.get("href"):
            continue
        media = attrs.get("media", "").strip().lower()
        if media and not any(w in media for w in ("all", "screen")):
            continue  # print- or speech-only
        url = urljoin(page_url, attrs["href"].strip())
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.hostname != host or url in out:
            continue
        out.append(url)
        if len(out) >= MAX_PER_PAGE:
            break
    return out
