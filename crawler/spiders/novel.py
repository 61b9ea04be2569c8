"""The one spider: crawl novel sites, with or without rules, and yield chapter pages.

From each start URL it follows links within the site (depth, domain, rules,
URL normalisation and trap checks decide which), recognises chapter pages by
their text, joins chapters split over several pages by walking their "下一页"
links, and yields one PageItem per chapter. Every page it does not yield is
counted with the reason, per site (crawler.counts); nothing raises.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import (
    CannotResolveHostError,
    DontCloseSpider,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Request, Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import (
    ConnectError,
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)

from ..counts import count
from ..extract import Extracted, extract, is_chapter_text
from ..items import PageItem
from ..middlewares.encoding import FORCE_ENCODING, SITE
from ..middlewares.truncated import REASON as TRUNCATED
from ..middlewares.truncated import TruncatedResponse
from ..rules import SiteRules, make_rules, rules_for_urls
from ..urls import PatternBudget, normalize_url, trap_reason

RECEIVED = "fpt_received"  # bytes of the body received so far (how a cancelled download is told apart)
PARTS = "fpt_parts"  # [(url, title, text), ...] of the parts of a split chapter fetched so far
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
MAX_PARTS = 30


class NovelSpider(scrapy.Spider):
    name = "novel"

    def __init__(self, sites: Any = None, urls: Any = None, idle_wait: float = 0, pattern_budget: int = 40,
                 **kwargs: Any):
        super().__init__(**kwargs)
        raw = json.loads(sites) if isinstance(sites, str) else list(sites or [])
        known = [r if isinstance(r, SiteRules) else make_rules(r) for r in raw]
        if urls:
            given = urls.split(",") if isinstance(urls, str) else list(urls)
            known = rules_for_urls([u.strip() for u in given if u.strip()], known)
        if not known:
            raise ValueError("nothing to crawl: give start URLs (-a urls=https://...) or sites with start_urls")
        self.sites = {s.name: s for s in known}
        # Scrapy's OffsiteMiddleware also checks redirects against these.
        self.allowed_domains = sorted({d for s in known for d in s.domains})
        self.idle_wait = float(idle_wait)
        self.budget = PatternBudget(int(pattern_budget))
        self._idle_since: float | None = None

    @classmethod
    def from_crawler(cls, crawler, *args: Any, **kwargs: Any):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_response, signal=signals.response_received)
        crawler.signals.connect(spider._on_headers, signal=signals.headers_received)
        crawler.signals.connect(spider._on_bytes, signal=signals.bytes_received)
        return spider

    # ---- requests ------------------------------------------------------------

    async def start(self):
        for site in self.sites.values():
            for url in site.start_urls:
                yield self._request(normalize_url(url), site, depth_reset=True)

    def _request(self, url: str, site: SiteRules, callback=None, *, dont_filter: bool = False, priority: int = 0,
                 **meta: Any) -> Request:
        meta[SITE] = site.name
        if not site.obey_robots:
            meta["dont_obey_robotstxt"] = True
        if site.encoding:
            meta[FORCE_ENCODING] = site.encoding
        return Request(url, callback=callback or self.parse, errback=self.failed, meta=meta,
                       dont_filter=dont_filter, priority=priority)

    def _site(self, meta: dict[str, Any]) -> SiteRules:
        return self.sites[meta[SITE]]

    def _follow(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Request]:
        # A site's own limits (its rules' depth and max_pages) under the crawl's global ones.
        if site.depth is not None and int(response.meta.get("depth", 0)) >= site.depth:
            return
        if site.max_pages is not None and self._fetched(site) >= site.max_pages:
            if ex.links:
                count(self.crawler.stats, site.name, "skipped", "links not followed: the site's max_pages reached")
            return
        # The next part of a split chapter is fetched by the chain that joins it, not as a page of its own.
        seen: set[str] = {normalize_url(ex.next_part)} if ex.next_part and ex.kind == "chapter" else set()
        for link in ex.links:
            url = normalize_url(link)
            if url in seen or url == response.url:
                continue
            seen.add(url)
            if not site.allows(url):
                self.crawler.stats.inc_value("fpt/links_outside_rules")
                continue
            reason = trap_reason(url)
            if not reason and self.budget.exhausted(url):
                reason = "URL pattern whose pages hold no chapter"
            if reason:
                count(self.crawler.stats, site.name, "skipped", f"link not followed: {reason}")
                continue
            yield self._request(url, site)

    def _fetched(self, site: SiteRules) -> int:
        return int(self.crawler.stats.get_value(f"site/{site.name.replace('/', '∕')}/fetched", 0))

    # ---- responses -------------------------------------------------------------

    def parse(self, response: Response, **_: Any) -> Iterator[Any]:
        site = self._site(response.meta)
        stats = self.crawler.stats
        count(stats, site.name, "fetched")
        ex = self._extract(response, site)
        if ex is None:
            return
        self.budget.seen(response.url, useful=ex.kind in ("chapter", "catalogue"))
        yield from self._follow(response, site, ex)
        if ex.kind == "catalogue":
            count(stats, site.name, "catalogues")
            return
        if ex.kind != "chapter" and not (site.is_chapter_url(response.url) and ex.text):
            count(stats, site.name, "skipped", "no chapter text on the page")
            return
        if ex.part and ex.part[0] > 1:
            # Reached through its own link: the chain from the first part joins it.
            count(stats, site.name, "skipped", "later part of a split chapter (joined to its first part)")
            return
        yield from self._chapter(response, site, ex, [])

    def parse_part(self, response: Response, **_: Any) -> Iterator[Any]:
        """A later part of a split chapter: add its text and go on to the next part."""
        site = self._site(response.meta)
        count(self.crawler.stats, site.name, "fetched")
        parts = response.meta[PARTS]
        ex = self._extract(response, site)
        if ex is None or not ex.text:
            yield self._item(site, parts, response.meta)
            return
        yield from self._chapter(response, site, ex, parts)

    def _chapter(self, response: Response, site: SiteRules, ex: Extracted,
                 parts: list[tuple[str, str, str]]) -> Iterator[Any]:
        parts = [*parts, (response.url, ex.title, ex.text)]
        nxt = normalize_url(ex.next_part) if ex.next_part else ""
        if nxt and nxt not in {u for u, _, _ in parts} and len(parts) < MAX_PARTS and site.allows(nxt):
            # dont_filter: a part reached earlier through its own link must still be joined here.
            yield self._request(nxt, site, self.parse_part, dont_filter=True, priority=10, depth_reset=True,
                                **{PARTS: parts})
            return
        count(self.crawler.stats, site.name, "chapters")
        yield self._item(site, parts, response.meta, encoding=response.encoding if isinstance(
            response, TextResponse) else "", extractor=ex.extractor)

    def _item(self, site: SiteRules, parts: list[tuple[str, str, str]], meta: dict[str, Any], **kw: Any) -> PageItem:
        url, title, _ = parts[0]
        return PageItem(url=url, site=site.name, title=title, text="\n".join(t for _, _, t in parts),
                        parts=[u for u, _, _ in parts], depth=int(meta.get("depth", 0)), **kw)

    def _extract(self, response: Response, site: SiteRules) -> Extracted | None:
        """The page's extraction, or None (counted as skipped) when it is not a text page."""
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()
        if not isinstance(response, TextResponse) or (ctype and ctype not in TEXT_TYPES):
            count(self.crawler.stats, site.name, "skipped", f"not a web page ({ctype or 'binary data'})")
            return None
        if ctype == "text/plain":
            text = response.text.strip()
            kind = "chapter" if is_chapter_text(text) else "other"
            return Extracted(title="", text=text, kind=kind, next_part=None, part=None, links=[],
                             chapter_links=[], extractor="plain text")
        try:
            return extract(response.text, response.url, site.selectors)
        except Exception as e:  # a parser bug on one hostile page must not stop the crawl
            self.logger.warning("cannot extract %s: %s", response.url, e)
            count(self.crawler.stats, site.name, "failed", f"extraction error: {type(e).__name__}")
            return None

    # ---- failures ---------------------------------------------------------------

    def failed(self, failure) -> Iterable[Any]:
        """Count a request that produced no response, with why; a broken chain keeps its parts."""
        request = failure.request
        site = self._site(request.meta)
        what, reason = classify(failure, self.crawler.settings)
        if failure.check(HttpError):
            count(self.crawler.stats, site.name, "fetched")  # a response did arrive
        count(self.crawler.stats, site.name, what, reason)
        parts = request.meta.get(PARTS)
        if parts:
            yield self._item(site, parts, request.meta)

    def _on_idle(self, spider=None) -> None:
        """With a shared frontier, wait a little for the other crawlers to add requests before closing."""
        import time

        if self.idle_wait <= 0:
            return
        if self._idle_since is None:
            self._idle_since = time.monotonic()
        if time.monotonic() - self._idle_since < self.idle_wait:
            raise DontCloseSpider

    def _on_response(self, *_: Any, **__: Any) -> None:
        self._idle_since = None

    @staticmethod
    def _on_headers(request: Request, **_: Any) -> None:
        request.meta[RECEIVED] = 0  # a retry is a copy of the request, meta and all: count afresh

    @staticmethod
    def _on_bytes(data: bytes, request: Request, **_: Any) -> None:
        # Scrapy cancels a body that grows past DOWNLOAD_MAXSIZE (no Content-Length to refuse it by)
        # with a bare DownloadCancelledError; the byte count is what tells it from a lost connection.
        request.meta[RECEIVED] = request.meta.get(RECEIVED, 0) + len(data)


