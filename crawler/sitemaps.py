"""Sitemaps: the URLs a site lists for crawlers, from robots.txt's `Sitemap:` lines,
/sitemap.xml, gzipped sitemaps and sitemap index files.

Some sites link their chapters from nowhere a crawler can follow (a catalogue
drawn by script, a search box); their sitemap lists them all. Sitemaps are
hostile input like any page, so reading one is bounded: the body is already
capped by the download size, a gzipped one is decompressed with the same cap
(a gzip bomb stops there), parsing is Scrapy's streaming `Sitemap` (lxml
iterparse, entities not resolved, so no XXE and no billion laughs; elements
freed as they are read), and at most MAX_URLS URLs and MAX_SITEMAPS sitemaps
are taken from one site.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

MAX_URLS = 50_000  # per site: the sitemap protocol's own limit for one file
MAX_SITEMAPS = 50  # per site, index files and the sitemaps they list together
DEFAULT_PATHS = ("/sitemap.xml",)


class SitemapError(ValueError):
    """A sitemap that cannot be read; the message says why."""


@dataclass
class Sitemap:
    kind: str  # "urlset" or "sitemapindex"
    urls: list[str] = field(default_factory=list)  # pages (urlset) or sitemaps (sitemapindex)
    cut: bool = False  # more were listed than the limit let through


def robots_sitemaps(robots: bytes, base_url: str) -> list[str]:
    """The sitemap URLs a robots.txt names (its `Sitemap:` lines), absolute, in order, once each."""
    from scrapy.utils.sitemap import sitemap_urls_from_robots

    found = [u for u in sitemap_urls_from_robots(robots, base_url=base_url)
             if urlsplit(u).scheme in ("http", "https")]
    return list(dict.fromkeys(found))[:MAX_SITEMAPS]


def parser_sitemaps(parser: object, base_url: str) -> list[str]:
    """The sitemap URLs named in a robots.txt that Scrapy's robots middleware parsed (its
    robots_parsed signal gives the parser, not the body): Protego's `sitemaps`, or the
    standard library parser's `site_maps()`; absolute, in order, once each."""
    rp = getattr(parser, "rp", None)
    found = getattr(rp, "sitemaps", None)
    if found is None and callable(getattr(rp, "site_maps", None)):
        found = rp.site_maps()
    urls = []
    for u in found or ():
        url = urljoin(base_url, str(u).strip())
        if urlsplit(url).scheme in ("http", "https"):
            urls.append(url)
    return list(dict.fromkeys(urls))[:MAX_SITEMAPS]


def default_sitemaps(url: str) -> list[str]:
    """Where a site keeps its sitemap when robots.txt does not say: /sitemap.xml at its root."""
    return [urljoin(url, p) for p in DEFAULT_PATHS]


def read_sitemap(body: bytes, max_bytes: int, max_urls: int = MAX_URLS) -> Sitemap:
    """The URLs of a sitemap body (gzipped or not), at most `max_urls`; SitemapError when it is not one."""
    if body[:2] == b"\x1f\x8b":
        body = _gunzip(body, max_bytes)
    if b"<" not in body[:1024]:
        raise SitemapError("not XML")
    from scrapy.utils.sitemap import Sitemap as ScrapySitemap

    try:
        parsed = ScrapySitemap(body)
    except Exception as e:  # lxml raises several unrelated types on hostile input
        raise SitemapError(f"not a sitemap ({type(e).__name__})") from None
    if parsed.type not in ("urlset", "sitemapindex"):
        raise SitemapError(f"not a sitemap (<{parsed.type[:40]}>)")
    out = Sitemap(kind=parsed.type)
    for url in _locs(parsed):
        if len(out.urls) >= max_urls:
            out.cut = True
            break
        out.urls.append(url)
    return out


def _locs(parsed) -> Iterator[str]:
    try:
        for entry in parsed:
            loc = (entry.get("loc") or "").strip()
            if urlsplit(loc).scheme in ("http", "https"):
                yield loc
    except Exception:  # a parse error half-way: keep what came before it
        return


def _gunzip(body: bytes, max_bytes: int) -> bytes:
    from scrapy.utils.gz import gunzip

    try:
        return gunzip(body, max_size=max_bytes)
    except ValueError as e:  # _DecompressionMaxSizeExceeded is a ValueError
        raise SitemapError(f"larger than {max_bytes} bytes once decompressed") from e
    except Exception as e:  # OSError, EOFError, struct.error, zlib.error: not gzip after all
        raise SitemapError("not valid gzip") from e
