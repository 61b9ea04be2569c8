"""Pictures as pages, without OCR: how posts are grouped and named, textless pictures
skipped and counted, and the one-line error when the OCR engine is missing."""
from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner
from PIL import Image

from ocr.pictures import NO_TEXT, PictureReader, picture_posts, post_part
from simtool import main


@pytest.mark.parametrize("stem, part", [
    ("ch12-1", ("ch12", 1)), ("ch12_2", ("ch12", 2)), ("ch12(3)", ("ch12", 3)), ("ch12 (10)", ("ch12", 10)),
    ("第五章（2）", ("第五章", 2)), ("ch12", None), ("12", None), ("-1", None), ("a-b", None), ("x(1a)", None),
    ("(2)", None), ("ch-１", None),
])
def test_post_part_reads_the_number_at_the_end(stem, part):
    assert post_part(stem) == part


def _blank(path, size=(200, 300)):
    Image.new("RGB", size, (240, 240, 240)).save(path)


def test_parts_of_one_post_are_grouped_in_number_order(tmp_path):
    for name in ["ch7-10.png", "ch7-2.png", "ch7-1.png", "cover.jpg", "scan-3.png", "notes.txt"]:
        (tmp_path / name).write_bytes(b"") if name.endswith(".txt") else _blank(tmp_path / name)
    posts = {p.key: [q.name for q in p.paths] for p in picture_posts([str(tmp_path)])}
    assert posts == {"ch7": ["ch7-1.png", "ch7-2.png", "ch7-10.png"], "cover": ["cover.jpg"],
                     "scan-3": ["scan-3.png"]}  # a lone part keeps its own name
    joined = picture_posts([str(tmp_path / "cover.jpg"), str(tmp_path / "scan-3.png")], join="all")
    assert [(p.key, [q.name for q in p.paths]) for p in joined] == [("cover", ["cover.jpg", "scan-3.png"])]
    assert len(picture_posts([str(tmp_path)], join="none")) == 5


def test_textless_picture_is_skipped_with_its_reason_and_needs_no_engine(tmp_path):
    _blank(tmp_path / "photo.png")
    reader = PictureReader(engine="no-such-engine")  # never made: textness says there is nothing to read
    (post,) = picture_posts([str(tmp_path)])
    assert reader.read(post) == NO_TEXT
    assert reader.textless == 1 and reader.pictures_read == 0


def test_track_counts_textless_pictures_among_pages(tmp_path):
    (tmp_path / "originals").mkdir()
    (tmp_path / "originals" / "a.txt").write_text("天快亮的时候，雨终于停了。他推开窗户，看见院子里的石榴树。", encoding="utf-8")
    pages = tmp_path / "pages"
    pages.mkdir()
    _blank(pages / "photo.png")
    (pages / "p.txt").write_text("完全不同的一段文字，讲的是另外一件事情。", encoding="utf-8")
    r = CliRunner().invoke(main, ["track", str(tmp_path / "originals"), str(pages), "-v"])
    assert r.exit_code == 0, r.output
    assert "skipped 1: 1 a picture with no text" in r.stderr
    assert f"photo.png: {NO_TEXT}" in r.stderr


def test_missing_engine_is_one_line_naming_the_package(tmp_path, monkeypatch):
    from bench.pictures.render import available_fonts, render_chapter

    if not available_fonts():
        pytest.skip("no Chinese font to draw a picture with; run scripts/system-deps test")
    render_chapter("天快亮的时候，雨终于停了。" * 30, 3, pages=1, rotation=0.0)[0].image.save(tmp_path / "page.png")
    (tmp_path / "a.txt").write_text("天快亮的时候，雨终于停了。" * 30, encoding="utf-8")
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # as if the package were not installed
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "a.txt"), str(tmp_path / "page.png")])
    assert r.exit_code == 1
    last = r.stderr.strip().splitlines()[-1]
    assert "pip install 'rapidocr-onnxruntime" in last and "Traceback" not in r.output
