"""crawler.sitemaps and the conditional-request middleware, offline."""
from __future__ import annotations

import gzip

import pytest
from scrapy.http import Request
from scrapy.utils.test import get_crawler

from crawler.meta import CONDITIONAL
from crawler.middlewares.conditional import ConditionalMiddleware
from crawler.sitemaps import (
    SitemapError,
    default_sitemaps,
    read_sitemap,
    robots_sitemaps,
)
from tracker.store import Page

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(urls) -> bytes:
    return (f"<?xml version='1.0'?><urlset xmlns='{NS}'>" + "".join(f"<url><loc>{u}</loc></url>" for u in urls)
            + "</urlset>").encode()


def test_robots_names_its_sitemaps_once_each_absolute():
    robots = b"User-agent: *\nDisallow: /vip/\nSitemap: /a.xml\nsitemap: https://x.test/b.xml.gz\nSitemap: /a.xml\n" \
             b"Sitemap: javascript:alert(1)\n"
    assert robots_sitemaps(robots, "https://x.test/") == ["https://x.test/a.xml", "https://x.test/b.xml.gz"]
    assert default_sitemaps("https://x.test/book/1/") == ["https://x.test/sitemap.xml"]


def test_a_urlset_an_index_and_a_gzipped_one():
    s = read_sitemap(urlset(["https://x.test/1.html", "ftp://x.test/2", " https://x.test/3.html "]), 10**6)
    assert (s.kind, s.urls, s.cut) == ("urlset", ["https://x.test/1.html", "https://x.test/3.html"], False)
    index = f"<sitemapindex xmlns='{NS}'><sitemap><loc>https://x.test/s1.xml.gz</loc></sitemap></sitemapindex>"
    assert read_sitemap(gzip.compress(index.encode()), 10**6).urls == ["https://x.test/s1.xml.gz"]


def test_limits_urls_size_and_gzip_bombs():
    s = read_sitemap(urlset([f"https://x.test/{i}.html" for i in range(100)]), 10**6, max_urls=10)
    assert len(s.urls) == 10 and s.cut
    bomb = gzip.compress(b"<urlset>" + b" " * 50_000_000 + b"</urlset>")  # 50 MB from ~50 kB
    assert len(bomb) < 100_000
    with pytest.raises(SitemapError, match="larger than 1000000 bytes once decompressed"):
        read_sitemap(bomb, 1_000_000)
    with pytest.raises(SitemapError, match="not valid gzip"):
        read_sitemap(b"\x1f\x8b\x08garbage", 10**6)


def test_hostile_xml_is_not_obeyed():
    xxe = (b"<?xml version='1.0'?><!DOCTYPE u [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>"
           b"<urlset><url><loc>https://x.test/&e;</loc></url></urlset>")
    assert all("root:" not in u for u in read_sitemap(xxe, 10**6).urls)
    laughs = (b"<?xml version='1.0'?><!DOCTYPE l [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;'>"
              b"<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;'>]><urlset><url><loc>https://x.test/&c;</loc></url></urlset>")
    assert all(len(u) < 200 for u in read_sitemap(laughs, 10**6).urls)
    for body in (b"<html><body>not found</body></html>", b"plain words", b""):
        with pytest.raises(SitemapError):
            read_sitemap(body, 10**6)


class _Store:
    def __init__(self, pages):
        self.pages = {p.key: p for p in pages}

    def page_validators(self, key, made_by=None):
        p = self.pages.get(key)
        return (p.etag, p.last_modified) if p and p.meta.get("made_by") == made_by else ("", "")


def test_stored_pages_are_asked_for_conditionally_and_only_pages():
    mw = ConditionalMiddleware(get_crawler())
    mw.store = _Store([Page(key="http://x.test/1.html", text="t", etag='"v1"', last_modified="Mon, 02 Nov 2026",
                            meta={"made_by": "r1"}),
                       Page(key="http://x.test/2.html", text="t", meta={"made_by": "r1"})])
    asked = Request("http://x.test/1.html", meta={CONDITIONAL: "r1"})
    mw.process_request(asked)
    assert asked.headers[b"If-None-Match"] == b'"v1"' and asked.headers[b"If-Modified-Since"] == b"Mon, 02 Nov 2026"
    assert 304 in asked.meta["handle_httpstatus_list"]
    for req in (Request("http://x.test/2.html", meta={CONDITIONAL: "r1"}),  # stored without validators
                Request("http://x.test/3.html", meta={CONDITIONAL: "r1"}),  # not stored
                Request("http://x.test/1.html", meta={CONDITIONAL: "r2"}),  # stored with other rules
                Request("http://x.test/1.html")):  # a later part of a chain: its body is needed
        mw.process_request(req)
        assert b"If-None-Match" not in req.headers and "handle_httpstatus_list" not in req.meta
