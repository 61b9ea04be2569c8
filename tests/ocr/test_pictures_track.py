"""`simtool track` and `simtool compare` with pictures of text, read by RapidOCR.

A few small pictures only (OCR costs about a second per hundred characters): a chapter
split over two screenshots is read, joined and found; a photo beside it is skipped and
counted; a text compared with a screenshot of it gets the text verdict."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bench.pictures.render import Style, render_chapter, render_textless
from simtool import main

from .conftest import PARAGRAPH

OTHER = ("城东的老茶馆开了四十年，掌柜每天清早生火烧水，先给门口的石狮子擦一遍灰，再把竹椅一张张摆好。"
         "来喝茶的多是附近的老人，他们说话慢，笑起来也慢，一壶茶能从早上坐到中午。")
THIRD = ("火车晚点了两个小时，站台上的人越来越多。有人蹲在行李上吃泡面，有人靠着柱子打瞌睡，"
         "广播里一遍又一遍地道歉，声音像是从很远的地方传过来的。")


@pytest.fixture(scope="module")
def shelf(tmp_path_factory, fonts, rapidocr):
    """Three registered chapters, and pages: PARAGRAPH as two screenshots, a photo."""
    root = tmp_path_factory.mktemp("pictures")
    originals = root / "originals"
    originals.mkdir()
    (originals / "rain.txt").write_text(PARAGRAPH, encoding="utf-8")
    (originals / "teahouse.txt").write_text(OTHER, encoding="utf-8")
    (originals / "station.txt").write_text(THIRD, encoding="utf-8")
    pages = root / "pages"
    pages.mkdir()
    style = Style(font=fonts[0], theme="sepia", jpeg_quality=70, pages=2, status_bar=True)
    parts = render_chapter(PARAGRAPH, 7, style)
    assert len(parts) == 2
    for i, p in enumerate(parts, 1):
        p.image.save(pages / f"post-{i}.png")
    render_textless("noise", 3, size=(600, 800)).image.save(pages / "photo.jpg")
    return root


def test_track_finds_the_chapter_in_a_split_post_and_skips_the_photo(shelf):
    r = CliRunner().invoke(main, ["track", str(shelf / "originals"), str(shelf / "pages"), "-v"])
    assert r.exit_code == 0, r.output
    records = [json.loads(line) for line in r.stdout.splitlines()]
    found = [(rec["page"], rec["original"]) for rec in records if rec["verdict"] != "image"]
    assert found == [("post", "rain")]  # both pictures, joined into one page, and nothing else
    assert next(rec for rec in records if rec["page"] == "post")["containment"] > 0.8
    assert "1 page read by OCR (2 pictures" in r.stderr
    assert "skipped 1: 1 a picture with no text" in r.stderr


def test_separate_pictures_are_pages_of_their_own(shelf):
    r = CliRunner().invoke(main, ["track", str(shelf / "originals"), str(shelf / "pages" / "post-1.png"),
                                  "--separate-pictures", "--min-containment", "0.2"])
    assert r.exit_code == 0, r.output
    (rec,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert (rec["page"], rec["original"]) == ("post-1", "rain")
    assert rec["containment"] < 0.8  # half the chapter is in this picture


def test_compare_text_with_its_picture(shelf):
    r = CliRunner().invoke(main, ["compare", str(shelf / "originals" / "rain.txt"), str(shelf / "pages"),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["verdict"] in ("duplicate", "contains") and rec["page"] == "pages"
    other = CliRunner().invoke(main, ["compare", str(shelf / "originals" / "teahouse.txt"),
                                      str(shelf / "pages" / "post-1.png")])
    assert "verdict:      different" in other.stdout
