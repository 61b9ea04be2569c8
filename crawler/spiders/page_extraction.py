"""What the spider reads off a response: its content type, its validators (ETag, Last-Modified)
and its text, extracted (crawler.middlewares.extract may have done that in a worker process).

PageExtraction is a mixin of crawler.spiders.novel.NovelSpider: it uses the spider's crawler,
sites, logger, _site() and its callbacks parse and parse_part.
"""
from __future__ import annotations

from typing import Any

from scrapy.http import Request, Response, TextResponse

from fingerprint.extraction.page import Extracted, extract, is_chapter_text

from ..counts import count
from ..middlewares.encoding import SITE
from ..middlewares.extract import CSS, EXTRACTED, WORKER_DIED
from ..rules import SiteRules

TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
_HTML_TYPES = ("", *(t for t in TEXT_TYPES if t != "text/plain"))  # what extract() reads (no type: sniffed as HTML)


def content_type(response: Response) -> str:
    return response.headers.get(b"Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()


def header(response: Response, name: bytes) -> str:
    value = response.headers.get(name) or b""
    return value.decode("latin-1")[:200]  # a validator is sent back as is; a huge one is not kept


class PageExtraction:
    """The extraction of a page's text, for the spider's callbacks and the extraction workers."""

    def extraction_job(self, request: Request, response: Response) -> tuple[str, str, Any] | None:
        """The arguments of extract() for a response this spider will extract, else None.

        crawler.middlewares.extract runs them in a worker process ahead of the callback."""
        if request.callback not in (self.parse, self.parse_part) or request.meta.get(SITE) not in self.sites:
            return None
        if not isinstance(response, TextResponse) or content_type(response) not in _HTML_TYPES:
            return None
        return response.text, response.url, self._site(request.meta).selectors

    def _extract(self, response: Response, site: SiteRules) -> Extracted | None:
        """The page's extraction, or None (counted as skipped) when it is not a text page."""
        ctype = content_type(response)
        if not isinstance(response, TextResponse) or (ctype and ctype not in TEXT_TYPES):
            count(self.crawler.stats, site.name, "skipped", f"not a web page ({ctype or 'binary data'})")
            return None
        if ctype == "text/plain":
            text = response.text.strip()
            kind = "chapter" if is_chapter_text(text) else "other"
            return Extracted(title="", text=text, kind=kind, next_part=None, part=None, links=[],
                             chapter_links=[], extractor="plain text")
        done = response.meta.pop(EXTRACTED, None)
        if done is not None and done[0] == response.url:  # extracted in a worker process
            result = done[1]
        else:
            try:
                result = extract(response.text, response.url, site.selectors, response.meta.get(CSS, ""))
            except Exception as e:  # a parser bug on one hostile page must not stop the crawl
                result = type(e).__name__
        if isinstance(result, Extracted):
            return result
        reason = result if result == WORKER_DIED else f"extraction error: {result}"
        self.logger.warning("cannot extract %s: %s", response.url, reason)
        count(self.crawler.stats, site.name, "failed", reason)
        return None
