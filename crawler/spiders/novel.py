"""The one spider: crawl novel sites, with or without rules, and yield chapter pages.

From each start URL it follows links within the site (depth, domain, rules,
URL normalisation and trap checks decide which), recognises chapter pages by
their text, joins chapters split over several pages by walking their "下一页"
links, and yields one PageItem per chapter. It also reads the site's sitemaps
(crawler.sitemaps) and feeds their URLs into the crawl like links of depth 1.

No page is lost without a word: every request ends as exactly one of catalogues,
stored, unchanged, not modified, parts joined, skipped (with a reason) or
failed (with a reason), so that per site

    fetched + no response == catalogues + stored + unchanged + not modified
                             + parts joined + skipped + failed

("no response": requests that ended without one, like robots.txt refusals and
timeouts). Links not followed are counted apart ("links not followed", with
the reason): they never became requests. Nothing raises.

This module holds the spider, its requests, the following of links and the signals it
listens to; its mixins hold the rest: the chapter items and split chapters
(crawler.spiders.chapters), the images (crawler.spiders.images), robots.txt and the
sitemaps (crawler.spiders.sitemap_following) and the extraction of a page's text
(crawler.spiders.page_extraction); crawler.spiders.failures classifies failed requests.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError

from pagetext.extraction.page import Extracted
from pagetext.extraction.sitememory import SiteLines

from ..counts import count
from ..items import NotModifiedItem
from ..meta import (
    CHAPTER_LINK,
    CONDITIONAL,
    EXTRACT,
    FORCE_ENCODING,
    IMAGE_OF,
    PARTS,
    RECEIVED,
    ROOT,
    SITE,
)
from ..middlewares.conditional import made_by
from ..rules import SiteRules, make_rules, rules_for_urls
from ..urls import MAX_URL_LENGTH, PatternBudget, normalize_url, trap_reason
from .chapters import (  # JOINED, LONE: crawler.extensions.heldparts imports them from here
    Chapters,
)
from .failures import classify
from .images import PageImages
from .page_extraction import PageExtraction
from .sitemap_following import SitemapFollowing

# The rules that decide a page's text: a change to one of them makes stored validators void.
EXTRACTION_RULES = ("title", "content", "next_page", "chapter_links", "encoding", "chapter_urls", "render")


class NovelSpider(Chapters, PageImages, SitemapFollowing, PageExtraction, scrapy.Spider):
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
        self.made_by = {s.name: made_by({k: v for k, v in s.to_dict().items() if k in EXTRACTION_RULES})
                        for s in known}
        # Scrapy's OffsiteMiddleware also checks redirects against these.
        self.allowed_domains = sorted({d for s in known for d in s.domains})
        self.idle_wait = float(idle_wait)
        self.budget = PatternBudget(int(pattern_budget))
        self._idle_since: float | None = None
        self.state: dict[str, Any] = {}  # replaced by the saved one when a paused job resumes
        self._sitemaps: dict[str, int] = {}  # per site: sitemaps requested
        self._sitemap_urls: dict[str, int] = {}  # per site: URLs taken from its sitemaps
        self._robots_read: set[str] = set()  # site roots whose robots.txt gave its sitemaps
        self._images: dict[str, set[str]] = {}  # per site: image URLs requested in this crawl
        self._site_lines = SiteLines()  # per site: lines it repeats on many pages, dropped from the next

    @classmethod
    def from_crawler(cls, crawler, *args: Any, **kwargs: Any):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_response, signal=signals.response_received)
        crawler.signals.connect(spider._on_headers, signal=signals.headers_received)
        crawler.signals.connect(spider._on_bytes, signal=signals.bytes_received)
        crawler.signals.connect(spider._on_dropped, signal=signals.request_dropped)
        crawler.signals.connect(spider._on_error, signal=signals.spider_error)
        crawler.signals.connect(spider._on_robots, signal=signals.robots_parsed)
        return spider

    # ---- requests ------------------------------------------------------------

    async def start(self):
        for site in self.sites.values():
            roots = list(dict.fromkeys(normalize_url(urljoin(u, "/")) for u in site.start_urls))
            for root in roots:
                # robots.txt names the sitemaps; /sitemap.xml is read too when it does not list it.
                # When the site's robots.txt is obeyed, Scrapy's robots middleware fetches it anyway
                # and its robots_parsed signal brings the sitemaps (see _on_robots): fetched once.
                if self._obeys_robots(site):
                    continue
                yield self._request(urljoin(root, "/robots.txt"), site, self.parse_robots,
                                    errback=self.sitemap_failed, priority=20, depth_reset=True,
                                    dont_obey_robotstxt=True, handle_httpstatus_all=True, **{ROOT: root})
            for url in site.start_urls:
                yield self._request(normalize_url(url), site, depth_reset=True)

    def _request(self, url: str, site: SiteRules, callback=None, *, dont_filter: bool = False, priority: int = 0,
                 errback=None, **meta: Any) -> Request:
        meta[SITE] = site.name
        if not site.obey_robots:
            meta["dont_obey_robotstxt"] = True
        if site.encoding:
            meta[FORCE_ENCODING] = site.encoding
        if callback is None:
            meta[CONDITIONAL] = self.made_by[site.name]  # a page that may be stored: a 304 stands for it
        if callback in (None, self.parse, self.parse_part):
            meta[EXTRACT] = site.selectors  # its text is extracted (in a worker, by crawler.middlewares.extract)
        return Request(url, callback=callback or self.parse, errback=errback or self.failed, meta=meta,
                       dont_filter=dont_filter, priority=priority)

    def _site(self, meta: dict[str, Any]) -> SiteRules:
        return self.sites[meta[SITE]]

    def _follow(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Request]:
        # The next part of a split chapter is fetched by the chain that joins it, not as a page of its own.
        skip = {normalize_url(ex.next_part)} if ex.next_part and ex.kind == "chapter" else set()
        yield from self._links(response, site, ex.links, skip, chapters=set(ex.chapter_links))

    def _links(self, response: Response, site: SiteRules, links: Iterable[str], skip: set[str] = frozenset(),
               chapters: set[str] = frozenset()) -> Iterator[Request]:
        """Requests for the links of a page (or a sitemap's URLs), each one refused counted with why."""
        links = list(links)
        if not links:
            return
        depth = int(response.meta.get("depth", 0))
        # A site's own limits (its rules' depth and max_pages) under the crawl's global ones; counted
        # here, since Scrapy's DepthMiddleware would drop the requests without a word.
        limit = self.crawler.settings.getint("DEPTH_LIMIT")
        why = ""
        if site.depth is not None and depth >= site.depth:
            why = "the site's depth reached"
        elif limit and depth + 1 > limit:
            why = f"deeper than {limit} links"
        elif site.max_pages is not None and self._fetched(site) >= site.max_pages:
            why = "the site's max_pages reached"
        if why:
            count(self.crawler.stats, site.name, "links not followed", why, n=len(links))
            return
        seen = set(skip)
        for link in links:
            if len(link) > 4 * MAX_URL_LENGTH:  # refused before normalising, whose cost grows with the link
                count(self.crawler.stats, site.name, "links not followed", trap_reason(link))
                continue
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
                count(self.crawler.stats, site.name, "links not followed", reason)
                continue
            # A chapter link's page may be a chapter posted as pictures, with no text to tell it by.
            yield self._request(url, site, **({CHAPTER_LINK: True} if link in chapters else {}))

    def _fetched(self, site: SiteRules) -> int:
        return int(self.crawler.stats.get_value(f"site/{site.name.replace('/', '∕')}/fetched", 0))

    # ---- responses -------------------------------------------------------------

    def parse(self, response: Response, **_: Any) -> Iterator[Any]:
        site = self._site(response.meta)
        stats = self.crawler.stats
        count(stats, site.name, "fetched")
        if response.status == 304:
            # The stored page is current (crawler.middlewares.conditional): no body to extract, but
            # the page is still up (a copy marked removed on it is back: crawler.pipelines.store).
            count(stats, site.name, "not modified")
            yield NotModifiedItem(url=response.url, site=site.name)
            return
        ex = self._extract(response, site)
        if ex is None:
            return
        self.budget.seen(response.url, useful=ex.kind in ("chapter", "catalogue"))
        yield from self._follow(response, site, ex)
        yield from self._image_requests(response, site, ex)
        if ex.kind == "catalogue":
            count(stats, site.name, "catalogues")
            return
        if ex.kind != "chapter" and not (site.is_chapter_url(response.url) and ex.text):
            count(stats, site.name, "skipped", "no chapter text on the page")
            return
        if len(ex.chapters) > 1:
            yield from self._whole_work(response, site, ex)
            return
        if ex.part and ex.part[0] > 1:
            yield from self._later_part(response, site, ex)
            return
        yield from self._chapter(response, site, ex, [])

    # ---- failures ---------------------------------------------------------------

    def failed(self, failure) -> Iterable[Any]:
        """Count a request that produced no response, with why; a broken chain keeps its parts."""
        request = failure.request
        site = self._site(request.meta)
        what, reason = classify(failure, self.crawler.settings)
        # "fetched" when a response did arrive (an HTTP error), else "no response": every request counted once.
        count(self.crawler.stats, site.name, "fetched" if failure.check(HttpError) else "no response")
        count(self.crawler.stats, site.name, what, reason)
        parts = request.meta.get(PARTS)
        if parts:
            yield self._item(site, parts, request.meta)

    # ---- the end of the crawl -----------------------------------------------------

    def _on_idle(self, spider=None) -> None:
        """Store the later parts no chain joined; with a shared frontier, wait a little for the other
        crawlers to add requests before closing."""
        import time

        if self._flush_lone():
            raise DontCloseSpider
        if self.idle_wait <= 0:
            return
        if self._idle_since is None:
            self._idle_since = time.monotonic()
        if time.monotonic() - self._idle_since < self.idle_wait:
            raise DontCloseSpider

    def _on_dropped(self, request: Request, **_: Any) -> None:
        """A redirect to a page already fetched is dropped by the duplicate filter: its response counts."""
        if request.meta.get(IMAGE_OF):
            if request.meta.get(SITE) in self.sites:
                count(self.crawler.stats, request.meta[SITE], "images skipped", "fetched already in this crawl")
            return
        if request.meta.get("redirect_urls") and request.meta.get(SITE) in self.sites:
            count(self.crawler.stats, request.meta[SITE], "fetched")
            count(self.crawler.stats, request.meta[SITE], "skipped", "redirected to a page already fetched")

    def _on_error(self, failure, response: Response, **_: Any) -> None:
        """A bug in a callback must not lose the page without a word."""
        site = response.meta.get(SITE) if response is not None else None
        if site in self.sites and response.request is not None and response.request.callback in (
                self.parse, self.parse_part):
            count(self.crawler.stats, site, "failed", f"crawler error: {type(failure.value).__name__}")

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
