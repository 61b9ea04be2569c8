"""Store each page, and each image a page shows, through the tracker and queue it for matching.

New and changed pages are stored as queued; a page whose text is the same as
the stored one (same content hash) is left alone, so a re-crawl reprocesses
only what changed. Images likewise, by the hash of their bytes. With a broker
(FPT_BROKER_URL) the queued pages and images go to the Celery workers in
batches while the crawl goes on; without one they are matched here when the
crawl ends, so `fptrack matches` shows them at once.

A page seen again unchanged (the same hash, or a 304 from the spider) is still up: a
copy on it marked removed after a takedown is back, and reopens (tracker.followup.recheck.seen_unchanged).

Each new or changed page, and each stored page with no evidence yet, is kept with its
evidence: the HTTP exchanges of its parts as one WARC file, and the screenshot of a
rendered page (crawler.capture holds them from the download until the page comes here).
Evidence that cannot be kept is counted and logged; the page is stored all the same.
"""
from __future__ import annotations

import logging

from scrapy import signals
from scrapy.exceptions import DropItem

from tracker.context import Context
from tracker.followup import recheck as followup
from tracker.pipeline import store_image, store_page
from tracker.store import Page, PageImage, StoreError
from tracker.store.evidence import Evidence

from ..capture import Captures
from ..counts import count
from ..items import ImageItem, NotModifiedItem
from ..tracking import PROCESS_PAGES, tracker_context

log = logging.getLogger(__name__)
BATCH = 50


