"""Chapters posted as pictures: which crawled pictures hold text, reading them, and matching a
page's pictures as one text.

Three steps, each idempotent:

1. `judge` (cheap, run on every page image when it is processed): a picture over the pixel
   bound, or one that cannot be decoded, is skipped with that reason before anything else;
   then `ocr.textness` (10-50 ms) says whether it holds rows of text. Only a
   picture with text is left "to read": nothing else is ever OCR'd.
2. `read` (a worker task of its own per picture, tracker.tasks.read_picture): the picture
   read within `BOUNDS` (pixels, tiles, deadline) by one engine made once per process; the
   lines, each with its box in the picture's pixels, and the engine's name are stored on
   the picture (`PageImage.reading`).
3. `picture_page` (when no picture of the page is left to read): the text of the page's
   pictures, in page order (a chapter over three pictures of one post is one text), stored
   as a page of its own, keyed `<page url>#pictures`, which the callers (tracker.pipeline,
   the tasks, the crawler) match by the same `pipeline.process_page` as every text page, so
   it gets the same verdicts, evidence and notices. The page's meta keeps, per line, the
   picture, its box and where the line sits in that text, so a match span [start, end) maps
   back to the boxes it covers (`lines_in`).

A picture's reading has a status: "to read", "read", or a reason it was skipped
(`SKIPS`: no text, too large, undecodable, deadline). A reading stopped by its deadline
keeps the lines it read and is matched on them, counted as skipped for the deadline.
"""
from __future__ import annotations

import io
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fingerprint.errors import InputError
from fingerprint.image import pillow_bounds
from ocr.bounds import Bounds

from ..store import NotFound, Page, PageImage

if TYPE_CHECKING:
    from ..context import Context

log = logging.getLogger(__name__)

#: The engine that reads pictures (docs/ocr.md: RapidOCR misses 3 times fewer characters than Tesseract).
ENGINE = "rapidocr"
#: The defaults of ocr.bounds: 40 million pixels (refused before decoding), 1,280 wide,
#: tiles of 1,600 rows, 60 s a picture.
BOUNDS = Bounds()

TO_READ = "to read"
READ = "read"
NO_TEXT = "no text"
TOO_LARGE = "too large"
UNDECODABLE = "undecodable"
DEADLINE = "deadline"
FAILED = "failed"  # the reading itself failed (the engine missing, or the task gave up)
#: The reasons a picture is not read in full, as counted and shown.
SKIPS = (NO_TEXT, TOO_LARGE, UNDECODABLE, DEADLINE)
#: Readings whose lines go into the page's picture text.
HAS_LINES = (READ, DEADLINE)

#: A page's pictures are matched as a page of their own, under the page's key with this fragment.
SUFFIX = "#pictures"
LINES_META = "picture_lines"  # the per-line map, JSON, in the picture page's meta
OF_META = "pictures_of"  # the page that shows the pictures

_engine = None
_engine_lock = threading.Lock()


