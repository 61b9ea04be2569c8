"""What the spider reads off a response: its content type, its validators (ETag, Last-Modified)
and its text, extracted (crawler.middlewares.extract may have done that in a worker process).

PageExtraction is a mixin of crawler.spiders.novel.NovelSpider: it uses the spider's crawler,
sites, logger and _site(). The spider marks the requests whose pages it extracts (crawler.meta.EXTRACT,
with the site's selectors), so crawler.middlewares.extract can extract them in a worker first.
"""
from __future__ import annotations

from scrapy.http import Response, TextResponse

from pagetext.extraction.page import Extracted, extract, is_chapter_text

from ..counts import count
from ..meta import CSS, EXTRACTED, WORKER_DIED
from ..responses import TEXT_TYPES, content_type
from ..rules import SiteRules


class PageExtraction:
    """The extraction of a page's text, for the spider's callbacks and the extraction workers."""

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
