"""Ask for a stored page again only if it changed: conditional requests.

A page stored with an ETag or a Last-Modified is requested with If-None-Match /
If-Modified-Since; a server that supports them answers an unchanged page with
304 Not Modified and no body, and the spider counts it "not modified" without
extracting or storing anything. Servers without validators still get the
second line of defence: the store's content hash keeps an unchanged text from
being processed again.

Images of pages are asked for the same way (IMAGE), with the validators of the
stored page image. Only requests the spider marks CONDITIONAL are made conditional: the later parts
of a split chapter are not pages of the store, and the chain that joins them
needs their bodies. The mark is the page's `made_by` token: a hash of the
site's extraction rules and of the extraction code. A page stored under another
token (the site's selectors changed, the extractor was improved) is fetched in
full once, so that a better extraction is not kept out by a 304.
"""
from __future__ import annotations

import hashlib
import json
import logging
from functools import lru_cache
from pathlib import Path

from scrapy import signals

from tracker.store import StoreError

from ..meta import CONDITIONAL, IMAGE, SENT
from ..tracking import tracker_context

log = logging.getLogger(__name__)



class ConditionalMiddleware:
    def __init__(self, crawler):
        self.crawler = crawler
        self.store = None
        self.broken = False  # the store could not be opened: requests go out unconditional

    @classmethod
    def from_crawler(cls, crawler):
        mw = cls(crawler)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def _store(self):
        if self.store is None and not self.broken:
            try:
                self.store = tracker_context(self.crawler).store  # the crawl's one store
            except StoreError as e:
                self.broken = True
                log.warning("conditional requests off, the store cannot be opened: %s", e)
        return self.store

    def process_request(self, request, spider=None):
        image = bool(request.meta.get(IMAGE))
        if not (image or request.meta.get(CONDITIONAL)) or request.method != "GET" or SENT in request.meta:
            return None
        store = self._store()
        if store is None:
            return None
        try:
            if image:
                etag, modified = store.page_image_validators(request.url)
            else:
                etag, modified = store.page_validators(request.url, made_by=str(request.meta[CONDITIONAL]))
        except StoreError as e:  # one failed look-up costs one full download, not the crawl
            log.debug("no validators for %s: %s", request.url, e)
            return None
        if not (etag or modified):
            return None
        request.meta[SENT] = (etag, modified)
        if etag:
            request.headers.setdefault(b"If-None-Match", etag.encode("latin-1", "replace"))
        if modified:
            request.headers.setdefault(b"If-Modified-Since", modified.encode("latin-1", "replace"))
        # A 304 reaches the spider instead of being dropped as an HTTP error.
        request.meta["handle_httpstatus_list"] = [*request.meta.get("handle_httpstatus_list", ()), 304]
        return None

    def spider_closed(self, spider=None) -> None:
        self.store = None  # the crawl closes its store when the engine stops


def made_by(rules: dict) -> str:
    """A token for how a page's text is made: the site's extraction rules and the extraction code."""
    text = json.dumps(rules, sort_keys=True, ensure_ascii=False) + _code()
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@lru_cache(maxsize=1)
def _code() -> str:
    # The extraction code itself: a new version of it may find better text in the same bytes.
    import pagetext.html
    from pagetext.extraction import page as extract

    return "".join(hashlib.sha256(Path(m.__file__).read_bytes()).hexdigest()
                   for m in (extract, pagetext.html))
