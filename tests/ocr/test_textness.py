"""ocr.textness: pictures of text found, photos and covers left alone."""
from __future__ import annotations

import random

import pytest
from PIL import Image

from bench.pictures.render import THEMES, Style, render_chapter, render_textless
from ocr.textness import textness

from .conftest import PARAGRAPH


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_a_chapter_page_in_every_theme_holds_text(fonts, theme):
    rng = random.Random(theme)
    for seed in range(4):
        style = Style.pick(rng, fonts, theme=theme, pages=1)
        (picture,) = render_chapter(PARAGRAPH, seed, style)
        verdict = textness(picture.image)
        assert verdict.has_text, (style, verdict)
        assert verdict.rows >= 3


def test_slanted_watermarked_low_quality_pages_hold_text(fonts):
    for i, name in enumerate(fonts):
        style = Style(font=name, size=32, theme="light", watermark="书友群 123456789", watermark_alpha=60,
                      rotation=2.0 if i % 2 else -2.0, jpeg_quality=40, reply_box=True)
        (picture,) = render_chapter(PARAGRAPH, i, style)
        assert textness(picture.image).has_text, style


@pytest.mark.parametrize("kind", ["noise", "gradient", "cover"])
def test_photos_gradients_and_covers_hold_no_text(fonts, kind):
    judged = [textness(render_textless(kind, seed).image) for seed in range(40)]
    assert not any(v.has_text for v in judged), [v for v in judged if v.has_text]


def test_a_blank_page_and_a_single_line_hold_no_text(fonts):
    assert not textness(Image.new("RGB", (1080, 1920), "white")).has_text
    one_line = render_chapter("只有一行字。", 1, Style(font=fonts[0], status_bar=False, jpeg_quality=None))[0]
    assert not textness(one_line.image).has_text