def engine():
    """This process's OCR engine, made on first use (loading the models takes about 0.5 s)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            from ocr.engines import make_engine

            _engine = make_engine(ENGINE, threads=1)
        return _engine


def page_of(image: PageImage) -> str:
    """The page whose pictures this one is among: the page that shows it, or itself (an ingested file)."""
    return image.found_on or image.key


class TooLarge(InputError):
    """A picture over the pixel bound (BOUNDS.max_pixels, or Pillow's own decompression-bomb limit)."""


def _open(data: bytes):
    """The picture as a PIL image, not decoded yet (the size comes from the header); TooLarge over
    the pixel bound, InputError when it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    pillow_bounds()
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as e:
        raise TooLarge(f"over the pixel bound: {str(e).split(', could')[0]}") from e
    except (UnidentifiedImageError, OSError, ValueError) as e:
        raise InputError(f"the picture cannot be decoded: {e}") from e
    width, height = image.size
    if width * height > BOUNDS.max_pixels:
        raise TooLarge(f"{width} x {height} = {width * height:,} pixels, over the bound of {BOUNDS.max_pixels:,}")
    return image


def holds_text(data: bytes) -> bool:
    """Whether a picture's bytes hold rows of text (textness, within the pixel bound); False for one
    that cannot be read. What the crawler asks before keeping a picture's exchange as evidence."""
    from ocr.textness import textness

    try:
        picture = _open(data)
        picture.load()
        return textness(picture).has_text
    except (InputError, OSError, ValueError):
        return False


def judge(ctx: Context, image: PageImage) -> str:
    """Decide whether `image` (with its bytes) is worth reading, record the verdict as its reading,
    and return its status: TO_READ, or the reason it is skipped."""
    started = time.perf_counter()
    reading: dict[str, Any]
    try:
        from ocr.textness import textness

        picture = _open(image.data)
        picture.load()  # decode errors (a truncated file) surface here, not inside textness
        verdict = textness(picture)
        reading = {"status": TO_READ if verdict.has_text else NO_TEXT, "rows": verdict.rows,
                   "width": picture.width, "height": picture.height}
    except TooLarge as e:
        reading = {"status": TOO_LARGE, "reason": str(e)}
    except (InputError, OSError, ValueError) as e:
        reading = {"status": UNDECODABLE, "reason": str(e)}
    reading["judged_ms"] = round((time.perf_counter() - started) * 1000, 1)
    ctx.store.set_page_image_reading(image.key, reading)
    return reading["status"]


@dataclass
class PictureRead:
    image: str
    status: str  # READ, one of SKIPS, FAILED, or "missing"
    characters: int = 0
    reason: str = ""
    page: str | None = None  # the page its page's pictures make, to match: this was the last to read
    matched: Any = None  # pipeline.Processed, when the caller matched `page`


def read(ctx: Context, key: str) -> PictureRead:
    """Read one stored picture judged to hold text and store the reading; when none of its page's
    pictures is left to read, store the page they make (`PictureRead.page`, for the caller to match:
    tracker.pipeline.read_picture). Store errors raise (the task retries); a picture that cannot be
    read is kept with its reason."""
    try:
        image = ctx.store.get_page_image(key)
    except NotFound:
        return PictureRead(key, "missing", reason="no such image in the store")
    status = image.reading.get("status")
    if status is None:  # never judged (stored before pictures were read): judge it first
        status = judge(ctx, image)
    if status != TO_READ:
        return PictureRead(key, status, reason=image.reading.get("reason", ""))
    from ocr.engines import EngineMissing
    from ocr.read import read_picture

    started = time.perf_counter()
    try:
        reader = engine()
        picture = _open(image.data)
        result = read_picture(picture, reader, BOUNDS)
    except EngineMissing as e:
        reading = {"status": FAILED, "reason": str(e)}
    except TooLarge as e:
        reading = {"status": TOO_LARGE, "reason": str(e)}
    except InputError as e:
        reading = {"status": TOO_LARGE if "pixels" in str(e) else UNDECODABLE, "reason": str(e)}
    except (OSError, ValueError) as e:  # PIL: a truncated or corrupt body found while decoding
        reading = {"status": UNDECODABLE, "reason": f"the picture cannot be decoded: {e}"}
    else:
        lines = [{"text": line.text, "box": [int(v) for v in line.box], "confidence": round(float(line.confidence), 3)}
                 for line in result.lines]
        reading = {"status": READ if result.complete else DEADLINE, "engine": getattr(reader, "name", ENGINE),
                   "lines": lines, "characters": sum(len(line["text"]) for line in lines),
                   "complete": result.complete, "tiles": result.tiles,
                   "width": picture.width, "height": picture.height}
        if not result.complete:
            reading["reason"] = result.stopped
    reading["seconds"] = round(time.perf_counter() - started, 2)
    ctx.store.set_page_image_reading(key, reading)
    done = PictureRead(key, reading["status"], reading.get("characters", 0), reading.get("reason", ""))
    if reading["status"] in HAS_LINES:
        done.page = picture_page(ctx, page_of(image))
    return done


# ---- a page's pictures as one text ---------------------------------------------------------

def pictures_of(ctx: Context, page: str) -> list[PageImage]:
    """The pictures shown on `page`, in page order (without their bytes)."""
    found = ctx.store.page_images(found_on=page)
    if not found:
        try:
            found = [ctx.store.get_page_image(page)]  # an ingested picture is its own page
            found[0].data = b""
        except NotFound:
            return []
    return sorted(found, key=lambda i: (i.position, i.key))


def picture_text(images: list[PageImage]) -> tuple[str, list[dict[str, Any]]]:
    """The text of `images` (in the order given), a line a line, and for each line its picture,
    box and [start, end) in that text.

    Two pictures reading "甲乙" and "丙" give ("甲乙\\n丙", [{"picture": a, "start": 0, "end": 2, ...},
    {"picture": b, "start": 3, "end": 4, ...}])."""
    parts: list[str] = []
    where: list[dict[str, Any]] = []
    at = 0
    for image in images:
        if image.reading.get("status") not in HAS_LINES:
            continue
        for line in image.reading.get("lines", []):
            if parts:
                at += 1  # the newline before it
            parts.append(line["text"])
            where.append({"picture": image.key, "box": line["box"], "start": at, "end": at + len(line["text"])})
            at += len(line["text"])
    return "\n".join(parts), where


def picture_page(ctx: Context, page: str) -> str | None:
    """Store the text of `page`'s pictures as a page (`<page>#pictures`) once none is left to read,
    and return its key, to be matched as any page; None while some are, or when none holds text."""
    images = pictures_of(ctx, page)
    if not images or any(i.reading.get("status") in (None, TO_READ) for i in images):
        return None
    text, where = picture_text(images)
    if not text.strip():
        return None
    site, url = images[0].site, page
    try:
        shown_on = ctx.store.get_page(page)
        site, url = shown_on.site or site, shown_on.url or page
    except NotFound:  # a page that is only pictures has no text page of its own
        pass
    stored, _ = ctx.store.upsert_page(Page(
        key=page + SUFFIX, text=text, url=url if url.startswith(("http://", "https://")) else "", site=site,
        meta={OF_META: page, LINES_META: json.dumps(where, separators=(",", ":")), "pictures": len(images),
              "title": "pictures"}))
    return stored.key


def is_picture_page(page: Page) -> bool:
    return LINES_META in (page.meta or {})


def line_map(page: Page) -> list[dict[str, Any]]:
    """The per-line map of a picture page ([] for a text page)."""
    try:
        return json.loads((page.meta or {}).get(LINES_META) or "[]")
    except ValueError:
        return []


def lines_in(where: list[dict[str, Any]], spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """The lines of `where` (picture_text's map, sorted by start) that spans [start, end) in the
    picture text touch; one merge pass over both, spans sorted first."""
    out = []
    spans = sorted(spans)
    j = 0
    for line in where:
        while j < len(spans) and spans[j][1] <= line["start"]:
            j += 1
        if j < len(spans) and spans[j][0] < line["end"]:
            out.append(line)
    return out


# ---- counted, in words -------------------------------------------------------------------------

def counts_sentence(counts: dict[str, int], skipped: dict[str, int], failed: dict[str, int] | None = None) -> str:
    """A crawl's pictures in one sentence, from its counts and the "picture: " reasons of its skipped
    (and failed); "" when it saw none.

    -> "3 pictures seen: 2 read by OCR (1,204 characters recognised); 1 skipped (1 no text);
        1 page matched on the text of its pictures"."""
    from clikit.plural import counted

    seen = int(counts.get("pictures seen", 0))
    if not seen:
        return ""
    read_n = int(counts.get("pictures read", 0))
    chars = int(counts.get("characters recognised", 0))
    parts = [f"{read_n} read by OCR ({counted(chars, 'character', sep=',')} recognised)"]
    why = {r.removeprefix("picture: "): n for r, n in skipped.items() if r.startswith("picture: ")}
    if why:
        parts.append(f"{sum(why.values())} skipped ("
                     + ", ".join(f"{n} {r}" for r, n in sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))) + ")")
    bad = {r.removeprefix("picture: "): n for r, n in (failed or {}).items() if r.startswith("picture: ")}
    if bad:
        parts.append(f"{sum(bad.values())} failed (" + ", ".join(f"{n} {r}" for r, n in sorted(bad.items())) + ")")
    matched = int(counts.get("picture pages matched", 0))
    if matched:
        parts.append(f"{counted(matched, 'page')} matched on the text of {'its' if matched == 1 else 'their'} "
                     "pictures")
    return f"{counted(seen, 'picture')} seen: " + "; ".join(parts)


