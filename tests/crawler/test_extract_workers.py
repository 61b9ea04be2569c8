"""Pages extracted in worker processes (crawler.middlewares.extract) give what the crawl's own
process gives, and a worker that dies costs one page, not the crawl."""
from __future__ import annotations

import asyncio
import dataclasses
import os
import signal

import pytest
from scrapy.http import HtmlResponse, TextResponse

import fptrack_samples
from crawler.meta import EXTRACTED, WORKER_DIED
from crawler.middlewares.extract import ExtractMiddleware, default_processes
from crawler.spiders.novel import NovelSpider
from pagetext.extraction.page import extract
from tracker.context import Context
from web.demo.chapters import chapters_from_folder

from .layout_sites import LayoutSite
from .test_crawl_site import crawl, registered  # noqa: F401 - the fixture and the command

CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)
PAGE = ("<html><head><title>第一章 山城_某某小说网</title></head><body><div class=nav><a href=/>首页</a></div>"
        "<div id=content>" + "<br>".join(CHAPTERS[0][1].splitlines()) + "</div></body></html>")


@pytest.fixture
def middleware():
    mw = ExtractMiddleware(1)
    yield mw
    mw.close()


def _exchange(spider, url="http://novel.test/b/1.html", body=PAGE, callback=None, cls=HtmlResponse):
    request = spider._request(url, next(iter(spider.sites.values())), callback)  # as the spider asks for it
    response = cls(url, body=body.encode("utf-8"), encoding="utf-8", request=request,
                   headers={"Content-Type": "text/html; charset=utf-8"})
    return request, response


def test_a_page_is_extracted_in_the_worker_as_in_process(middleware):
    spider = NovelSpider(urls="http://novel.test/")
    request, response = _exchange(spider)
    assert asyncio.run(middleware.process_response(request, response, spider)) is response
    url, result = request.meta[EXTRACTED]
    assert url == response.url
    assert result == extract(PAGE, response.url)
    assert result.kind == "chapter" and CHAPTERS[0][1].splitlines()[0] in result.text


def test_only_pages_the_spider_extracts_go_to_the_workers(middleware):
    spider = NovelSpider(urls="http://novel.test/")
    request, response = _exchange(spider, url="http://novel.test/robots.txt", callback=spider.parse_robots)
    asyncio.run(middleware.process_response(request, response, spider))
    assert EXTRACTED not in request.meta
    request, response = _exchange(spider, body="plain text", cls=TextResponse)
    response.headers["Content-Type"] = "text/plain"
    asyncio.run(middleware.process_response(request, response, spider))
    assert EXTRACTED not in request.meta  # plain text is read by the spider itself


def test_a_worker_that_dies_costs_its_page_and_the_next_page_is_extracted(middleware):
    spider = NovelSpider(urls="http://novel.test/")
    for pid in list(middleware.pool._processes):  # killed as the kernel kills a process out of memory
        os.kill(pid, signal.SIGKILL)
    request, response = _exchange(spider)
    asyncio.run(middleware.process_response(request, response, spider))
    assert request.meta[EXTRACTED] == (response.url, WORKER_DIED)
    request, response = _exchange(spider)
    asyncio.run(middleware.process_response(request, response, spider))
    assert request.meta[EXTRACTED][1].kind == "chapter"


def test_no_workers_leaves_extraction_to_the_spider():
    spider = NovelSpider(urls="http://novel.test/")
    mw = ExtractMiddleware(0)
    request, response = _exchange(spider)
    asyncio.run(mw.process_response(request, response, spider))
    assert mw.pool is None and EXTRACTED not in request.meta
    assert 0 <= default_processes() <= 4


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["split", "wap"])
def test_a_crawl_stores_the_same_pages_with_and_without_workers(registered, layout, tmp_path):
    stored = {}
    for processes in (0, 1):
        settings = dataclasses.replace(registered, extract_processes=processes)
        with LayoutSite(layout, CHAPTERS) as site:
            result = crawl(settings, site.url + "/")
            base = site.url
        assert result["outcome"] == "finished" and result["failed"] == 0
        ctx = Context(settings)
        stored[processes] = {p.key.removeprefix(base): (p.text, p.meta.get("title"), p.meta.get("parts")) for p in ctx.store.pages()
                             if p.key.startswith(base)}
        ctx.close()
    assert stored[0] and stored[0] == stored[1]
