"""The spider offline, on saved responses: what it yields, follows, joins and counts."""
from __future__ import annotations

import pytest
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.test import get_crawler
from twisted.internet.error import TimeoutError
from twisted.python.failure import Failure

from crawler.counts import by_site
from crawler.items import PageItem
from crawler.middlewares.encoding import FORCE_ENCODING
from crawler.spiders.novel import PARTS, SITE, NovelSpider, classify

from ..conftest import ROOT

CHAPTER = (ROOT / "samples" / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
LINES = [line for line in CHAPTER.splitlines() if line.strip()]


def page(body_lines, *, title="第一章 雨夜来客", extra="") -> str:
    content = "<br/>\n".join(body_lines)
    return (f"<html><head><title>{title}_山城旧事_笔趣阁</title></head><body>"
            "<div class='nav'><a href='/'>首页</a> <a href='/top'>排行榜</a></div>"
            f"<h1>{title}</h1><div class='bar'><a href='/book/1/'>目录</a> <a href='/book/1/2.html'>下一章</a></div>"
            f"<div id='content'>{content}</div>{extra}"
            "<a href='https://ads.example.com/win'>大奖</a><a href='/cal?d=1'>日历</a></body></html>")


def spider_for(url="http://novels.test/", **kw):
    crawler = get_crawler(NovelSpider, {"LOG_LEVEL": "WARNING"})
    return NovelSpider.from_crawler(crawler, urls=url, **kw)


def response(spider, url, html, *, encoding="utf-8", cls=HtmlResponse, headers=None, **meta):
    site = next(iter(spider.sites))
    req = Request(url, meta={SITE: site, **meta})
    return cls(url=url, body=html.encode(encoding), encoding=encoding, request=req, headers=headers or {})


def stats(spider):
    return by_site(spider.crawler.stats.get_stats())["novels.test"]


def test_a_chapter_page_yields_its_text_and_follows_links_within_the_site():
    s = spider_for()
    out = list(s.parse(response(s, "http://novels.test/book/1/1.html", page(LINES))))
    items = [o for o in out if isinstance(o, PageItem)]
    requests = [o.url for o in out if isinstance(o, Request)]
    assert len(items) == 1
    item = items[0]
    assert item.site == "novels.test" and item.url == "http://novels.test/book/1/1.html"
    assert LINES[1] in item.text and "首页" not in item.text and "排行榜" not in item.text
    assert item.parts == ["http://novels.test/book/1/1.html"]
    assert "http://novels.test/book/1/" in requests and "http://novels.test/book/1/2.html" in requests
    assert not any("ads.example.com" in u for u in requests)  # outside the site
    c = stats(s)["counts"]
    assert c["fetched"] == 1 and c["chapters"] == 1


def test_a_split_chapter_is_joined_from_its_parts():
    s = spider_for()
    half = len(LINES) // 2
    first = page(LINES[:half] + ["本章未完，请点击下一页继续阅读"], title="第一章 雨夜来客(1/2)",
                 extra="<a href='/book/1/1_2.html'>下一页</a>")
    out = list(s.parse(response(s, "http://novels.test/book/1/1.html", first)))
    assert not [o for o in out if isinstance(o, PageItem)]  # nothing yielded before the last part
    (chain,) = [o for o in out if isinstance(o, Request) and o.meta.get(PARTS)]
    assert chain.url == "http://novels.test/book/1/1_2.html" and chain.dont_filter
    assert chain.callback == s.parse_part and chain.meta.get("depth_reset")
    second = page(LINES[half:], title="第一章 雨夜来客(2/2)")
    out = list(s.parse_part(response(s, chain.url, second, **chain.meta)))
    (item,) = [o for o in out if isinstance(o, PageItem)]
    assert item.url == "http://novels.test/book/1/1.html"
    assert item.parts == ["http://novels.test/book/1/1.html", "http://novels.test/book/1/1_2.html"]
    assert LINES[1] in item.text and LINES[-1] in item.text
    assert "下一页" not in item.text and "本章未完" not in item.text


def test_a_later_part_reached_by_its_own_link_is_not_stored_alone():
    s = spider_for()
    out = list(s.parse(response(s, "http://novels.test/book/1/1_2.html", page(LINES, title="第一章(2/2)"))))
    assert not [o for o in out if isinstance(o, PageItem)]
    assert "later part of a split chapter (joined to its first part)" in stats(s)["skipped"]


def test_a_broken_chain_keeps_the_parts_it_has():
    s = spider_for()
    parts = [("http://novels.test/book/1/1.html", "第一章", "\n".join(LINES))]
    req = Request("http://novels.test/book/1/1_2.html", meta={SITE: "novels.test", PARTS: parts})
    failure = Failure(TimeoutError("took too long"))
    failure.request = req
    (item,) = list(s.failed(failure))
    assert item.url == "http://novels.test/book/1/1.html" and item.text == parts[0][2]
    assert stats(s)["failed"] == {"timed out after 180 s": 1}


def test_non_html_responses_are_skipped_with_their_type():
    s = spider_for()
    req = Request("http://novels.test/cover", meta={SITE: "novels.test"})
    binary = Response("http://novels.test/cover", body=b"\x89PNG\r\n\x1a\n....", request=req,
                      headers={"Content-Type": "image/png"})
    assert list(s.parse(binary)) == []
    assert stats(s)["skipped"] == {"not a web page (image/png)": 1}


def test_a_plain_text_chapter_is_a_page_too():
    s = spider_for()
    r = response(s, "http://novels.test/dl/1.txt", CHAPTER, cls=TextResponse,
                 headers={"Content-Type": "text/plain; charset=utf-8"})
    (item,) = [o for o in s.parse(r) if isinstance(o, PageItem)]
    assert item.text == CHAPTER.strip()


def test_trap_links_are_counted_not_followed():
    s = spider_for(pattern_budget=3)
    for day in range(3):  # three calendar pages with no chapter on them
        html = f"<html><body><a href='/cal?d={day + 1}'>next day</a></body></html>"
        list(s.parse(response(s, f"http://novels.test/cal?d={day}", html)))
    html = "<html><body><a href='/cal?d=99'>next day</a><a href='/a/b/a/b/a/b/x'>loop</a></body></html>"
    out = list(s.parse(response(s, "http://novels.test/cal?d=98", html)))
    assert [o for o in out if isinstance(o, Request)] == []
    skipped = stats(s)["skipped"]
    assert skipped["link not followed: URL pattern whose pages hold no chapter"] == 2  # from the 3rd page on
    assert skipped["link not followed: a path segment repeated (a relative-link loop)"] == 1


def test_site_rules_reach_the_requests():
    rules = {"name": "gbk-site", "start_urls": ["http://gbk.test/"], "encoding": "gbk", "obey_robots": False,
             "content": "#text"}
    crawler = get_crawler(NovelSpider, {"LOG_LEVEL": "WARNING"})
    s = NovelSpider.from_crawler(crawler, sites=[rules])
    req = s._request("http://gbk.test/1.html", s.sites["gbk-site"])
    assert req.meta[FORCE_ENCODING] == "gbk" and req.meta["dont_obey_robotstxt"] is True
    assert s.allowed_domains == ["gbk.test"]


def test_a_spider_needs_something_to_crawl():
    with pytest.raises(ValueError, match="nothing to crawl"):
        spider_for(url="")


@pytest.mark.parametrize("exc, expected", [
    (IgnoreRequest("Forbidden by robots.txt"), ("skipped", "robots.txt forbids it")),
    (TimeoutError("x"), ("failed", "timed out after 180 s")),
])
def test_failures_are_classified(exc, expected):
    crawler = get_crawler(NovelSpider, {})
    assert classify(Failure(exc), crawler.settings) == expected


def test_http_errors_are_classified_by_status():
    crawler = get_crawler(NovelSpider, {})
    for status, kind in ((404, "skipped"), (410, "skipped"), (503, "failed"), (429, "failed")):
        err = HttpError(Response("http://a.test/x", status=status), "Ignoring non-200 response")
        assert classify(Failure(err), crawler.settings) == (kind, f"HTTP {status}")


def test_a_sites_own_depth_and_page_limits_apply():
    crawler = get_crawler(NovelSpider, {"LOG_LEVEL": "WARNING"})
    s = NovelSpider.from_crawler(crawler, sites=[{"name": "novels.test", "start_urls": ["http://novels.test/"],
                                                  "depth": 1, "max_pages": 3}])
    html = page(LINES)
    shallow = [o for o in s.parse(response(s, "http://novels.test/book/1/1.html", html, depth=0))
               if isinstance(o, Request)]
    assert shallow  # depth 0 < 1: links followed
    deep = [o for o in s.parse(response(s, "http://novels.test/book/1/2.html", html, depth=1))
            if isinstance(o, Request)]
    assert deep == []  # at the site's depth: its links are not followed
    list(s.parse(response(s, "http://novels.test/book/1/3.html", html, depth=0)))  # the 3rd page fetched
    assert [o for o in s.parse(response(s, "http://novels.test/book/1/4.html", html, depth=0))
            if isinstance(o, Request)] == []
    assert "links not followed: the site's max_pages reached" in stats(s)["skipped"]