def site_readings(store: Any, site: str) -> dict[str, int]:
    """How the pictures found on `site` stand now, by reading status (what the workers did after the
    crawl, with a broker), with "characters" recognised in all of them."""
    out: dict[str, int] = {}
    for image in store.page_images(site=site):
        status = image.reading.get("status")
        if status:
            out[status] = out.get(status, 0) + 1
            out["characters"] = out.get("characters", 0) + int(image.reading.get("characters", 0))
    return out


def readings_sentence(readings: dict[str, int]) -> str:
    """site_readings in one sentence; "" when no picture was judged.

    -> "2 pictures read (778 characters recognised), 1 with no text, 1 waiting to be read"."""
    from clikit.plural import counted

    n = sum(v for k, v in readings.items() if k != "characters")
    if not n:
        return ""
    parts = []
    if readings.get(READ):
        chars = counted(readings.get("characters", 0), "character", sep=",")
        parts.append(f"{counted(readings[READ], 'picture')} read ({chars} recognised)")
    for status, words in ((NO_TEXT, "with no text"), (TOO_LARGE, "too large to read"),
                          (UNDECODABLE, "that cannot be decoded"), (DEADLINE, "stopped by the deadline"),
                          (FAILED, "whose reading failed"), (TO_READ, "waiting to be read")):
        if readings.get(status):
            parts.append(f"{readings[status]} {words}")
    return ", ".join(parts)
