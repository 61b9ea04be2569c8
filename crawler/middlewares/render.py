"""Send a page to the browser when its chapter is written by a script (crawler.render).

A page is rendered when it holds no chapter text as fetched but does hold scripts
that could write one: an inline script with a long escaped string (innerHTML = "\\u9648…"),
or a fetch / XMLHttpRequest / $.ajax / $.get / $.post call, or its site's rules say
`render = true`. It is fetched once more, in chromium, with the same priority and
callbacks; the spider sees only the rendered response. Static pages cost one search
for "<script" in their bytes, and pages with ordinary scripts a few regex searches in
those scripts; extract() runs here only on pages whose scripts look like that.

Rendered pages are counted per site as "rendered" (stats key site/<site>/rendered,
kept with the crawl's counts), and in all as render/pages. Without a browser such a
page fails with the reason NEEDS_BROWSER; the crawl goes on.
"""
from __future__ import annotations

import re

from scrapy.http import HtmlResponse

from pagetext.extraction.page import extract, is_chapter_text

from ..counts import count
from ..meta import SITE
from ..render import NEEDS_BROWSER, NeedsBrowser, chromium_path, render_meta

__all__ = ["RenderMiddleware", "needs_rendering", "NeedsBrowser", "NEEDS_BROWSER"]

_SCRIPT = re.compile(rb"<script\b", re.I)
_SCRIPT_TAG = re.compile(r"<script\b[^>]{0,500}>|</script\s*>", re.I)
# 20 escaped characters in a row: \u9648\u5b88… or \x..; a JSON-ish string of a chapter is far longer.
_ESCAPED_RUN = re.compile(r"(?:\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}){20}")
_LOADS_DATA = re.compile(r"\bfetch\s*\(|XMLHttpRequest|\$\.(?:ajax|get|post|getJSON)\s*\(|\baxios\b")
_MAX_SCRIPT_SCAN = 512 * 1024  # characters of inline script read per page


def needs_rendering(html: str) -> bool:
    """Whether the page's inline scripts look like they write its text (escaped strings, data requests)."""
    # Opening and closing tags found in one pass and paired (a lazy <script>.*?</script> would
    # rescan to the end of the page from every opening that is never closed).
    scanned = 0
    opened = None
    for m in _SCRIPT_TAG.finditer(html):
        if not m.group().startswith("</"):
            opened = m.end() if opened is None else opened
            continue
        if opened is None:
            continue
        code = html[opened : m.start()]
        opened = None
        if _ESCAPED_RUN.search(code) or _LOADS_DATA.search(code):
            return True
        scanned += len(code)
        if scanned > _MAX_SCRIPT_SCAN:
            return False
    return False


class RenderMiddleware:
    """process_response: re-request in the browser the pages whose text a script writes."""

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_response(self, request, response):
        stats = self.crawler.stats
        site_name = request.meta.get(SITE)
        if request.meta.get("playwright"):
            if site_name:
                count(stats, site_name, "rendered")
            stats.inc_value("render/pages")
            return response
        if not isinstance(response, HtmlResponse) or response.status != 200 or not _SCRIPT.search(response.body):
            return response
        site = getattr(self.crawler.spider, "sites", {}).get(site_name)
        if site is None:
            return response
        if not getattr(site, "render", False):
            if not needs_rendering(response.text):
                return response
            ex = extract(response.text, response.url, site.selectors)
            if ex.kind != "other" or is_chapter_text(ex.text):
                return response  # the text is there already: the scripts are something else
        if chromium_path() is None:
            stats.inc_value("render/no_browser")
            raise NeedsBrowser(NEEDS_BROWSER)
        stats.inc_value("render/requested")
        return request.replace(meta=render_meta(request.meta), dont_filter=True)
