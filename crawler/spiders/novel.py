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
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

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

from fingerprint.image import media_type

from ..counts import count
from fingerprint.extraction.page import Extracted, extract, is_chapter_text
from fingerprint.extraction.sitememory import SiteLines
from ..items import ImageItem, NotModifiedItem, PageItem
from ..middlewares.conditional import CONDITIONAL, IMAGE, made_by
from ..middlewares.egress import RefusedRequest
from ..middlewares.encoding import FORCE_ENCODING, SITE
from ..middlewares.extract import CSS, EXTRACTED, WORKER_DIED
from ..middlewares.truncated import REASON as TRUNCATED
from ..middlewares.truncated import TruncatedResponse
from ..render import NEEDS_BROWSER, NeedsBrowser
from ..rules import SiteRules, host_of, make_rules, rules_for_urls
from ..sitemaps import (MAX_SITEMAPS, MAX_URLS, SitemapError, default_sitemaps, parser_sitemaps, read_sitemap,
                        robots_sitemaps)
from ..urls import MAX_URL_LENGTH, PatternBudget, normalize_url, trap_reason

RECEIVED = "fpt_received"  # bytes of the body received so far (how a cancelled download is told apart)
PARTS = "fpt_parts"  # [(url, title, text), ...] of the parts of a split chapter fetched so far
FLUSH = "fpt_flush"  # URLs of lone later parts to store on their own now (see _on_idle)
ROOT = "fpt_root"  # the site root whose robots.txt a request asks for
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
_HTML_TYPES = ("", *(t for t in TEXT_TYPES if t != "text/plain"))  # what extract() reads (no type: sniffed as HTML)
MAX_PARTS = 30
JOINED_TO_FIRST = "later part of a split chapter (joined to its first part)"
# Keys of spider.state, which Scrapy keeps in the job folder across a pause (SpiderState).
LONE, JOINED = "lone_parts", "joined_parts"
IMAGE_OF = "fpt_image_of"  # request meta: the page that shows the image requested
IMAGE_AT = "fpt_image_at"  # request meta: the image's place among the page's images (page order)
CHAPTER_LINK = "fpt_chapter_link"  # request meta: a catalogue linked the page as a chapter
MAX_IMAGE_BYTES = 8 * 2**20  # as tracker.media.images.MAX_IMAGE_BYTES: larger images are not fetched
MAX_IMAGES_PER_SITE = 2000  # images requested per site and crawl (covers repeat on every page of a book)
# The rules that decide a page's text: a change to one of them makes stored validators void.
EXTRACTION_RULES = ("title", "content", "next_page", "chapter_links", "encoding", "chapter_urls", "render")


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

    def _whole_work(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """A page that holds a whole work, each chapter in its own wrapper: one item per chapter.

        Each is stored under the page's URL with a "#chapter-k" fragment (the store keys pages by
        item.url as given), so every chapter is fingerprinted and matched on its own."""
        encoding = response.encoding if isinstance(response, TextResponse) else ""
        for k, (title, text) in enumerate(ex.chapters, 1):
            count(self.crawler.stats, site.name, "chapters")
            yield PageItem(url=f"{response.url}#chapter-{k}", site=site.name, title=title, text=text,
                           parts=[response.url], depth=int(response.meta.get("depth", 0)), encoding=encoding,
                           extractor=ex.extractor, made_by=self.made_by[site.name])

    def _later_part(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """Part k > 1 of a split chapter reached through its own link.

        The chain from the first part normally joins it, but that chain may come later
        in the crawl, or never (part 1 missing, or linked from nowhere). So the part is
        held until the crawl has nothing else to do (spider_idle): joined by then, it is
        counted as such; else it is stored on its own (it matches as a part of its
        chapter). Holding it instead of storing it and superseding it later means a
        re-crawl stores the same pages as the first crawl, never the part twice. Held
        parts live in spider.state, which a paused job keeps in its folder.
        """
        lone, joined = self._parts_state()
        if response.url in joined:
            count(self.crawler.stats, site.name, "skipped", JOINED_TO_FIRST)
            return
        nxt = normalize_url(ex.next_part) if ex.next_part else ""
        lone[response.url] = {
            "site": site.name, "title": ex.title, "text": ex.text, "next": nxt if site.allows(nxt) else "",
            "depth": int(response.meta.get("depth", 0)), "extractor": ex.extractor,
            "encoding": response.encoding if isinstance(response, TextResponse) else "",
            "etag": _header(response, b"ETag"), "last_modified": _header(response, b"Last-Modified"),
        }
        yield from ()

    def _parts_state(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        return self.state.setdefault(LONE, {}), self.state.setdefault(JOINED, set())

    def parse_part(self, response: Response, **_: Any) -> Iterator[Any]:
        """A later part of a split chapter: add its text and go on to the next part."""
        site = self._site(response.meta)
        count(self.crawler.stats, site.name, "fetched")
        parts = response.meta[PARTS]
        ex = self._extract(response, site)
        if ex is None or not ex.text:
            if ex is not None:
                count(self.crawler.stats, site.name, "skipped", "no text on the next part of a split chapter")
            yield self._item(site, parts, response.meta)
            return
        self._parts_state()[1].add(response.url)
        yield from self._chapter(response, site, ex, parts)

    def _chapter(self, response: Response, site: SiteRules, ex: Extracted,
                 parts: list[tuple[str, str, str]]) -> Iterator[Any]:
        parts = [*parts, (response.url, ex.title, self._site_lines.clean_and_learn(site.name, ex.text))]
        nxt = normalize_url(ex.next_part) if ex.next_part else ""
        lone, joined = self._parts_state()
        while nxt in lone and nxt not in {u for u, _, _ in parts} and len(parts) < MAX_PARTS:
            # Fetched already through its own link and held (see _later_part): joined as it is, not fetched again.
            held = lone.pop(nxt)
            joined.add(nxt)
            parts.append((nxt, held["title"], held["text"]))
            nxt = held["next"]
        if nxt and nxt not in {u for u, _, _ in parts} and len(parts) < MAX_PARTS and site.allows(nxt):
            # dont_filter: a part reached earlier through its own link must still be joined here.
            yield self._request(nxt, site, self.parse_part, dont_filter=True, priority=10, depth_reset=True,
                                **{PARTS: parts})
            return
        count(self.crawler.stats, site.name, "chapters")
        validators = {}
        if len(parts) == 1:  # a joined chapter is several responses: no one response's validators stand for it
            validators = {"etag": _header(response, b"ETag"), "last_modified": _header(response, b"Last-Modified")}
        yield self._item(site, parts, response.meta, encoding=response.encoding if isinstance(
            response, TextResponse) else "", extractor=ex.extractor, made_by=self.made_by[site.name], **validators)

    def _item(self, site: SiteRules, parts: list[tuple[str, str, str]], meta: dict[str, Any], **kw: Any) -> PageItem:
        url, title, _ = parts[0]
        if len(parts) > 1:  # every response but the first ends inside this page
            count(self.crawler.stats, site.name, "parts joined", n=len(parts) - 1)
        return PageItem(url=url, site=site.name, title=title, text="\n".join(t for _, _, t in parts),
                        parts=[u for u, _, _ in parts], depth=int(meta.get("depth", 0)), **kw)

    def extraction_job(self, request: Request, response: Response) -> tuple[str, str, Any] | None:
        """The arguments of extract() for a response this spider will extract, else None.

        crawler.middlewares.extract runs them in a worker process ahead of the callback."""
        if request.callback not in (self.parse, self.parse_part) or request.meta.get(SITE) not in self.sites:
            return None
        if not isinstance(response, TextResponse) or _content_type(response) not in _HTML_TYPES:
            return None
        return response.text, response.url, self._site(request.meta).selectors

    def _extract(self, response: Response, site: SiteRules) -> Extracted | None:
        """The page's extraction, or None (counted as skipped) when it is not a text page."""
        ctype = _content_type(response)
        if not isinstance(response, TextResponse) or (ctype and ctype not in TEXT_TYPES):
            count(self.crawler.stats, site.name, "skipped", f"not a web page ({ctype or 'binary data'})")
            return None
        if ctype == "text/plain":
            text = response.text.strip()
            kind = "chapter" if is_chapter_text(text) else "other"
            return Extracted(title="", text=text, kind=kind, next_part=None, part=None, links=[],
                             chapter_links=[], extractor="plain text")
        done = response.meta.pop(EXTRACTED, None)
        if done is not None and done[0] == response.url:  # extracted in a worker process
            result = done[1]
        else:
            try:
                result = extract(response.text, response.url, site.selectors, response.meta.get(CSS, ""))
            except Exception as e:  # a parser bug on one hostile page must not stop the crawl
                result = type(e).__name__
        if isinstance(result, Extracted):
            return result
        reason = result if result == WORKER_DIED else f"extraction error: {result}"
        self.logger.warning("cannot extract %s: %s", response.url, reason)
        count(self.crawler.stats, site.name, "failed", reason)
        return None

    # ---- images -----------------------------------------------------------------

    def _image_requests(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """The images a chapter or book page shows, fetched once per crawl each (size-limited, from
        any host: covers live on image servers; an inline data: image is read from the page itself).
        A book page is a catalogue, or a page that links to chapters. Counted apart from the pages
        ("images ...")."""
        if not site.images or not ex.images or not (ex.kind in ("chapter", "catalogue") or ex.chapter_links
                                                    or response.meta.get(CHAPTER_LINK)
                                                    or site.is_chapter_url(response.url)):
            return
        asked = self._images.setdefault(site.name, set())
        for position, url in enumerate(ex.images):
            if url in asked:
                continue
            if len(asked) >= MAX_IMAGES_PER_SITE:
                count(self.crawler.stats, site.name, "images not fetched", f"more than {MAX_IMAGES_PER_SITE} images")
                return
            asked.add(url)
            if url.startswith("data:"):
                yield from self._inline_image(url, site, response.url, position)
                continue
            meta = {SITE: site.name, IMAGE_OF: response.url, IMAGE_AT: position, IMAGE: True,
                    "download_maxsize": MAX_IMAGE_BYTES,
                    "allow_offsite": True, "handle_httpstatus_list": [304]}
            if not site.obey_robots:
                meta["dont_obey_robotstxt"] = True
            # Below the pages: the text is what a crawl is for, an image can wait for a free slot.
            yield Request(url, callback=self.parse_image, errback=self.image_failed, meta=meta, priority=-10)

    def _inline_image(self, url: str, site: SiteRules, found_on: str, position: int = 0) -> Iterator[ImageItem]:
        import base64
        import binascii

        count(self.crawler.stats, site.name, "images fetched")
        try:
            data = base64.b64decode(url.partition(",")[2], validate=False)
        except (binascii.Error, ValueError):
            count(self.crawler.stats, site.name, "images skipped", "an inline image that is not base64")
            return
        kind = media_type(data)
        if not kind:
            count(self.crawler.stats, site.name, "images skipped", "not an image (inline data)")
            return
        yield ImageItem(url=url, site=site.name, found_on=found_on, data=data, media_type=kind, position=position)

    def parse_image(self, response: Response, **_: Any) -> Iterator[Any]:
        site = self._site(response.meta)
        stats = self.crawler.stats
        count(stats, site.name, "images fetched")
        if response.status == 304:
            count(stats, site.name, "images not modified")
            return
        ctype = _content_type(response)
        kind = media_type(response.body)
        if not kind:
            count(stats, site.name, "images skipped", f"not an image ({ctype or 'no type'})")
            return
        yield ImageItem(url=response.url, site=site.name, found_on=response.meta[IMAGE_OF], data=response.body,
                        media_type=kind, etag=_header(response, b"ETag"),
                        last_modified=_header(response, b"Last-Modified"), position=response.meta.get(IMAGE_AT, 0))

    def image_failed(self, failure) -> None:
        request = failure.request
        site = self._site(request.meta)
        what, reason = classify(failure, self.crawler.settings)
        count(self.crawler.stats, site.name, f"images {what}", reason)

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

    # ---- sitemaps ---------------------------------------------------------------

    def parse_robots(self, response: Response, **_: Any) -> Iterator[Request]:
        """robots.txt: request the sitemaps it names, and /sitemap.xml when it names none there."""
        site = self._site(response.meta)
        root = response.meta[ROOT]
        found = robots_sitemaps(response.body, root) if response.status == 200 else []
        wanted = found + [u for u in default_sitemaps(root) if u not in found]
        yield from self._sitemap_requests(site, wanted)

    def _obeys_robots(self, site: SiteRules) -> bool:
        crawler = getattr(self, "crawler", None)
        return bool(crawler is not None and crawler.settings.getbool("ROBOTSTXT_OBEY") and site.obey_robots)

    def _on_robots(self, robotparser, request: Request, **_: Any) -> None:
        """Scrapy's robots middleware read a host's robots.txt: request the sitemaps it names (or
        /sitemap.xml), once per site root, as parse_robots does for sites whose robots.txt is not obeyed."""
        name = request.meta.get(SITE)
        if name not in self.sites:
            return
        root = normalize_url(urljoin(request.url, "/"))
        if root in self._robots_read:
            return
        self._robots_read.add(root)
        found = parser_sitemaps(robotparser, root)
        wanted = found + [u for u in default_sitemaps(root) if u not in found]
        for req in self._sitemap_requests(self.sites[name], wanted):
            self.crawler.engine.crawl(req)

    def parse_sitemap(self, response: Response, **_: Any) -> Iterator[Request]:
        """A sitemap: its pages go into the crawl at depth 1, an index's sitemaps are read in turn."""
        site = self._site(response.meta)
        stats = self.crawler.stats
        room = MAX_URLS - self._sitemap_urls.get(site.name, 0)
        maxsize = response.meta.get("download_maxsize") or self.crawler.settings.getint("DOWNLOAD_MAXSIZE")
        try:
            sitemap = read_sitemap(response.body, maxsize, max(0, room))
        except SitemapError as e:
            count(stats, site.name, "sitemaps unreadable", str(e))
            return
        count(stats, site.name, "sitemaps")
        if sitemap.cut:
            count(stats, site.name, "links not followed", f"more than {MAX_URLS} URLs in the sitemaps")
        if sitemap.kind == "sitemapindex":
            yield from self._sitemap_requests(site, sitemap.urls)
            return
        self._sitemap_urls[site.name] = self._sitemap_urls.get(site.name, 0) + len(sitemap.urls)
        count(stats, site.name, "sitemap URLs", n=len(sitemap.urls))
        # The sitemap was requested at depth 0: its URLs come at depth 1, as links of a start page.
        yield from self._links(response, site, sitemap.urls)

    def _sitemap_requests(self, site: SiteRules, urls: list[str]) -> Iterator[Request]:
        for url in urls:
            if self._sitemaps.get(site.name, 0) >= MAX_SITEMAPS:
                count(self.crawler.stats, site.name, "links not followed", f"more than {MAX_SITEMAPS} sitemaps")
                return
            host = host_of(url)
            if not any(host == d or host.endswith("." + d) for d in site.domains):
                continue  # a sitemap elsewhere lists pages elsewhere
            self._sitemaps[site.name] = self._sitemaps.get(site.name, 0) + 1
            yield self._request(normalize_url(url), site, self.parse_sitemap, errback=self.sitemap_failed,
                                priority=20, depth_reset=True)

    def sitemap_failed(self, failure) -> None:
        """A missing sitemap is the common case, not a page lost: counted apart from the pages."""
        request = failure.request
        site = self._site(request.meta)
        if request.callback == self.parse_robots:
            return None  # the site did not answer at all: its start URLs will say so
        if failure.check(HttpError) and failure.value.response.status in (404, 410):
            count(self.crawler.stats, site.name, "sitemaps not found")  # most sites have none at /sitemap.xml
            return None
        _, reason = classify(failure, self.crawler.settings)
        count(self.crawler.stats, site.name, "sitemaps unreadable", reason)
        return None

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

    def _flush_lone(self) -> bool:
        """Settle the held later parts (see _later_part); True when a request was scheduled for them."""
        lone, joined = self._parts_state()
        for url in [u for u in lone if u in joined]:
            count(self.crawler.stats, lone.pop(url)["site"], "skipped", JOINED_TO_FIRST)
        if not lone:
            return False
        # A held part that is the next part of another held one waits: the other's chain may join it.
        nexts = {h["next"] for h in lone.values()}
        heads = [u for u in lone if u not in nexts] or list(lone)
        # Items come only out of callbacks: a data: request (no network) brings the crawl back here,
        # carrying the parts it settles (taken out of the state, so that no idle schedules them twice).
        batch = {u: lone.pop(u) for u in heads}
        request = Request("data:,", callback=self.parse_lone, errback=self.lone_failed, dont_filter=True,
                          priority=30, meta={FLUSH: batch, SITE: batch[heads[0]]["site"]})
        self.crawler.engine.crawl(request)
        return True

    def lone_failed(self, failure) -> None:
        for held in failure.request.meta[FLUSH].values():
            count(self.crawler.stats, held["site"], "failed", "a lone part of a split chapter could not be stored")

    def parse_lone(self, response: Response, **_: Any) -> Iterator[Any]:
        """Store the lone later parts on their own (or start a chain from them when they have a next part)."""
        _, joined = self._parts_state()
        for url, held in response.meta[FLUSH].items():
            site = self.sites[held["site"]]
            if url in joined:
                count(self.crawler.stats, site.name, "skipped", JOINED_TO_FIRST)
                continue
            parts = [(url, held["title"], held["text"])]
            meta = {"depth": held["depth"]}
            if held["next"] and held["next"] not in joined:
                yield self._request(held["next"], site, self.parse_part, dont_filter=True, priority=10,
                                    depth_reset=True, **{PARTS: parts})
                continue
            count(self.crawler.stats, site.name, "chapters")
            yield self._item(site, parts, meta, encoding=held["encoding"], extractor=held["extractor"],
                             etag=held.get("etag", ""), last_modified=held.get("last_modified", ""),
                             made_by=self.made_by[site.name])

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


def _content_type(response: Response) -> str:
    return response.headers.get(b"Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()


def _header(response: Response, name: bytes) -> str:
    value = response.headers.get(name) or b""
    return value.decode("latin-1")[:200]  # a validator is sent back as is; a huge one is not kept


def _tls_error(exc: BaseException) -> str | None:
    """What OpenSSL said when an HTTPS connection could not be set up ("wrong version number"), ""
    when it said nothing readable; None when `exc` is not a TLS failure. Twisted wraps it in a
    ResponseNeverReceived (or ResponseFailed) that Scrapy wraps again."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if type(e).__module__.startswith("OpenSSL") or "SSL" in type(e).__name__:
            detail = [part[-1] for part in (e.args[0] if e.args and isinstance(e.args[0], list) else [])
                      if isinstance(part, tuple) and part and isinstance(part[-1], str)]
            return "; ".join(d for d in detail if d)[:80]
        todo.extend(r.value for r in getattr(e, "reasons", ()) or () if getattr(r, "value", None) is not None)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None


def classify(failure, settings) -> tuple[str, str]:
    """("skipped" | "failed", reason) for a request that failed."""
    exc = failure.value
    request = getattr(failure, "request", None)
    maxsize = (request.meta.get("download_maxsize") if request is not None else None) or \
        settings.getint("DOWNLOAD_MAXSIZE")
    if failure.check(TruncatedResponse):
        return "failed", TRUNCATED
    if failure.check(NeedsBrowser):  # a page only a browser shows, and none is installed
        return "failed", NEEDS_BROWSER
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
    if failure.check(RefusedRequest):  # the egress policy (crawler.middlewares.egress): the address and the fix
        return "failed", exc.reason
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
    tls = _tls_error(exc)
    if tls is not None:
        return "failed", f"TLS error ({tls})" if tls else "TLS error"
    if failure.check(ResponseDataLossError, DownloadCancelledError, DownloadFailedError, ConnectError,
                     ConnectionLost):
        return "failed", "connection lost"
    return "failed", f"{type(exc).__name__}: {text[:80]}"
