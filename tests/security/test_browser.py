"""The browser's own requests (a rendered page's scripts, XHR, frames) keep to the egress policy:
a page on an allowed site whose script fetches an internal address gets nothing from it."""
from __future__ import annotations

import asyncio
import os

import pytest

from crawler.render import chromium_path, refused_by
from tracker.egress import EgressPolicy

from .servers import answer, routes
from .test_crawl import crawl

ALLOW_ONE = EgressPolicy.from_text("127.0.0.1/32")


@pytest.mark.parametrize("url,refused", [
    ("http://127.0.0.2:9/secret", "127.0.0.2 is a loopback address"),
    ("http://2130706434/secret", "127.0.0.2 is a loopback address"),
    ("http://[::1]:9/", "::1 is a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
    ("gopher://127.0.0.1/", "only http and https"),
    ("http://127.0.0.1:9/allowed", ""),
    ("data:text/plain,hello", ""),
    ("blob:http://127.0.0.1/x", ""),
])
def test_sub_requests_are_judged_by_the_policy(url, refused):
    got = asyncio.run(refused_by(ALLOW_ONE, url))
    assert (refused in got) if refused else got == "", got


def test_a_name_is_judged_by_every_address_it_resolves_to():
    got = asyncio.run(refused_by(EgressPolicy.from_text("127.0.0.2/32"), "http://localhost:9/"))
    assert "127.0.0.1 is a loopback address" in got or "::1 is a loopback address" in got


needs_chromium = pytest.mark.skipif(
    chromium_path() is None and not os.environ.get("FPT_REQUIRE_SERVICES"),
    reason="chromium is not installed (scripts/system-deps test, or apt-get install chromium)")

PAGE = ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>第一章_山城旧事</title></head><body>'
        '<h1>第一章</h1><div id="content">正在加载……</div><script>'
        "fetch('{inner}/secret').then(r => r.text()).then(t => {{ document.getElementById('content').innerHTML = t; }})"
        ".catch(() => {{ document.getElementById('content').innerHTML = '山城的雨下了三天。'.repeat(40); }});"
        "</script></body></html>")


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("allow,reached", [("127.0.0.1/32", False), ("127.0.0.0/8", True)],
                         ids=["refused", "allowed (the control)"])
def test_a_rendered_page_cannot_make_the_browser_fetch_an_internal_address(settings, serve, allow, reached):
    inner = serve(answer(("<p>" + "INTERNAL SECRET 内部资料。" * 30 + "</p>").encode(),
                         headers="Content-Type: text/html; charset=utf-8\r\nAccess-Control-Allow-Origin: *"),
                  host="127.0.0.2")
    outer = serve(routes({"/ajax/1.html": answer(PAGE.format(inner=inner.url).encode()),
                          "/robots.txt": answer(b"", "404 Not Found")}))
    result = crawl(settings, allow, f"{outer.url}/ajax/1.html")
    assert result["rendered"] == 1, result
    assert bool(inner.requests) is reached
