"""Images: a work's registered covers and illustrations, the images crawled pages show, and
which of those copy which of these.

The same steps as for texts: an image found on a page is stored as it was fetched
(status queued), then processed (fingerprinted and looked up in the index of the
registered images) into matches, or kept as failed with its reason. Registering an
image fingerprints it once and puts it in the index. Every step is idempotent.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fingerprint.errors import InputError
from fingerprint.image import ImageFingerprint, fingerprint_image, is_image, media_type
from fingerprint.image_index import ImageIndex
from pagetext.sources import image_files

from ..followup import notify
from ..store import ImageMatch, NotFound, WorkImage

if TYPE_CHECKING:  # only in annotations: the context loads this module's index
    from ..context import Context

#: Largest image kept, registered or crawled (a cover is rarely over 1 MB; MongoDB holds 16 MB a document).
MAX_IMAGE_BYTES = 8 * 2**20


def check_image(data: bytes, name: str) -> str:
    """The image's media type; InputError naming the problem when it is too large or not an image."""
    if len(data) > MAX_IMAGE_BYTES:
        raise InputError(f"{name} is {len(data):,} bytes, over the {MAX_IMAGE_BYTES // 2**20} MiB an image may have; "
                         "give a smaller file")
    if not is_image(data):
        raise InputError(f"{name} is not a JPEG, PNG, GIF, WebP or BMP image")
    return media_type(data)


def load_image_index(ctx: Context) -> ImageIndex:
    """The registered images' fingerprints, from the store (their bytes are not read)."""
    index = ImageIndex()
    for img in ctx.store.work_images():
        try:
            index.add(img.key, ImageFingerprint.from_dict(img.fingerprint))
        except (KeyError, ValueError):  # made another way: `fptrack reindex` fingerprints it again
            continue
    return index


# ---- registering ---------------------------------------------------------------------

@dataclass
class ImageReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)

    @property
    def registered(self) -> int:
        return len(self.added) + len(self.changed) + len(self.unchanged)


def register_image(ctx: Context, work: str, name: str, data: bytes) -> tuple[WorkImage, str]:
    """Register one image of a work (idempotent); returns it and "added", "changed" or "unchanged"."""
    name = " ".join(name.split()).replace("/", "／")[:120]
    if not name:
        raise InputError("an image needs a name (its file name)")
    kind = check_image(data, name)
    fp = fingerprint_image(data, name=name)
    key = f"{work}/{name}"
    try:
        ctx.store.get_work_image(key)
        existed = True
    except NotFound:
        existed = False
    stored, changed = ctx.store.upsert_work_image(
        WorkImage(key=key, work=work, name=name, data=data, fingerprint=fp.to_dict(), media_type=kind))
    ctx.image_index.add(stored.key, fp)
    return stored, "changed" if changed and existed else "added" if changed else "unchanged"


def register_images(ctx: Context, work: str, paths: Sequence[str | Path]) -> ImageReport:
    """Register the image files among `paths` (files, or folders searched recursively); a file that
    cannot be read is skipped with its reason, the others go on."""
    report = ImageReport()
    for key, path in image_files(paths):
        try:
            data = path.read_bytes()
            stored, status = register_image(ctx, work, key + path.suffix.lower(), data)
        except OSError as e:
            report.skipped.append((str(path), f"cannot read it: {e.strerror}"))
            continue
        except InputError as e:
            report.skipped.append((str(path), str(e)))
            continue
        getattr(report, status).append(stored.key)
    return report


# ---- images found on pages -------------------------------------------------------------

def page_image_key(url: str, data: bytes) -> str:
    """An image is keyed by its URL; an inline data: image, whose URL is its bytes, by their hash."""
    return f"data:{hashlib.sha256(data).hexdigest()}" if url.startswith("data:") else url


@dataclass
class ProcessedImage:
    image: str
    status: str  # done | failed | missing
    matches: list[ImageMatch] = field(default_factory=list)
    reason: str = ""
    picture: str = ""  # tracker.media.pictures' verdict: "to read" (a read_picture task follows), or why not
    # A picture skipped may have been the last of its page's pictures waiting: the page the others'
    # text makes, for the caller to match (tracker.pipeline.process_picture_page).
    picture_page: str | None = None


def judge_picture(ctx: Context, img) -> tuple[str, str | None]:
    """Whether the picture holds text to read (tracker.media.pictures.judge), and the page its page's
    pictures make when this one, skipped, was the last waiting. A verdict that cannot be stored
    raises as every store error does (the task retries)."""
    from .pictures import TO_READ, judge, page_of, picture_page

    verdict = judge(ctx, img)
    return verdict, (picture_page(ctx, page_of(img)) if verdict != TO_READ else None)


def process_image(ctx: Context, key: str) -> ProcessedImage:
    """Fingerprint one stored page image and record the registered images it copies."""
    try:
        img = ctx.store.get_page_image(key)
    except NotFound:
        return ProcessedImage(key, "missing", reason="no such image in the store")
    # A chapter posted as pictures: the cheap textness test on every image, the reading only on text.
    picture, page = judge_picture(ctx, img)
    try:
        fp = fingerprint_image(img.data, name="the image")
    except InputError as e:
        ctx.store.set_page_image_status(key, "failed", str(e))
        return ProcessedImage(key, "failed", reason=str(e), picture=picture, picture_page=page)
    stored = []
    for hit in ctx.image_index.query(fp):
        work = hit.key.split("/", 1)[0]
        proposed = ImageMatch(image=img.key, work_image=hit.key, work=work, site=img.site, found_on=img.found_on,
                              distance=hit.distance, colour_agreement=hit.colour_agreement)
        stored.append((proposed, ctx.store.upsert_image_match(proposed)))
    found = notify.image_matches_stored(ctx.store, stored)  # a new match becomes an event to tell
    ctx.store.set_page_image_status(key, "done", fingerprint=fp.to_dict())
    return ProcessedImage(key, "done", found, picture=picture, picture_page=page)
