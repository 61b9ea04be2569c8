"""What happens to a page: stored as queued, processed into matches, or kept as
failed with its reason. Every step is idempotent, so a retried or repeated task
updates the same records and never duplicates a match.

Errors are of two kinds. A page the engine cannot use (no text left after
removing markup and boilerplate, undecodable) fails for good, with the reason.
A store or index that cannot be reached raises, so that the caller (a Celery
task) retries later; the page stays queued and nothing is lost.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fingerprint.errors import FingerprintError, InputError
from fingerprint.index import index_keys
from fingerprint.models import Document, Match
from pagetext.sources import ReadReport, image_files, read_documents, without_images

from .context import Context
from .fingerprints import pack_keys, params_of
from .followup import notify
from .media import pictures
from .media.images import ProcessedImage, check_image, process_image
from .media.pictures import PictureRead
from .safe_names import clean_site_name
from .seen import Judged
from .store import BadRecord, FingerprintRecord, MatchRecord, NotFound, Page, PageImage
from .workers.tally import tally

EMPTY_REASON = "no text left after removing markup, site boilerplate and ads"


@dataclass
class IngestReport:
    queued: list[str] = field(default_factory=list)  # new or changed pages, to process
    unchanged: list[str] = field(default_factory=list)  # same content as stored: not reprocessed
    read: ReadReport = field(default_factory=ReadReport)
    images: list[str] = field(default_factory=list)  # image files, new or changed, to process
    images_unchanged: list[str] = field(default_factory=list)


@dataclass
class Stored:
    """A page or page image as the store now holds it, and whether it waits to be processed."""

    record: Page | PageImage
    changed: bool  # new, or its text (bytes) differ from what was stored

    @property
    def to_process(self) -> bool:
        """New or changed, or stored earlier and never processed (still queued)."""
        return self.changed or self.record.status == "queued"


def store_page(ctx: Context, page: Page) -> Stored:
    """Keep a fetched or saved page: new or changed text is stored as queued for matching, the
    same text again is left as it was. The crawler and `fptrack ingest` store every page here."""
    return Stored(*ctx.store.upsert_page(page))


def store_image(ctx: Context, image: PageImage) -> Stored:
    """As store_page, for an image found on a page (by the hash of its bytes)."""
    return Stored(*ctx.store.upsert_page_image(image))


def ingest(ctx: Context, inputs: Sequence[str], *, site: str = "") -> IngestReport:
    """Store saved pages (text, HTML, JSON Lines) as if crawled; page key = file name
    (or the record's id / url). New and changed pages are queued. Image files among the
    inputs are stored as images found on pages (key = file name), queued likewise.

    A record the store refuses, or whose site name is unusable, is reported in
    `report.read` with its source (file:line) and the reason; the others go on."""
    given = clean_site_name(site) if site else ""  # a bad --site stops here, before anything is stored
    report = IngestReport()
    for doc in read_documents(list(inputs), report.read):
        try:
            page = Page(key=doc.key, text=doc.text, url=str(doc.meta.get("url", "")),
                        site=given or _record_site(doc.meta.get("site")),
                        meta={k: v for k, v in doc.meta.items() if isinstance(v, (str, int, float, bool))})
            stored = store_page(ctx, page)
        except (InputError, BadRecord) as e:
            report.read.documents -= 1
            report.read.add_skip(doc.source, f"not stored: {e}")
            continue
        (report.queued if stored.to_process else report.unchanged).append(stored.record.key)
    without_images(report.read)
    for key, path in image_files(inputs):
        try:
            data = path.read_bytes()
            kind = check_image(data, str(path))
            stored = store_image(ctx, PageImage(
                key=key + path.suffix.lower(), url="", site=given, found_on="", data=data, media_type=kind))
        except OSError as e:
            report.read.add_skip(str(path), f"cannot read it: {e.strerror}")
            continue
        except (InputError, BadRecord) as e:
            report.read.add_skip(str(path), f"not stored: {e}")
            continue
        (report.images if stored.to_process else report.images_unchanged).append(stored.record.key)
    return report


def _record_site(value: object) -> str:
    """A record's own "site" field, normalised as every site name is; none is ""."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    return clean_site_name(str(value))


@dataclass
class Processed:
    page: str
    status: str  # done | failed | missing
    matches: list[MatchRecord] = field(default_factory=list)
    reason: str = ""
    looked_up: bool = False  # its text was judged before: the matches are that judgement's (tracker.seen)


def process_page(ctx: Context, key: str) -> Processed:
    """Match one stored page against the registered originals and record the matches."""
    try:
        page = ctx.store.get_page(key)
    except NotFound:
        return Processed(page=key, status="missing", reason="no such page in the store")
    try:
        prepared = ctx.tracker.prepare(Document(page.key, page.text, meta={"site": page.site}))
    except FingerprintError as e:
        ctx.store.set_page_status(key, "failed", str(e))
        return Processed(page=key, status="failed", reason=str(e))
    # A text judged before costs a lookup (tracker.seen); it was not empty then (a failed page is
    # never recorded), so only a page to judge is measured in sounds first.
    judged = ctx.seen.lookup(page, prepared) if ctx.seen is not None else Judged([], False)
    if not judged.looked_up:
        if prepared.units == 0:
            ctx.store.set_page_status(key, "failed", EMPTY_REASON)
            return Processed(page=key, status="failed", reason=EMPTY_REASON)
        found = ctx.tracker.match(prepared)
        judged = ctx.seen.judged(judged, found, prepared) if judged.record is not None else Judged(found, False)
    found = of_whole_works(ctx.store, judged.found)
    # A new match becomes an event to tell; a copy found again on a page marked removed reopens its match.
    records = notify.matches_stored(ctx.store, [(r, ctx.store.upsert_match(r)) for r in
                                                (to_record(m, page, ctx) for m in found)], page.url)
    ctx.store.set_page_status(key, "done")
    if ctx.seen is not None:
        ctx.seen.remember(judged)  # only a page done is a source of judgement
    return Processed(page=key, status="done", matches=records, looked_up=judged.looked_up)


def of_whole_works(store: Any, found: Sequence[Match]) -> list[Match]:
    """The matches whose work is registered whole: an upload stopped part-way (an error, or the
    process killed) leaves chapters in the index without their work's record (tracker.uploads.novels),
    which match nothing until the same upload registers the work whole."""
    inner = getattr(store, "inner", store)  # an organisation's view: every work is judged whole or not
    whole: dict[str, bool] = {}
    out = []
    for m in found:
        work = m.original.split("/", 1)[0]
        if work not in whole:
            try:
                inner.get_work(work)
                whole[work] = True
            except NotFound:
                whole[work] = False
        if whole[work]:
            out.append(m)
    return out


def to_record(m: Match, page: Page, ctx: Context) -> MatchRecord:
    work = m.original.split("/", 1)[0]
    return MatchRecord(
        page=page.key, chapter=m.original, work=work, site=page.site,
        similarity=m.similarity, containment=m.containment, page_share=m.page_share, verdict=m.verdict,
        scores=dict(m.scores), spans=[vars(s).copy() for s in m.spans],
    )


def process_pages(ctx: Context, keys: Iterable[str],
                  each: Callable[[Processed], None] | None = None) -> dict[str, int]:
    """Process these stored pages in this process, one by one (`each` is told every result);
    counts by outcome and of the matches made. Every caller that matches pages without a
    worker comes here: `fptrack ingest` and `process`, the crawl in embedded mode."""
    return tally(keys, lambda key: process_page(ctx, key), each)


def process_queued(ctx: Context, *, limit: int | None = None,
                   each: Callable[[Processed], None] | None = None) -> dict[str, int]:
    """Process the queued pages in this process; counts by outcome. (Failed pages are
    retried by the daily task while they have attempts left.)"""
    return process_pages(ctx, [p.key for p in ctx.store.pages(status="queued", limit=limit)], each)


def reindex(ctx: Context, *, refingerprint: bool = False, progress: Callable[[Iterable], Iterable] | None = None) -> int:
    """Rebuild the index from the store. Chapters without a fingerprint for the current
    parameters (or all, with refingerprint) are fingerprinted again first."""
    from fingerprint.engine import prepare

    have = set() if refingerprint else {r.chapter for r in ctx.store.fingerprints(ctx.params_hash)}
    chapters = list(ctx.store.chapters())
    todo = [c for c in chapters if c.key not in have]
    for ch in (progress(todo) if progress else todo):
        keys = index_keys(prepare(ch.key, ch.text, ctx.config), ctx.config, ctx.params, role="original")
        ctx.store.put_fingerprint(FingerprintRecord(chapter=ch.key, params_hash=ctx.params_hash,
                                                    params=params_of(ctx.config, ctx.params), data=pack_keys(keys)))
    ctx.index.clear()
    return ctx.load_index(ctx.index)


# ---- chapters posted as pictures (tracker.media.pictures) ---------------------------------------------

def process_picture_page(ctx: Context, key: str | None) -> Processed | None:
    """Match the page a page's pictures make (tracker.media.pictures.picture_page), when there is one."""
    return process_page(ctx, key) if key else None


def read_picture(ctx: Context, key: str) -> PictureRead:
    """Read one picture judged to hold text; when it was the last of its page's pictures to read,
    match the text they make as a page (`PictureRead.matched`)."""
    done = pictures.read(ctx, key)
    done.matched = process_picture_page(ctx, done.page)
    return done


def process_image_here(ctx: Context, key: str) -> tuple[ProcessedImage, PictureRead | None]:
    """All that happens to a page image, in this process: matched against the registered images,
    judged, read when it holds text, and its page's pictures matched when none is left to read."""
    done = process_image(ctx, key)
    process_picture_page(ctx, done.picture_page)
    return done, read_picture(ctx, key) if done.picture == pictures.TO_READ else None


def process_images(ctx: Context, keys: Iterable[str],
                   each: Callable[[ProcessedImage, PictureRead | None], None] | None = None) -> dict[str, int]:
    """Process these stored page images in this process (process_image_here: matched, judged, read
    when they hold text); `each` is told every image's result and its reading. Counts by outcome,
    with the image matches, the pictures read by OCR and the matches found in their text."""
    read_n = found = 0

    def one(key: str) -> ProcessedImage:
        nonlocal read_n, found
        done, reading = process_image_here(ctx, key)
        if reading is not None:
            read_n += reading.status == pictures.READ
            found += len(reading.matched.matches) if reading.matched is not None else 0
        if each:
            each(done, reading)
        return done

    counts = tally(keys, one)
    return {**counts, "pictures read": read_n, "picture matches": found}


def process_queued_images(ctx: Context, *, limit: int | None = None,
                          each: Callable[[ProcessedImage, PictureRead | None], None] | None = None
                          ) -> dict[str, int]:
    """Process the queued page images in this process (process_images), and read the pictures
    judged to hold text and never read (their task lost); counts by outcome, with the pictures read
    and the matches found in their text."""
    counts = process_images(ctx, [i.key for i in ctx.store.page_images(status="queued", limit=limit)], each)
    for image in ctx.store.page_images(reading=pictures.TO_READ, limit=limit):
        reading = read_picture(ctx, image.key)
        counts["pictures read"] += reading.status == pictures.READ
        counts["picture matches"] += len(reading.matched.matches) if reading.matched is not None else 0
    return counts