class StorePipeline:
    def __init__(self, settings, stats, process: bool = True, ctx: Context | None = None):
        self.settings = settings
        self.stats = stats
        self.process = process
        self.ctx: Context | None = ctx
        self._own_ctx = ctx is None  # a crawl's shared Context is closed by the crawl, not here
        self.app = None
        self.queued: list[tuple[str, str]] = []  # (page key, site) not yet sent or processed
        self.images: list[tuple[str, str]] = []  # (image key, site) likewise
        self.captures = Captures(settings.evidence_max_bytes)

    @classmethod
    def from_crawler(cls, crawler):
        ctx = tracker_context(crawler)
        pipeline = cls(ctx.settings, crawler.stats, crawler.settings.getbool(PROCESS_PAGES, True), ctx)
        crawler.signals.connect(pipeline.captures.on_response, signal=signals.response_downloaded)
        return pipeline

    def open_spider(self, spider=None):
        if self.ctx is None:
            self.ctx = Context(self.settings)
        _ = self.ctx.store  # open it now: a wrong FPT_MONGO_URL fails the crawl at once, not per page
        if self.process and self.settings.broker_url:
            from tracker.workers.app import create_celery

            self.app = create_celery(self.settings)

    def process_item(self, item, spider=None):
        if isinstance(item, ImageItem):
            return self._store_image(item)
        if isinstance(item, NotModifiedItem):
            self._seen_unchanged(item.url, item.url, item.site)
            return item
        meta = {"title": item.title, "parts": len(item.parts), "encoding": item.encoding,
                "extractor": item.extractor, "depth": item.depth}
        if len(item.parts) > 1:
            meta["part_urls"] = "\n".join(item.parts)
        if item.made_by:
            meta["made_by"] = item.made_by  # validators count only for a text made the same way
        page = Page(key=item.url, text=item.text, url=item.url, site=item.site, fetched_at=item.fetched_at, meta=meta,
                    etag=item.etag, last_modified=item.last_modified)
        try:
            before = self._site_of(item.url)
            done = store_page(self.ctx, page)
        except StoreError as e:
            count(self.stats, item.site, "failed", "the store refused the page")
            log.error("cannot store %s: %s", item.url, e)
            raise DropItem(f"cannot store the page: {e}") from e
        except Exception as e:  # a bug must not lose the page without a word (Scrapy would only log it)
            count(self.stats, item.site, "failed", f"storing failed: {type(e).__name__}")
            log.exception("cannot store %s", item.url)
            raise DropItem(f"cannot store the page: {e}") from e
        stored, changed = done.record, done.changed
        if not changed and before not in (None, item.site):
            # The same page under another site name (a site added with rules after an ad-hoc crawl):
            # matched again so that its matches carry the new name too.
            changed = True
        if len(item.parts) > 1:
            self._supersede(item)
        self._keep_evidence(item, stored.key, changed)
        if changed or done.to_process:
            count(self.stats, item.site, "stored")
            self.queued.append((stored.key, item.site))
            if self.app is not None and len(self.queued) >= BATCH:
                self._send()
        else:
            count(self.stats, item.site, "unchanged")
            self._seen_unchanged(stored.key, item.url, item.site)
        return item

    def _seen_unchanged(self, key: str, url: str, site: str) -> None:
        """The page is up as stored: a copy on it marked removed is back (reopened, with a copy-back event)."""
        try:
            back = followup.seen_unchanged(self.ctx.store, key, url)
        except Exception:  # the page is counted already; the next crawl or re-check finds the copy again
            count(self.stats, site, "copies back failed")
            log.exception("cannot reopen the removed copies on %s", url)
            return
        if back:
            count(self.stats, site, "copies back", n=len(back))
            log.info("%s: %d removed copies are back (%s)", url, len(back), ", ".join(back[:3]))

    def _keep_evidence(self, item, key: str, changed: bool) -> None:
        """Keep the page's WARC (and screenshot) when its text is new or changed, or it has none yet."""
        try:
            if not changed and self.ctx.store.evidence(key):
                return
            warc, shots, missing = self.captures.files(item.parts or [item.url])
            if warc is None and not shots:
                count(self.stats, item.site, "evidence missing", "the responses were no longer held")
                return
            if warc is not None:
                self.ctx.store.put_evidence(Evidence(page=key, kind="warc", data=warc.data, url=warc.url,
                                                     fetched_at=warc.fetched_at, truncated=warc.truncated))
                if warc.truncated:
                    count(self.stats, item.site, "evidence truncated")
            for url, shot in shots:
                self.ctx.store.put_evidence(Evidence(page=key, kind="screenshot", data=shot, url=url,
                                                     fetched_at=warc.fetched_at if warc else item.fetched_at))
            count(self.stats, item.site, "evidence kept")
            if missing:
                log.warning("evidence of %s lacks %d of its parts (no longer held): %s", key, len(missing),
                            ", ".join(missing[:3]))
        except Exception as e:  # the page is stored: evidence that fails is said, never a lost page
            count(self.stats, item.site, "evidence failed", type(e).__name__)
            log.error("cannot keep the evidence of %s: %s", key, e)

    def _store_image(self, item: ImageItem) -> ImageItem:
        from tracker.media.images import page_image_key

        key = page_image_key(item.url, item.data)
        image = PageImage(key=key, url=item.url if key == item.url else "", site=item.site, found_on=item.found_on,
                          data=item.data, media_type=item.media_type, fetched_at=item.fetched_at, etag=item.etag,
                          last_modified=item.last_modified, position=item.position)
        try:
            done = store_image(self.ctx, image)
        except Exception as e:  # kept out of the page counts; the next crawl fetches it again
            count(self.stats, item.site, "images failed", f"the store refused it: {type(e).__name__}")
            log.error("cannot store the image %s: %s", key[:200], e)
            raise DropItem(f"cannot store the image: {e}") from e
        stored, changed = done.record, done.changed
        self._keep_picture_evidence(item, key, changed)
        if done.to_process:
            count(self.stats, item.site, "images stored")
            self.images.append((stored.key, item.site))
            if self.app is not None and len(self.images) >= BATCH:
                self._send_images()
        else:
            count(self.stats, item.site, "images unchanged")
        return item

    def _keep_picture_evidence(self, item: ImageItem, key: str, changed: bool) -> None:
        """A new picture that holds text (a chapter posted as pictures): its HTTP exchange kept as a WARC,
        the evidence of the page its pictures make (`<page>#pictures`, tracker.media.pictures). Other images'
        exchanges are let go. Evidence that fails is counted; the image is stored all the same."""
        from tracker.media.pictures import SUFFIX, holds_text

        warc = self.captures.take(item.url)
        if warc is None or not changed or not holds_text(item.data):
            return
        try:
            self.ctx.store.put_evidence(Evidence(page=(item.found_on or key) + SUFFIX, kind="warc", data=warc.data,
                                                 url=warc.url, fetched_at=warc.fetched_at, truncated=warc.truncated))
            count(self.stats, item.site, "picture evidence kept")
        except Exception as e:  # the image is stored: evidence that fails is said, never a lost image
            count(self.stats, item.site, "evidence failed", type(e).__name__)
            log.error("cannot keep the evidence of the picture %s: %s", key[:200], e)

    def _supersede(self, item) -> None:
        """A later part stored on its own by an earlier crawl (no chain reached it then) is now
        inside this joined chapter: the lone page goes, so the copy is reported once. Kept when
        someone already reviewed one of its matches."""
        for url in item.parts[1:]:
            try:
                if self.ctx.store.delete_page(url):
                    count(self.stats, item.site, "lone parts superseded")
            except StoreError as e:
                log.error("cannot remove the lone part %s: %s", url, e)

    def _site_of(self, key: str) -> str | None:
        from tracker.store import NotFound

        try:
            return self.ctx.store.get_page(key).site
        except NotFound:
            return None

    def close_spider(self, spider=None):
        try:
            if self.queued and self.process:
                self._send()
            if self.images and self.process:
                self._send_images()
        finally:
            if self._own_ctx:
                self.ctx.close()

    def _send(self) -> None:
        """The stored pages to the workers, or matched here (embedded mode: the results are there
        when the crawl ends); tracker.workers.queue decides, as it does for `fptrack ingest`."""
        from tracker.workers.queue import dispatch_pages

        sites = dict(self.queued)

        def each(r) -> None:
            site = sites.get(r.page, "")
            count(self.stats, site, "processed")
            if r.status == "failed":
                # Not "failed": the page was stored (counted so); its status and reason are in the store.
                count(self.stats, site, "processing failed", r.reason)
            elif r.matches:
                count(self.stats, site, "matched")

        if self.app is None:
            log.info("matching %d stored pages against the registered originals", len(self.queued))
        self._dispatch(self.queued, dispatch_pages, "sent to the workers", "left queued", each)

    def _send_images(self) -> None:
        """The stored images likewise: matched against the registered images, and the pictures that hold
        text read by OCR (here, or by the workers' read_picture tasks)."""
        from tracker.media.pictures import READ, SKIPS, TO_READ
        from tracker.workers.queue import dispatch_images

        sites = dict(self.images)

        def each(done, reading) -> None:
            site = sites.get(done.image, "")
            if done.status == "failed":
                count(self.stats, site, "images processing failed", done.reason)
            elif done.matches:
                count(self.stats, site, "images matched")
            if done.picture:
                count(self.stats, site, "pictures seen")
            if done.picture and done.picture != TO_READ:
                count(self.stats, site, "pictures skipped", done.picture)
            if reading is None:
                return
            if reading.characters:
                count(self.stats, site, "characters recognised", n=reading.characters)
            if reading.status == READ:
                count(self.stats, site, "pictures read")
            elif reading.status in SKIPS:
                count(self.stats, site, "pictures skipped", reading.status)
            elif reading.status != "missing":
                count(self.stats, site, "pictures failed", reading.reason or reading.status)
            if reading.matched is not None and reading.matched.matches:
                count(self.stats, site, "picture pages matched")

        self._dispatch(self.images, dispatch_images, "images sent to the workers", "images left queued", each)

    def _dispatch(self, queued: list[tuple[str, str]], dispatch, sent: str, left: str, each) -> None:
        """Hand the queued keys on. Sent to the workers, each is counted per site as `sent`; when the
        broker cannot be reached they stay stored as queued (the daily run or `fptrack process` takes
        them), counted as `left`. Processed here, `each` counts every result."""
        from tracker.workers.queue import BrokerUnavailable

        keys = [k for k, _ in queued]
        try:
            if self.app is None:
                dispatch(self.ctx, keys, each=each)
                queued.clear()
                return
            dispatch(self.ctx, keys, app=self.app)
            what, reason = sent, ""
        except BrokerUnavailable as e:
            log.error("%s", e)
            what, reason = left, "the broker could not be reached"
        for _, site in queued:
            count(self.stats, site, what, reason)
        queued.clear()
