"""bench/pictures/render.py: the pictures the OCR benchmark and tests read."""
from __future__ import annotations

import random

import pytest

from bench.pictures.render import Style, font, render_chapter, render_textless, wrap

from .conftest import PARAGRAPH


def _pixels(pictures):
    return [p.image.tobytes() for p in pictures]


def test_the_same_text_and_seed_give_the_same_pixels(fonts):
    for seed in (1, 2, 3):
        assert _pixels(render_chapter(PARAGRAPH, seed)) == _pixels(render_chapter(PARAGRAPH, seed))


def test_other_seeds_give_other_pictures(fonts):
    drawn = {tuple(_pixels(render_chapter(PARAGRAPH, seed))) for seed in range(6)}
    assert len(drawn) == 6


def test_styles_stay_within_the_brief(fonts):
    rng = random.Random(5)
    styles = [Style.pick(rng, fonts) for _ in range(300)]
    assert all(abs(s.rotation) <= 2 for s in styles)
    assert all(40 <= s.jpeg_quality <= 90 for s in styles)
    assert {s.theme for s in styles} == {"light", "dark", "sepia", "green"}
    assert {s.pages for s in styles} == {1, 2, 3}
    assert {s.font for s in styles} == set(fonts)
    assert any(s.watermark for s in styles) and any(s.status_bar for s in styles) and any(s.reply_box for s in styles)


def test_a_chapter_split_over_pictures_keeps_every_line_once_in_order(fonts):
    style = Style(font=fonts[0], size=40, pages=3, rotation=0, jpeg_quality=None)
    pictures = render_chapter(PARAGRAPH, 1, style)
    assert len(pictures) == 3
    lines = wrap(PARAGRAPH, font(style.font, style.size), style.width - 2 * style.margin)
    assert [text for p in pictures for text, _ in p.lines] == [line.strip("\u3000") for line in lines]
    assert "".join(p.text for p in pictures).replace("\n", "") == PARAGRAPH.replace("\n", "")


def test_a_long_picture_is_one_tall_image_and_max_height_splits_it(fonts):
    long_text = "\n".join([PARAGRAPH] * 20)
    style = Style(font=fonts[0], size=40, pages=1, jpeg_quality=None)
    (one,) = render_chapter(long_text, 2, style)
    assert one.image.width == 1080 and one.image.height > 10_000
    parts = render_chapter(long_text, 2, Style(font=fonts[0], size=40, max_height=4000, jpeg_quality=None))
    assert len(parts) > 2 and all(p.image.height <= 4000 for p in parts)


def test_rotation_and_jpeg_change_the_pixels_but_not_the_reference_text(fonts):
    plain = render_chapter(PARAGRAPH, 3, Style(font=fonts[0], rotation=0, jpeg_quality=None))[0]
    tilted = render_chapter(PARAGRAPH, 3, Style(font=fonts[0], rotation=1.5, jpeg_quality=45))[0]
    assert tilted.text == plain.text
    assert tilted.image.size != plain.image.size  # expanded to hold the rotated page


@pytest.mark.parametrize("kind", ["noise", "gradient", "cover"])
def test_textless_pictures_are_deterministic(fonts, kind):
    a, b = render_textless(kind, 4), render_textless(kind, 4)
    assert a.image.tobytes() == b.image.tobytes() and a.kind == kind


def test_an_unknown_textless_kind_and_an_empty_chapter_are_refused(fonts):
    with pytest.raises(ValueError, match="choose noise, gradient or cover"):
        render_textless("poster", 1)
    with pytest.raises(ValueError, match="empty"):
        render_chapter(" \n\n ", 1)
