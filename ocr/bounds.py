"""The limits a picture is read within: pixels, tile size, overlap, time.

A crawled picture is untrusted: it may be 1080 x 20000 (a whole chapter as one long
screenshot), 20000 x 20000 (a decompression bomb), or arrive when the worker has little
time left. `Bounds` says how far a reading may go; `ocr.read` keeps to it.

- `max_pixels`: a picture with more pixels than this is refused before its pixels are
  decoded (PIL reads the size from the header), so memory stays bounded by it: about
  3 bytes per pixel for the decoded picture, plus one tile for the engine.
- `max_width`: wider pictures are scaled down to it first; text in a screenshot is
  still 20-40 pixels high at 1280.
- `tile_height` / `overlap`: pictures taller than `tile_height` (after scaling) are
  read in tiles of that height, each overlapping the next by `overlap` pixels; a text
  line up to `overlap` high is whole in some tile (ocr.read keeps whole
  lines only, and one reading of a line read whole in two tiles).
- `deadline`: seconds for the whole picture; checked before each tile, so a reading
  stops at most one tile's time past it and says it stopped.
"""
from __future__ import annotations

from dataclasses import dataclass

from fingerprint.errors import ParameterError


@dataclass(frozen=True)
class Bounds:
    max_pixels: int = 40_000_000  # e.g. 1080 x 37000; about 120 MB decoded as RGB
    max_width: int = 1280
    tile_height: int = 1600
    overlap: int = 160
    deadline: float | None = 60.0

    def __post_init__(self) -> None:
        if self.max_pixels <= 0 or self.max_width <= 0:
            raise ParameterError("max_pixels and max_width must be positive")
        if not 0 < 2 * self.overlap < self.tile_height:
            raise ParameterError(f"overlap ({self.overlap}) must be positive and under half the tile height "
                                 f"({self.tile_height}); raise tile_height or lower overlap")
        if self.deadline is not None and self.deadline <= 0:
            raise ParameterError("deadline must be a positive number of seconds, or None for no deadline")


def tiles(height: int, bounds: Bounds) -> list[tuple[int, int]]:
    """(top, bottom) of each tile over a picture `height` pixels high; each tile overlaps
    the next by `bounds.overlap` rows, so a line up to that high is whole in some tile.

    tiles(3000, Bounds(tile_height=1600, overlap=160)) -> [(0, 1600), (1440, 3000)]
    """
    if height <= bounds.tile_height:
        return [(0, height)]
    step = bounds.tile_height - bounds.overlap
    out = []
    top = 0
    while True:
        bottom = min(top + bounds.tile_height, height)
        out.append((top, bottom))
        if bottom >= height:
            return out
        top += step
