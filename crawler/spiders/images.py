"""The images a page shows, requested by the spider and read into ImageItems: covers and
illustrations of book pages, the pictures of a chapter posted as pictures, inline data: images.
Counted apart from the pages ("images fetched", "images skipped", ...).

PageImages is a mixin of crawler.spiders.novel.NovelSpider: it uses the spider's crawler and
_site().
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Request, Response

from fingerprint.image import media_type
from pagetext.extraction.page import Extracted

from ..counts import count
from ..items import ImageItem
from ..meta import CHAPTER_LINK, IMAGE, IMAGE_AT, IMAGE_OF, SITE
from ..responses import content_type, header
from ..rules import SiteRules
from .failures import classify

MAX_IMAGE_BYTES = 8 * 2**20  # as tracker.media.images.MAX_IMAGE_BYTES: larger images are not fetched
MAX_IMAGES_PER_SITE = 2000  # images requested per site and crawl (covers repeat on every page of a book)


class PageImages:
    """The requests for a page's images, and their responses and failures."""

    def _image_requests(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """The images a chapter or book page shows, fetched once per crawl each (size-limited, from
        any host: covers live on image servers; an inline data: image is read from the page itself).
        A book page is a catalogue, or a page that links to chapters. Counted apart from the pages
        ("images ...")."""
        if not site.images or not ex.images or not (ex.kind in ("chapter", "catalogue") or ex.chapter_links
                                                    or response.meta.get(CHAPTER_LINK)
                                                    or site.is_chapter_url(response.url)):
            return
        asked = self._images.setdefault(site.name, set())
        for position, url in enumerate(ex.images):
            if url in asked:
                continue
            if len(asked) >= MAX_IMAGES_PER_SITE:
                count(self.crawler.stats, site.name, "images not fetched", f"more than {MAX_IMAGES_PER_SITE} images")
                return
            asked.add(url)
            if url.startswith("data:"):
                yield from self._inline_image(url, site, response.url, position)
                continue
            meta = {SITE: site.name, IMAGE_OF: response.url, IMAGE_AT: position, IMAGE: True,
                    "download_maxsize": MAX_IMAGE_BYTES,
                    "allow_offsite": True, "handle_httpstatus_list": [304]}
            if not site.obey_robots:
                meta["dont_obey_robotstxt"] = True
            # Below the pages: the text is what a crawl is for, an image can wait for a free slot.
            yield Request(url, callback=self.parse_image, errback=self.image_failed, meta=meta, priority=-10)

    def _inline_image(self, url: str, site: SiteRules, found_on: str, position: int = 0) -> Iterator[ImageItem]:
        import base64
        import binascii

        count(self.crawler.stats, site.name, "images fetched")
        try:
            data = base64.b64decode(url.partition(",")[2], validate=False)
        except (binascii.Error, ValueError):
            count(self.crawler.stats, site.name, "images skipped", "an inline image that is not base64")
            return
        kind = media_type(data)
        if not kind:
            count(self.crawler.stats, site.name, "images skipped", "not an image (inline data)")
            return
        yield ImageItem(url=url, site=site.name, found_on=found_on, data=data, media_type=kind, position=position)

    def parse_image(self, response: Response, **_: Any) -> Iterator[Any]:
        site = self._site(response.meta)
        stats = self.crawler.stats
        count(stats, site.name, "images fetched")
        if response.status == 304:
            count(stats, site.name, "images not modified")
            return
        ctype = content_type(response)
        kind = media_type(response.body)
        if not kind:
            count(stats, site.name, "images skipped", f"not an image ({ctype or 'no type'})")
            return
        yield ImageItem(url=response.url, site=site.name, found_on=response.meta[IMAGE_OF], data=response.body,
                        media_type=kind, etag=header(response, b"ETag"),
                        last_modified=header(response, b"Last-Modified"), position=response.meta.get(IMAGE_AT, 0))

    def image_failed(self, failure) -> None:
        request = failure.request
        site = self._site(request.meta)
        what, reason = classify(failure, self.crawler.settings)
        count(self.crawler.stats, site.name, f"images {what}", reason)