def classify(failure, settings) -> tuple[str, str]:
    """("skipped" | "failed", reason) for a request that failed."""
    exc = failure.value
    request = getattr(failure, "request", None)
    maxsize = (request.meta.get("download_maxsize") if request is not None else None) or \
        settings.getint("DOWNLOAD_MAXSIZE")
    if failure.check(TruncatedResponse):
        return "failed", TRUNCATED
    text = str(exc)
    # Too large, said three ways: a Content-Length over the limit ("max size"), a body that grew
    # past it (a bare cancel, but the bytes were counted), a body that decompressed past it.
    received = request.meta.get(RECEIVED, 0) if request is not None else 0
    if ("max size" in text or "maxsize" in text.lower() or "larger than download" in text
            or (failure.check(DownloadCancelledError) and maxsize and received > maxsize)):
        return "skipped", f"larger than {maxsize} bytes"
    if failure.check(HttpError):
        status = exc.response.status
        kind = "skipped" if 400 <= status < 500 and status not in (408, 429) else "failed"
        return kind, f"HTTP {status}"
    if failure.check(IgnoreRequest):
        if "robots.txt" in text:
            return "skipped", "robots.txt forbids it"
        if "offsite" in text.lower() or "allowed_domains" in text:
            return "skipped", "outside the allowed domains"
        return "skipped", f"ignored: {text[:80]}"
    if failure.check(DownloadTimeoutError, TimeoutError, TCPTimedOutError):
        return "failed", f"timed out after {settings.getfloat('DOWNLOAD_TIMEOUT'):g} s"
    if failure.check(CannotResolveHostError, DNSLookupError):
        return "failed", "host name not found"
    if failure.check(DownloadConnectionRefusedError, ConnectionRefusedError):
        return "failed", "connection refused"
    if failure.check(ResponseDataLossError, DownloadCancelledError, DownloadFailedError, ConnectError,
                     ConnectionLost):
        return "failed", "connection lost"
    return "failed", f"{type(exc).__name__}: {text[:80]}"
