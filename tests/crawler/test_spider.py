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
from crawler.items import NotModifiedItem, PageItem
from crawler.meta import FORCE_ENCODING, PARTS, SITE
from crawler.spiders.novel import NovelSpider, classify

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


class _Engine:
    """Stands for Scrapy's engine: keeps what the spider schedules at idle."""

    def __init__(self):
        self.requests = []

    def crawl(self, request):
        self.requests.append(request)


def _split_pages():
    half = len(LINES) // 2
    first = page(LINES[:half] + ["本章未完，请点击下一页继续阅读"], title="第一章 雨夜来客(1/2)",
                 extra="<a href='/book/1/1_2.html'>下一页</a>")
    return first, page(LINES[half:], title="第一章 雨夜来客(2/2)")


def _flush(s):
    """What the spider does when the crawl runs dry: the items of its lone parts."""
    s.crawler.engine = _Engine()
    from scrapy.exceptions import DontCloseSpider

    try:
        s._on_idle()
    except DontCloseSpider:
        pass
    out = []
    for req in s.crawler.engine.requests:
        data = TextResponse(req.url, body=b"", request=req)
        out += list(req.callback(data))
    return [o for o in out if isinstance(o, PageItem)]


P1, P2 = "http://novels.test/book/1/1.html", "http://novels.test/book/1/1_2.html"


def test_a_later_part_no_chain_joins_is_stored_alone_when_the_crawl_ends():
    s = spider_for()
    _, second = _split_pages()
    out = list(s.parse(response(s, P2, second)))
    assert not [o for o in out if isinstance(o, PageItem)]  # held, not stored yet: a chain may still come
    (item,) = _flush(s)
    assert item.url == P2 and item.parts == [P2] and LINES[-1] in item.text
    assert _flush(s) == []  # stored once
    c = stats(s)
    assert c["counts"]["chapters"] == 1 and c["skipped"] == {}


def test_a_later_part_fetched_before_its_chain_is_joined_not_stored_twice():
    s = spider_for()
    first, second = _split_pages()
    list(s.parse(response(s, P2, second)))  # the part first, through its own link
    out = list(s.parse(response(s, P1, first)))
    assert not [o for o in out if isinstance(o, Request) and o.meta.get(PARTS)]  # not fetched a second time
    (joined,) = [o for o in out if isinstance(o, PageItem)]
    assert joined.parts == [P1, P2] and LINES[1] in joined.text and LINES[-1] in joined.text
    assert _flush(s) == []  # the held part was joined
    c = stats(s)
    assert c["skipped"] == {}
    assert c["counts"] == {"fetched": 2, "parts joined": 1, "chapters": 1}


def test_a_later_part_fetched_after_its_chain_is_counted_as_joined():
    s = spider_for()
    first, second = _split_pages()
    (chain,) = [o for o in s.parse(response(s, P1, first)) if isinstance(o, Request) and o.meta.get(PARTS)]
    list(s.parse_part(response(s, chain.url, second, **chain.meta)))
    assert not [o for o in s.parse(response(s, P2, second)) if isinstance(o, PageItem)]
    assert _flush(s) == []
    assert stats(s)["skipped"] == {"later part of a split chapter (joined to its first part)": 1}


def test_held_parts_live_in_the_spiders_state():
    s = spider_for()
    list(s.parse(response(s, P2, _split_pages()[1])))
    import pickle

    state = pickle.loads(pickle.dumps(s.state))  # what SpiderState keeps in the job folder across a pause
    t = spider_for()
    t.state = state
    (item,) = _flush(t)
    assert item.url == P2


def test_a_304_is_not_modified_and_nothing_else():
    s = spider_for()
    r = response(s, P1, "")
    r = r.replace(status=304, body=b"")
    # no page to extract or store: only word that the stored page is still up (a removed copy is back)
    assert list(s.parse(r)) == [NotModifiedItem(url=P1, site="novels.test")]
    c = stats(s)["counts"]
    assert c == {"fetched": 1, "not modified": 1}


def test_a_single_page_keeps_its_validators_a_joined_one_none():
    s = spider_for()
    r = response(s, P1, page(LINES), headers={"ETag": '"v1"', "Last-Modified": "Mon, 02 Nov 2026 00:00:00 GMT"})
    (item,) = [o for o in s.parse(r) if isinstance(o, PageItem)]
    assert (item.etag, item.last_modified) == ('"v1"', "Mon, 02 Nov 2026 00:00:00 GMT")
    first, second = _split_pages()
    (chain,) = [o for o in s.parse(response(s, P1, first, headers={"ETag": '"a"'})) if isinstance(o, Request)
                and o.meta.get(PARTS)]
    (joined,) = [o for o in s.parse_part(response(s, chain.url, second, headers={"ETag": '"b"'}, **chain.meta))
                 if isinstance(o, PageItem)]
    assert (joined.etag, joined.last_modified) == ("", "")


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
    links = stats(s)["links not followed"]  # links, not pages: apart from the pages skipped
    assert links["URL pattern whose pages hold no chapter"] == 2  # from the 3rd page on
    assert links["a path segment repeated (a relative-link loop)"] == 1
    assert stats(s)["skipped"] == {"no chapter text on the page": 4}  # the pages themselves


def test_a_giant_link_is_refused_before_it_is_normalised(monkeypatch):
    from crawler.spiders import novel

    s = spider_for()
    seen = []
    monkeypatch.setattr(novel, "normalize_url", lambda u: seen.append(len(u)) or u)
    giant = "/" + "a" * 1_000_000
    html = f"<html><body><a href='{giant}'>x</a><a href='/ok.html'>ok</a></body></html>"
    out = list(s.parse(response(s, "http://novels.test/index.html", html)))
    assert [r.url for r in out if isinstance(r, Request)] == ["http://novels.test/ok.html"]
    assert max(seen) < 1000  # the giant link never reached the normaliser
    assert stats(s)["links not followed"]["URL longer than 400 characters"] == 1


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
    assert "the site's max_pages reached" in stats(s)["links not followed"]


def test_no_callback_is_a_generator_returning_a_value():
    # crawler.settings turns Scrapy's per-response check off (WARN_ON_GENERATOR_RETURN_VALUE): made here once.
    from scrapy.utils.misc import is_generator_with_return_value

    for name in ("parse", "parse_part", "parse_robots", "parse_sitemap", "parse_lone", "failed"):
        assert not is_generator_with_return_value(getattr(NovelSpider, name)), name
