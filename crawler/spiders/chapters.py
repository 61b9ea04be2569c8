"""The spider's chapter items: one per chapter of a page that holds a whole work, and one per
chapter split over several pages, its parts joined by walking the "下一页" links.

A later part reached through its own link is held in spider.state (LONE) until the crawl has
nothing else to do; the parts a chain joined are kept there too (JOINED), so that no part is
stored twice (see Chapters._later_part). crawler.extensions.heldparts keeps both across a pause
of a crawl with a shared frontier.

Chapters is a mixin of crawler.spiders.novel.NovelSpider: it uses the spider's crawler, sites,
state, made_by, _site_lines, _site(), _request() and _extract().
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Request, Response, TextResponse

from pagetext.extraction.page import Extracted

from ..counts import count
from ..items import PageItem
from ..meta import FLUSH, PARTS, SITE
from ..responses import header
from ..rules import SiteRules
from ..urls import normalize_url

MAX_PARTS = 30
JOINED_TO_FIRST = "later part of a split chapter (joined to its first part)"
# Keys of spider.state, which Scrapy keeps in the job folder across a pause (SpiderState).
LONE, JOINED = "lone_parts", "joined_parts"


class Chapters:
    """The chapters of a page turned into items, a split chapter's parts joined first."""

    def _whole_work(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """A page that holds a whole work, each chapter in its own wrapper: one item per chapter.

        Each is stored under the page's URL with a "#chapter-k" fragment (the store keys pages by
        item.url as given), so every chapter is fingerprinted and matched on its own."""
        encoding = response.encoding if isinstance(response, TextResponse) else ""
        for k, (title, text) in enumerate(ex.chapters, 1):
            count(self.crawler.stats, site.name, "chapters")
            yield PageItem(url=f"{response.url}#chapter-{k}", site=site.name, title=title, text=text,
                           parts=[response.url], depth=int(response.meta.get("depth", 0)), encoding=encoding,
                           extractor=ex.extractor, made_by=self.made_by[site.name])

    def _later_part(self, response: Response, site: SiteRules, ex: Extracted) -> Iterator[Any]:
        """Part k > 1 of a split chapter reached through its own link.

        The chain from the first part normally joins it, but that chain may come later
        in the crawl, or never (part 1 missing, or linked from nowhere). So the part is
        held until the crawl has nothing else to do (spider_idle): joined by then, it is
        counted as such; else it is stored on its own (it matches as a part of its
        chapter). Holding it instead of storing it and superseding it later means a
        re-crawl stores the same pages as the first crawl, never the part twice. Held
        parts live in spider.state, which a paused job keeps in its folder.
        """
        lone, joined = self._parts_state()
        if response.url in joined:
            count(self.crawler.stats, site.name, "skipped", JOINED_TO_FIRST)
            return
        nxt = normalize_url(ex.next_part) if ex.next_part else ""
        lone[response.url] = {
            "site": site.name, "title": ex.title, "text": ex.text, "next": nxt if site.allows(nxt) else "",
            "depth": int(response.meta.get("depth", 0)), "extractor": ex.extractor,
            "encoding": response.encoding if isinstance(response, TextResponse) else "",
            "etag": header(response, b"ETag"), "last_modified": header(response, b"Last-Modified"),
        }
        yield from ()

    def _parts_state(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        return self.state.setdefault(LONE, {}), self.state.setdefault(JOINED, set())

    def parse_part(self, response: Response, **_: Any) -> Iterator[Any]:
        """A later part of a split chapter: add its text and go on to the next part."""
        site = self._site(response.meta)
        count(self.crawler.stats, site.name, "fetched")
        parts = response.meta[PARTS]
        ex = self._extract(response, site)
        if ex is None or not ex.text:
            if ex is not None:
                count(self.crawler.stats, site.name, "skipped", "no text on the next part of a split chapter")
            yield self._item(site, parts, response.meta)
            return
        self._parts_state()[1].add(response.url)
        yield from self._chapter(response, site, ex, parts)

    def _chapter(self, response: Response, site: SiteRules, ex: Extracted,
                 parts: list[tuple[str, str, str]]) -> Iterator[Any]:
        parts = [*parts, (response.url, ex.title, self._site_lines.clean_and_learn(site.name, ex.text))]
        nxt = normalize_url(ex.next_part) if ex.next_part else ""
        lone, joined = self._parts_state()
        while nxt in lone and nxt not in {u for u, _, _ in parts} and len(parts) < MAX_PARTS:
            # Fetched already through its own link and held (see _later_part): joined as it is, not fetched again.
            held = lone.pop(nxt)
            joined.add(nxt)
            parts.append((nxt, held["title"], held["text"]))
            nxt = held["next"]
        if nxt and nxt not in {u for u, _, _ in parts} and len(parts) < MAX_PARTS and site.allows(nxt):
            # dont_filter: a part reached earlier through its own link must still be joined here.
            yield self._request(nxt, site, self.parse_part, dont_filter=True, priority=10, depth_reset=True,
                                **{PARTS: parts})
            return
        count(self.crawler.stats, site.name, "chapters")
        validators = {}
        if len(parts) == 1:  # a joined chapter is several responses: no one response's validators stand for it
            validators = {"etag": header(response, b"ETag"), "last_modified": header(response, b"Last-Modified")}
        yield self._item(site, parts, response.meta, encoding=response.encoding if isinstance(
            response, TextResponse) else "", extractor=ex.extractor, made_by=self.made_by[site.name], **validators)

    def _item(self, site: SiteRules, parts: list[tuple[str, str, str]], meta: dict[str, Any], **kw: Any) -> PageItem:
        url, title, _ = parts[0]
        if len(parts) > 1:  # every response but the first ends inside this page
            count(self.crawler.stats, site.name, "parts joined", n=len(parts) - 1)
        return PageItem(url=url, site=site.name, title=title, text="\n".join(t for _, _, t in parts),
                        parts=[u for u, _, _ in parts], depth=int(meta.get("depth", 0)), **kw)

    def _flush_lone(self) -> bool:
        """Settle the held later parts (see _later_part); True when a request was scheduled for them."""
        lone, joined = self._parts_state()
        for url in [u for u in lone if u in joined]:
            count(self.crawler.stats, lone.pop(url)["site"], "skipped", JOINED_TO_FIRST)
        if not lone:
            return False
        # A held part that is the next part of another held one waits: the other's chain may join it.
        nexts = {h["next"] for h in lone.values()}
        heads = [u for u in lone if u not in nexts] or list(lone)
        # Items come only out of callbacks: a data: request (no network) brings the crawl back here,
        # carrying the parts it settles (taken out of the state, so that no idle schedules them twice).
        batch = {u: lone.pop(u) for u in heads}
        request = Request("data:,", callback=self.parse_lone, errback=self.lone_failed, dont_filter=True,
                          priority=30, meta={FLUSH: batch, SITE: batch[heads[0]]["site"]})
        self.crawler.engine.crawl(request)
        return True

    def lone_failed(self, failure) -> None:
        for held in failure.request.meta[FLUSH].values():
            count(self.crawler.stats, held["site"], "failed", "a lone part of a split chapter could not be stored")

    def parse_lone(self, response: Response, **_: Any) -> Iterator[Any]:
        """Store the lone later parts on their own (or start a chain from them when they have a next part)."""
        _, joined = self._parts_state()
        for url, held in response.meta[FLUSH].items():
            site = self.sites[held["site"]]
            if url in joined:
                count(self.crawler.stats, site.name, "skipped", JOINED_TO_FIRST)
                continue
            parts = [(url, held["title"], held["text"])]
            meta = {"depth": held["depth"]}
            if held["next"] and held["next"] not in joined:
                yield self._request(held["next"], site, self.parse_part, dont_filter=True, priority=10,
                                    depth_reset=True, **{PARTS: parts})
                continue
            count(self.crawler.stats, site.name, "chapters")
            yield self._item(site, parts, meta, encoding=held["encoding"], extractor=held["extractor"],
                             etag=held.get("etag", ""), last_modified=held.get("last_modified", ""),
                             made_by=self.made_by[site.name])
