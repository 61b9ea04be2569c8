"""Does a picture hold lines of text? A cheap test, run before any OCR.

    verdict = textness(image)
    verdict.has_text, verdict.rows, verdict.coverage

Most pictures on a novel site are covers, avatars, banners and photos; OCR costs a
second or more each. This test costs 10-50 ms (numpy on a grayscale copy 360
pixels wide) and says whether the picture looks like a page of text: several rows of
strokes of similar height, separated by empty rows.

How: each pixel's contrast is its distance from a local mean (a box blur), so dark
text on light and light text on dark count alike, and smooth gradients count as
nothing. A pixel is ink above INK_CONTRAST. The picture is cut into four vertical
strips (a 2-degree slant moves a line by only a few rows within a strip), and in each
strip the rows with ink form bands. A band counts as a text row when it is as high as
a character can be at this scale and is neither empty nor solid. The picture holds
text when the median strip has at least MIN_ROWS such rows, they cover at least
MIN_COVERAGE of the picture's height, and they come at a regular pitch (most
row-to-row distances are a multiple of the line pitch). Photos fail on solid bands
(grain inks every row, so nothing is separated by empty rows), on too little coverage
or on an irregular pitch (the edges of shapes make a few bands anywhere); a cover's
title and author are too few rows.

Measured while choosing these numbers (4 x 30 rendered chapters = 212 pictures of
every style, and 600 textless pictures, bench/pictures/render.py): every text picture
found, no textless one; INK_CONTRAST at 28 instead of 40 lost one picture, whose faint
watermark bridged the gaps between its rows. The heights' spread is reported but not
used: a watermark merging two rows makes it swing on real text. bench/ocr_engines.py
measures it again on each run (docs/ocr.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH = 360
INK_CONTRAST = 40  # grey levels from the local mean
ROW_INK = 0.02  # a row with this share of ink pixels (in its strip) is part of a band
MIN_BAND, MAX_BAND = 4, 40  # a text row's height in pixels at WIDTH
MIN_ROWS = 3
MIN_COVERAGE = 0.2
PITCH_TOLERANCE = 0.25
MIN_REGULAR = 0.5
STRIPS = 4


@dataclass(frozen=True)
class Textness:
    """The verdict and what it rests on."""

    has_text: bool
    rows: int  # text rows found in the median strip
    coverage: float  # share of the picture's height in text rows (median strip)
    height_spread: float  # coefficient of variation of those rows' heights
    regularity: float  # share of row-to-row pitches within PITCH_TOLERANCE of a multiple of the line pitch


def _box_blur(a: np.ndarray, r: int) -> np.ndarray:
    """Mean over a (2r+1) x (2r+1) window, edges clamped; two passes of cumulative sums."""
    pad = np.pad(a, r, mode="edge").astype(np.float32)
    c = np.cumsum(pad, axis=0)
    c = np.vstack([np.zeros((1, c.shape[1]), np.float32), c])
    v = (c[2 * r + 1:] - c[:-2 * r - 1]) / (2 * r + 1)
    c = np.cumsum(v, axis=1)
    c = np.hstack([np.zeros((c.shape[0], 1), np.float32), c])
    return (c[:, 2 * r + 1:] - c[:, :-2 * r - 1]) / (2 * r + 1)


def ink_mask(image) -> np.ndarray:
    """Boolean ink mask of `image` scaled to WIDTH pixels wide (grayscale, local contrast)."""
    gray = image.convert("L")
    w, h = gray.size
    scale = WIDTH / w
    gray = gray.resize((WIDTH, max(8, round(h * scale))))
    a = np.asarray(gray, dtype=np.float32)
    return np.abs(a - _box_blur(a, 4)) > INK_CONTRAST


def _bands(rows_inked: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of True in `rows_inked`."""
    edges = np.diff(np.concatenate([[0], rows_inked.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def _strip(mask: np.ndarray) -> tuple[int, float, float, float]:
    """(text rows, their share of the height, their heights' spread, pitch regularity) of one strip."""
    share = mask.mean(axis=1)
    rows, starts = [], []
    for start, end in _bands(share >= ROW_INK):
        height = end - start
        ink = share[start:end].mean()
        if MIN_BAND <= height <= MAX_BAND and 0.05 <= ink <= 0.6:
            rows.append(height)
            starts.append(start)
    if len(rows) < 2:
        return len(rows), float(sum(rows) / mask.shape[0]), 1.0, 0.0
    heights = np.asarray(rows, dtype=np.float64)
    spread = float(heights.std() / heights.mean())
    pitch = np.diff(starts)
    # The line pitch is the short one: a row missing from this strip (a paragraph's short last
    # line, a row a watermark bridged) makes a pitch of two or three lines, still regular.
    base = np.percentile(pitch, 25)
    multiple = np.maximum(np.round(pitch / base), 1)
    regular = float(np.mean(np.abs(pitch - multiple * base) <= PITCH_TOLERANCE * base))
    return len(rows), float(heights.sum() / mask.shape[0]), spread, regular


def textness(image) -> Textness:
    """Whether `image` (a PIL image) holds rows of text, and the measures behind it."""
    mask = ink_mask(image)
    bounds = np.linspace(0, mask.shape[1], STRIPS + 1).astype(int)
    found = sorted((_strip(mask[:, a:b]) for a, b in zip(bounds[:-1], bounds[1:])), key=lambda s: s[0])
    rows, coverage, spread, regular = found[len(found) // 2]
    has_text = rows >= MIN_ROWS and coverage >= MIN_COVERAGE and regular >= MIN_REGULAR
    return Textness(bool(has_text), int(rows), round(coverage, 3), round(spread, 3), round(regular, 3))
