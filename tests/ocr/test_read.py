"""ocr.bounds and .read: long pictures in overlapping tiles, within bounds."""
from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from bench.pictures.render import Style, render_chapter
from fingerprint.errors import InputError, ParameterError
from ocr.bounds import Bounds, tiles
from ocr.engines import Line
from ocr.read import read_picture, reading_order
from ocr.score import align, comparable

from .conftest import PARAGRAPH


@given(st.integers(1, 60_000), st.integers(200, 3000), st.integers(2, 199), st.data())
def test_tiles_cover_the_picture_and_hold_every_line_up_to_the_overlap_whole(height, tile_height, overlap, data):
    overlap = min(overlap, tile_height // 2 - 1)
    if overlap < 2:
        return
    b = Bounds(tile_height=tile_height, overlap=overlap)
    cut = tiles(height, b)
    assert cut[0][0] == 0 and cut[-1][1] == height
    assert all(prev[1] - nxt[0] == overlap for prev, nxt in zip(cut, cut[1:]))
    assert all(bottom - top <= tile_height for top, bottom in cut)
    h = data.draw(st.integers(1, overlap))
    y = data.draw(st.integers(0, max(0, height - h)))
    assert any(top <= y and min(y + h, height) <= bottom for top, bottom in cut)


def test_bad_bounds_say_what_to_change():
    with pytest.raises(ParameterError, match="under half the tile height"):
        Bounds(tile_height=300, overlap=200)
    with pytest.raises(ParameterError, match="deadline"):
        Bounds(deadline=0)


def test_a_picture_over_the_pixel_bound_is_refused_before_it_is_decoded(rapidocr):
    buf = io.BytesIO()
    Image.new("RGB", (1080, 4000), "white").save(buf, "PNG")
    image = Image.open(io.BytesIO(buf.getvalue()))
    with pytest.raises(InputError, match="raise Bounds.max_pixels"):
        read_picture(image, rapidocr, Bounds(max_pixels=2_000_000))
    assert image.tile  # its pixels are still to be decoded: load() empties this list


def test_reading_order_is_rows_top_to_bottom_then_left_to_right():
    lines = [Line("c", (0, 100, 50, 130), 1), Line("b", (300, 12, 400, 38), 1), Line("a", (0, 10, 200, 40), 1)]
    assert [ln.text for ln in reading_order(lines)] == ["a", "b", "c"]


@pytest.mark.slow
def test_a_1080_by_20000_screenshot_is_read_in_tiles_each_line_once(fonts, rapidocr):
    text = "\n".join([PARAGRAPH] * 32)
    style = Style(font=fonts[0], size=40, line_gap=0.75, status_bar=True, jpeg_quality=80)
    (picture,) = render_chapter(text, 9, style)
    assert picture.image.width == 1080 and 19_000 < picture.image.height < 23_000
    bounds = Bounds(deadline=None)
    reading = read_picture(picture.image, rapidocr, bounds)
    assert reading.complete and reading.tiles == len(tiles(picture.image.height, bounds)) >= 12
    a = align(picture.text, reading.text)
    assert a.missed / a.reference_chars < 0.03, a
    # de-duplicated: the reading is not longer than the text drawn (plus the status bar)
    assert len(comparable(reading.text)) < a.reference_chars * 1.01 + 20
    tops = [line.box[1] for line in reading.lines]
    assert tops == sorted(tops) and all(0 <= ln.box[1] < ln.box[3] <= picture.image.height for ln in reading.lines)


def test_a_deadline_stops_after_the_tile_in_hand_and_says_so(fonts, rapidocr):
    (picture,) = render_chapter("\n".join([PARAGRAPH] * 6), 4, Style(font=fonts[0], jpeg_quality=None))
    ticks = iter([0.0, 0.0, 50.0, 50.0, 50.0])
    reading = read_picture(picture.image, rapidocr, Bounds(tile_height=1200, overlap=120, deadline=30),
                           clock=lambda: next(ticks))
    assert not reading.complete and reading.tiles == 1
    assert "deadline of 30 s passed after 1 tile(s)" in reading.stopped
    assert reading.lines and all(line.box[3] <= 1200 for line in reading.lines)


def test_a_wide_picture_is_scaled_down_and_its_boxes_map_back(fonts, rapidocr):
    style = Style(font=fonts[0], size=80, width=2160, margin=120, status_bar=False, rotation=0, jpeg_quality=None)
    (picture,) = render_chapter(PARAGRAPH, 6, style)
    reading = read_picture(picture.image, rapidocr, Bounds(max_width=1080))
    assert reading.scale == pytest.approx(0.5)
    first_drawn = picture.lines[0][1]
    first_read = reading.lines[0].box
    assert abs(first_read[1] - first_drawn[1]) < 30 and abs(first_read[3] - first_drawn[3]) < 30
    assert max(ln.box[2] for ln in reading.lines) <= 2160
    assert align(picture.text, reading.text).missed / len(comparable(picture.text)) < 0.05
