"""Drop pages that cannot be a chapter, with the reason, before they reach the store."""
from __future__ import annotations

from scrapy.exceptions import DropItem

from ..counts import count
from ..items import PageItem

MIN_CHARACTERS = 50  # fewer visible characters than a short paragraph: nothing worth fingerprinting
MAX_CHARACTERS = 2_000_000  # a "chapter" larger than a long novel is a dump, not a page


class ValidatePipeline:
    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_item(self, item, spider=None):
        if not isinstance(item, PageItem):  # an image: checked when it is fingerprinted
            return item
        visible = len("".join(item.text.split()))
        reason = ""
        if visible < MIN_CHARACTERS:
            reason = f"too little text (under {MIN_CHARACTERS} characters)"  # one reason, whatever the count
        elif len(item.text) > MAX_CHARACTERS:
            reason = f"text larger than {MAX_CHARACTERS:,} characters"
        elif not item.url.startswith(("http://", "https://")):
            reason = "not an http(s) URL"
        if reason:
            count(self.stats, item.site, "skipped", reason)
            raise DropItem(reason)
        return item
