"""Read a picture within bounds: scale, tile, de-duplicate, order.

    reading = read_picture(image, engine, Bounds(deadline=20))
    reading.text          # the lines in reading order, joined by newlines
    reading.lines         # each Line with its box in the original picture's pixels
    reading.complete      # False when the deadline stopped it; reading.stopped says why

The stages, in order: refuse a picture over `max_pixels` before decoding it; scale it
down to `max_width`; cut it into overlapping tiles (`bounds.tiles`); read each tile,
keeping only the lines read whole (a box touching a cut is partial, and the
neighbouring tile holds that line whole); when two neighbouring tiles both read a line
in their overlap whole, keep the surer reading; map the boxes back to the original
picture; sort into reading order (top to bottom, rows left to right); drop a line
repeating the previous one's text at the same place.

Keeping whole lines, rather than cutting the overlap at a fixed row, matters: the same
line's box differs by a few pixels between two tiles, and a fixed cut through its
middle can drop it from both (seen on 1 of the benchmark's 30 excerpts before this).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from fingerprint.errors import InputError
from ocr.bounds import Bounds, tiles
from ocr.engines import Engine, Line

EDGE = 2  # pixels: a box this close to a tile's cut is taken to be cut by it


@dataclass
class Reading:
    """What was read from one picture."""

    lines: list[Line] = field(default_factory=list)
    complete: bool = True
    stopped: str = ""  # why an incomplete reading stopped
    tiles: int = 0
    scale: float = 1.0  # working pixels per original pixel

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def read_picture(image, engine: Engine, bounds: Bounds | None = None, *, clock=time.monotonic) -> Reading:
    """The lines `engine` reads in `image` (a PIL image), within `bounds`."""
    bounds = bounds or Bounds()
    width, height = image.size
    if width <= 0 or height <= 0:
        raise InputError("the picture is empty (zero width or height)")
    if width * height > bounds.max_pixels:
        raise InputError(f"the picture is {width} x {height} = {width * height:,} pixels, over the bound of "
                         f"{bounds.max_pixels:,}; raise Bounds.max_pixels to read it (it costs about 3 bytes a pixel)")
    started = clock()
    scale = 1.0
    if width > bounds.max_width:
        scale = bounds.max_width / width
        image = image.resize((bounds.max_width, max(1, round(height * scale))))
    if image.mode != "RGB":
        image = image.convert("RGB")
    reading = Reading(scale=scale)
    kept: list[tuple[Line, int]] = []  # each line with the index of the tile it was read in
    cuts = tiles(image.height, bounds)
    for index, (top, bottom) in enumerate(cuts):
        if bounds.deadline is not None and clock() - started > bounds.deadline:
            reading.complete = False
            reading.stopped = (f"deadline of {bounds.deadline:g} s passed after {reading.tiles} tile(s), "
                               f"at row {round(top / scale)} of {height}")
            break
        tile = image.crop((0, top, image.width, bottom)) if len(cuts) > 1 else image
        reading.tiles += 1
        for line in engine.read(tile):
            if not line.text.strip():
                continue
            line = line.moved(0, top)
            # A line touching a cut is partial here; the neighbouring tile holds it whole.
            if (top > 0 and line.box[1] <= top + EDGE) or (bottom < image.height and line.box[3] >= bottom - EDGE):
                continue
            _keep_once(kept, line, index)
    back = 1.0 / scale
    lines = [line for line, _ in kept]
    reading.lines = _dedupe(reading_order([line.moved(0, 0, back) if scale != 1.0 else line for line in lines]))
    return reading


def reading_order(lines: list[Line]) -> list[Line]:
    """`lines` top to bottom; lines sharing a row (vertical overlap over half the lower
    height) left to right."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: (ln.box[1], ln.box[0])):
        if rows:
            last = rows[-1]
            top = max(ln.box[1] for ln in last)
            bottom = min(ln.box[3] for ln in last)
            overlap = min(bottom, line.box[3]) - max(top, line.box[1])
            if overlap > 0.5 * min(line.box[3] - line.box[1], bottom - top):
                last.append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda ln: ln.box[0])]


def _keep_once(kept: list[tuple[Line, int]], line: Line, index: int) -> None:
    """Add `line` (read whole in tile `index`) unless the tile before read the same line
    whole too (the boxes overlap over half of each); then keep the surer reading."""
    for i in range(len(kept) - 1, -1, -1):
        other, where = kept[i]
        if where < index - 1:
            break
        if where == index - 1 and _same_place(other.box, line.box):
            if line.confidence > other.confidence:
                kept[i] = (line, index)
            return
    kept.append((line, index))


def _same_place(a, b) -> bool:
    """Whether boxes a and b overlap over half the smaller one's height and width."""
    dy = min(a[3], b[3]) - max(a[1], b[1])
    dx = min(a[2], b[2]) - max(a[0], b[0])
    return dy > 0.5 * min(a[3] - a[1], b[3] - b[1]) and dx > 0.5 * min(a[2] - a[0], b[2] - b[0])


def _dedupe(lines: list[Line]) -> list[Line]:
    """Drop a line whose text and place repeat the line before it."""
    out: list[Line] = []
    for line in lines:
        if out and out[-1].text == line.text and _overlaps(out[-1].box, line.box):
            continue
        out.append(line)
    return out


def _overlaps(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])
