"""Extract pages in worker processes, so the crawl uses every core.

Scrapy runs on one thread: while a callback parses a page, no response is read and
no request is sent. Extraction (pagetext.extraction.page: parse, CSS visibility, density,
links, site lines) is most of a crawl's CPU, so this downloader middleware hands it
to a pool of worker processes (FPT_EXTRACT_PROCESSES, default: one fewer than the
cores, at most 4; 0 extracts in the crawl's own process) and the reactor goes on
with other downloads meanwhile. The result rides on the response's meta
(EXTRACTED); the spider uses it when it is there and extracts in-process otherwise,
so a spider run without this middleware (tests, tools) behaves the same.

A worker that dies on a page (out of memory on a hostile one, killed) costs that
page only: it is extracted no more, counted as failed with the reason, and the
pool is started afresh for the next pages.
"""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from scrapy import signals
from scrapy.http import Request, Response, TextResponse

from pagetext.extraction.page import Selectors, extract
from pagetext.visibility import MAX_CSS_CHARS

from ..counts import count
from ..meta import CSS, EXTRACT, EXTRACTED, SITE, WORKER_DIED
from ..responses import HTML_TYPES, content_type
from ..stylesheets import stylesheet_urls

__all__ = ["ExtractMiddleware", "default_processes"]

log = logging.getLogger(__name__)

MAX_CACHED = 512  # stylesheets kept per crawl
MAX_PROCESSES = 4


def default_processes() -> int:
    """One fewer than the cores this process may use (the crawl itself keeps one), at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(0, min(MAX_PROCESSES, cores - 1))


def _ignore_interrupt() -> None:
    # Ctrl-C goes to the whole process group: the crawl pauses on it, the workers must not die of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _extract(html: str, url: str, selectors: Selectors | None, css: str = "") -> Any:
    try:
        return extract(html, url, selectors, css)
    except Exception as e:  # the spider counts it as an extraction error, as when it extracts itself
        return type(e).__name__


class ExtractMiddleware:
    """process_response: extract the spider's text pages in the worker pool."""

    def __init__(self, processes: int, crawler=None):
        self.processes = processes
        self.crawler = crawler
        self.sheets: dict[str, asyncio.Future] = {}  # stylesheet URL -> its text, fetched once per crawl
        self.pool: ProcessPoolExecutor | None = None
        if processes > 0:
            self._start()

    @classmethod
    def from_crawler(cls, crawler):
        value = crawler.settings.get("FPT_EXTRACT_PROCESSES")
        processes = default_processes() if value in (None, "") else max(0, int(value))
        mw = cls(processes, crawler)
        crawler.signals.connect(mw.close, signal=signals.spider_closed)
        return mw

    def _start(self) -> None:
        # Forked now, while the crawl has no other threads (the workers then hold no lock another
        # thread had taken), and made to start at once: the first pages do not wait for them.
        self.pool = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("fork"),
                                        initializer=_ignore_interrupt)
        for _ in range(self.processes):
            self.pool.submit(int)

    async def _stylesheets(self, html: str, url: str, request) -> str:
        """The text of the page's external stylesheets (crawler.stylesheets), each fetched once."""
        engine = getattr(self.crawler, "engine", None)
        if engine is None:
            return ""
        texts = []
        for sheet in stylesheet_urls(html, url):
            got = self.sheets.get(sheet)
            if got is None:
                if len(self.sheets) >= MAX_CACHED:
                    continue
                got = self.sheets[sheet] = asyncio.ensure_future(self._fetch(engine, sheet, request))
            texts.append(await asyncio.shield(got))
        return "\n".join(t for t in texts if t)

    async def _fetch(self, engine, url: str, page_request) -> str:
        meta = {k: page_request.meta[k] for k in (SITE, "dont_obey_robotstxt") if k in page_request.meta}
        try:
            response = await engine.download_async(Request(url, meta=meta, priority=50))
        except Exception as e:  # missing, refused by robots.txt, timed out: the page is read without it
            log.debug("stylesheet %s not read: %s", url, e)
            return ""
        if not 200 <= response.status < 300:
            return ""
        if self.crawler is not None and meta.get(SITE):
            count(self.crawler.stats, meta[SITE], "stylesheets read")
        body = response.body[:MAX_CSS_CHARS * 4]
        return body.decode(getattr(response, "encoding", None) or "utf-8", "replace")[:MAX_CSS_CHARS]

    def close(self, *_: Any, **__: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None

    async def process_response(self, request, response: Response, spider=None):
        if not 200 <= response.status < 300:
            return response
        selectors = request.meta.get(EXTRACT)  # set by the spider on the pages it extracts
        if selectors is None or not isinstance(response, TextResponse) or content_type(response) not in HTML_TYPES:
            return response
        args = (response.text, response.url, selectors)
        css = await self._stylesheets(args[0], response.url, request)
        if css:
            request.meta[CSS] = css  # for the spider, when it extracts in its own process
        if self.pool is None:
            return response
        try:
            result = await asyncio.wrap_future(self.pool.submit(_extract, *args, css))
        except BrokenProcessPool:
            log.warning("the extraction process died on %s; extracting the next pages in a new one", response.url)
            self.close()
            self._start()
            result = WORKER_DIED
        request.meta[EXTRACTED] = (response.url, result)  # response.meta is this dict, once Scrapy links them
        return response
