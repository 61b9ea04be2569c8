"""The crawler's extraction takes time linear in the page, on hostile pages too.

A 300 kB page of letters once kept a crawl busy for a quarter of an hour (the domain
pattern rescanned the rest of the run from every position). Each test times a path on a
page of size n and 8n and asserts the ratio (tests.linear), never a wall clock.
"""
from __future__ import annotations

import pytest

from crawler.rules import make_rules
from crawler.urls import normalize_url, trap_reason, url_pattern
from pagetext.extraction.page import extract, remove_site_lines
from tests.linear import assert_linear
from tests.steady_memory import steady_allocator

PROSE = "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。寒来暑往，秋收冬藏。"
URL = "https://www.biquge.test/book/1/2.html"


@pytest.fixture(autouse=True, scope="module")
def _warm_memory():
    with steady_allocator():
        yield


def _page(body: str, title: str = "第一章 雨夜来客_山城旧事_笔趣阁") -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>"


def _one_line(n: int) -> str:
    return (PROSE * (n // len(PROSE) + 1))[:n]


# name -> (make(n), n); each text is one line unless the name says otherwise.
HOSTILE_LINES = {
    "letters": (lambda n: "a" * n, 50_000),
    "digits": (lambda n: "7" * n, 50_000),
    "www + letters": (lambda n: "www." + "a" * n, 50_000),
    "http + a. run": (lambda n: "http://" + "a." * (n // 2), 5_000),
    "a.b.c runs": (lambda n: "a.b.c" * (n // 5), 5_000),
    "one CJK character": (lambda n: "啊" * n, 50_000),
    "CJK and punctuation": (_one_line, 50_000),
    "prose with a domain": (lambda n: _one_line(n) + "www.biquge.com", 10_000),
    "opening brackets": (lambda n: "(" * n + "www.biquge.com)", 10_000),
    "brackets around letters": (lambda n: "(www.a.com/" + "x" * n, 20_000),
    "bracketed watermarks": (lambda n: ("（笔趣阁 www.biquge.com）" + PROSE) * (n // 50), 20_000),
    "spaces before a mark": (lambda n: "字" + " " * n + "(本章)", 50_000),
    "many lines": (lambda n: (PROSE + "\n") * (n // 31), 20_000),
}


@pytest.mark.parametrize("name", list(HOSTILE_LINES))
def test_remove_site_lines_is_linear(name):
    make, n = HOSTILE_LINES[name]
    assert_linear(remove_site_lines, make, n, what=f"remove_site_lines on {name}")


@pytest.mark.parametrize("name", list(HOSTILE_LINES))
def test_extract_of_a_hostile_line_is_linear(name):
    make, n = HOSTILE_LINES[name]
    assert_linear(lambda html: extract(html, URL), lambda n: _page(f"<div id=content>{make(n)}</div>"), n,
                  what=f"extract on {name}")


HOSTILE_PAGES = {
    "many <": (lambda n: "<" * n, 50_000),
    "many <p without >": (lambda n: "<p " * (n // 3), 50_000),
    "5,000 nested <div>": (lambda n: _page("<div>字" * (n // 6) + "</div>" * (n // 6)), 30_000),
    "nested <span>": (lambda n: _page("<div>" + "<span>字" * (n // 7) + "</span>" * (n // 7) + "</div>"), 30_000),
    "nested <a>": (lambda n: _page("<a href='/x'><div>字" * (n // 20)), 30_000),
    "sibling <span>s": (lambda n: _page("<div>" + "<span>字</span>" * (n // 14) + "</div>"), 10_000),
    "sibling ads": (lambda n: _page("<div>" + "<div class=ad>x</div>尾巴" * (n // 25) + "</div>"), 10_000),
    "sibling link lists": (lambda n: _page("<div>" + "<div><a href='/x'>链接</a></div>尾巴" * (n // 35) + "</div>"),
                           10_000),
    "comments between text": (lambda n: _page("<div>" + "<!--c-->尾巴" * (n // 10) + "</div>"), 20_000),
    "paragraphs": (lambda n: _page("<div id=content>" + f"<p>{PROSE}</p>" * (n // 40) + "</div>"), 10_000),
    "lines with <br>": (lambda n: _page("<div id=content>" + f"{PROSE}<br>" * (n // 35) + "</div>"), 10_000),
    "links": (lambda n: _page("".join(f"<a href='/book/1/{i}.html'>第{i}章</a>" for i in range(n // 40))), 5_000),
    "a title of site words": (lambda n: _page(f"<p>{PROSE}</p>", title="最新章节" * (n // 4) + "x"), 50_000),
    "a heading of numerals": (lambda n: _page(f"<h1>第{'一' * n}</h1><p>{PROSE}</p>"), 20_000),
    "a heading of parts": (lambda n: _page(f"<h1>{'1 / 1 ' * (n // 6)}x</h1><p>{PROSE}</p>"), 20_000),
}


@pytest.mark.parametrize("name", list(HOSTILE_PAGES))
def test_extract_of_a_hostile_page_is_linear(name):
    make, n = HOSTILE_PAGES[name]
    assert_linear(lambda html: extract(html, URL), make, n, what=f"extract on {name}")


def test_deep_nesting_beyond_the_parser_limit_is_a_clean_result():
    # lxml stops nesting at its depth limit: the page still extracts, without an exception.
    ex = extract(_page("<div>" * 5000 + PROSE * 20 + "</div>" * 5000), URL)
    assert ex.kind in ("chapter", "other") and isinstance(ex.text, str)


# A hostile page's links: the spider normalises each one before trap_reason refuses it (which
# looks at the length first, so takes constant time on these).
LONG_URLS = {
    "path of letters": (lambda n: "http://a.com/" + "a" * n, 20_000),
    "session parameters": (lambda n: "http://a.com/x" + ";sid=a" * (n // 6), 100_000),
    "query pairs": (lambda n: "http://a.com/x?" + "a=1&" * (n // 4), 5_000),
    "path of folders": (lambda n: "http://a.com" + "/a1" * (n // 3), 20_000),
}


@pytest.mark.parametrize("name", list(LONG_URLS))
@pytest.mark.parametrize("fn", [normalize_url, url_pattern], ids=lambda f: f.__name__)
def test_url_helpers_are_linear(fn, name):
    make, n = LONG_URLS[name]
    assert_linear(fn, make, n, what=f"{fn.__name__} on {name}")


def test_a_long_url_is_a_trap():
    assert trap_reason("http://a.com/" + "a" * 1_000_000).startswith("URL longer than")


def test_site_rules_do_not_scan_a_hostile_link_with_the_operators_patterns():
    # "(?:a|b)*c" rescans to the end from every position: quadratic on a long run of a's.
    rules = make_rules({"start_urls": ["https://www.biquge.test/book/1/"], "follow": [r"(?:a|b)*c"],
                        "chapter_urls": [r"(?:a|b)*c"]})
    site = "https://www.biquge.test/"
    assert_linear(lambda url: (rules.allows(url), rules.is_chapter_url(url)), lambda n: site + "a" * n, 20_000,
                  what="site rules on a long link")
    assert not rules.allows(site + "a" * 5000 + "c") and rules.allows(site + "book/1/ac")
