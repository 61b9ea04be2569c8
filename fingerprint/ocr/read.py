"""Read a picture within bounds: scale, tile, de-duplicate, order.

    reading = read_picture(image, engine, Bounds(deadline=20))
    reading.text          # the lines in reading order, joined by newlines
    reading.lines         # each Line with its box in the original picture's pixels
    reading.complete      # False when the deadline stopped it; reading.stopped says why

The stages, in order: refuse a picture over `max_pixels` before decoding it; scale it
down to `max_width`; cut it into overlapping tiles (`bounds.tiles`); read each tile,
keeping a line only from the tile whose keep band holds its centre (so a line in an
overlap is read twice but kept once); drop a line that repeats the previous one's text
at the same place (a line the engine split differently in two tiles); map the boxes
back to the original picture; sort into reading order (top to bottom, rows left to
right).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import InputError
from .bounds import Bounds, tiles
from .engines import Engine, Line


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
    kept: list[Line] = []
    for top, bottom, keep_from, keep_to in tiles(image.height, bounds):
        if bounds.deadline is not None and clock() - started > bounds.deadline:
            reading.complete = False
            reading.stopped = (f"deadline of {bounds.deadline:g} s passed after {reading.tiles} tile(s), "
                               f"at row {round(top / scale)} of {height}")
            break
        tile = image.crop((0, top, image.width, bottom)) if (top, bottom) != (0, image.height) else image
        reading.tiles += 1
        for line in engine.read(tile):
            line = line.moved(0, top)
            centre = (line.box[1] + line.box[3]) / 2
            if keep_from <= centre < keep_to and line.text.strip():
                kept.append(line)
    back = 1.0 / scale
    reading.lines = _dedupe(reading_order([line.moved(0, 0, back) if scale != 1.0 else line for line in kept]))
    return reading


def reading_order(lines: list[Line]) -> list[Line]:
    """`lines` top to bottom; lines sharing a row (vertical overlap over half the lower
    height) left to right."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda l: (l.box[1], l.box[0])):
        if rows:
            last = rows[-1]
            top = max(l.box[1] for l in last)
            bottom = min(l.box[3] for l in last)
            overlap = min(bottom, line.box[3]) - max(top, line.box[1])
            if overlap > 0.5 * min(line.box[3] - line.box[1], bottom - top):
                last.append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda l: l.box[0])]


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
