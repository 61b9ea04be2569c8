"""The spider's reading of robots.txt and sitemaps: the sitemaps a site's robots.txt names (and
/sitemap.xml) are requested, a sitemap index's sitemaps in turn, and a sitemap's pages go into
the crawl like links of a start page (crawler.sitemaps parses them). A missing or unreadable
sitemap is counted apart from the pages.

SitemapFollowing is a mixin of crawler.spiders.novel.NovelSpider: it uses the spider's crawler,
sites, _robots_read, _sitemaps, _sitemap_urls, _site(), _request() and _links().
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError

from ..counts import count
from ..meta import ROOT, SITE
from ..rules import SiteRules, host_of
from ..sitemaps import (
    MAX_SITEMAPS,
    MAX_URLS,
    SitemapError,
    default_sitemaps,
    parser_sitemaps,
    read_sitemap,
    robots_sitemaps,
)
from ..urls import normalize_url
from .failures import classify


class SitemapFollowing:
    """robots.txt and the sitemaps read, their pages requested."""

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
