"""Which external stylesheets of a page the crawler reads (crawler.stylesheets)."""
from __future__ import annotations

from crawler.stylesheets import MAX_PER_PAGE, stylesheet_urls
from tests.linear import assert_linear


def test_screen_stylesheets_of_the_page_host_in_order_once_each():
    html = ('<html><head><link rel="stylesheet" href="/css/a.css"><link rel=stylesheet media=print href=p.css>'
            '<link rel="alternate stylesheet" href="//cdn.other.test/b.css"><link href=c.css rel="STYLESHEET" '
            'media="screen and (min-width: 1px)"><link rel="icon" href="/i.png"><link rel=stylesheet href="/css/a.css">'
            '<link rel="stylesheet" href="javascript:alert(1)"></head><body><link rel=stylesheet href=late.css>')
    assert stylesheet_urls(html, "http://s.test/b/1.html") == ["http://s.test/css/a.css", "http://s.test/b/c.css"]


def test_at_most_a_few_per_page():
    html = "<head>" + "".join(f'<link rel="stylesheet" href="/{i}.css">' for i in range(20)) + "</head>"
    assert len(stylesheet_urls(html, "http://s.test/")) == MAX_PER_PAGE


def test_hostile_heads_take_linear_time():
    assert_linear(lambda h: stylesheet_urls(h, "http://s.test/"), lambda n: "<link " * n, 20_000,
                  what="stylesheet_urls on unclosed <link")
    assert_linear(lambda h: stylesheet_urls(h, "http://s.test/"), lambda n: "<link rel=" + "a=" * n + ">", 20_000,
                  what="stylesheet_urls on a long tag")
