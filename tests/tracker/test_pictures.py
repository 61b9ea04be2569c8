"""Chapters posted as pictures, in the tracker: the cheap textness test on every page image, a
read_picture task per picture with text (Celery, run eagerly), the pictures of a page joined in
page order and matched like a text page, and each match span mapped back to the lines and
boxes it covers. A photo is never read; an undecodable or oversized picture is skipped with its
reason before any OCR. Real OCR (RapidOCR) on pictures drawn by bench/pictures/render.py."""
from __future__ import annotations

import io

import pytest

from tracker.media.pictures import (
    NO_TEXT,
    READ,
    SUFFIX,
    TOO_LARGE,
    UNDECODABLE,
    counts_sentence,
    line_map,
    lines_in,
    picture_text,
)
from tracker.registry import register_work
from tracker.store import PageImage
from tracker.workers import tasks
from tracker.workers.app import create_celery
from tracker.workers.queue import dispatch_images

from ..conftest import ROOT, need

ORIGINALS = ROOT / "samples" / "originals"
SHOWN_ON = "http://127.0.0.1:9/book/2.html"


def _jpeg(image, quality: int = 85) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()


@pytest.fixture(scope="module")
def rendered():
    """Chapter 2 of the sample work drawn as two pictures (dark theme, a site's watermark), and a photo."""
    try:
        from ocr.engines import EngineMissing, make_engine

        make_engine("rapidocr", threads=1)
    except EngineMissing as e:
        need(False, f"the rapidocr OCR engine is not installed: {e}")
    from bench.pictures.render import Style, available_fonts, render_chapter, render_textless

    need(bool(available_fonts()), "no Chinese font installed for the renderer; run scripts/system-deps test")
    text = (ORIGINALS / "山城旧事-第二章.txt").read_text(encoding="utf-8")
    pictures = render_chapter(text, seed=5, style=Style(font=available_fonts()[0], pages=2, theme="dark",
                                                        watermark="笔趣阁 www.fake.test", status_bar=True))
    assert len(pictures) == 2
    return [_jpeg(p.image) for p in pictures], _jpeg(render_textless("noise", 3).image)


def _png(size: tuple[int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", size, 255).save(out, "PNG")  # one colour: a few KB for any size
    return out.getvalue()


def test_pictures_with_text_are_read_in_tasks_of_their_own_joined_and_matched(settings, ctx, rendered):
    register_work(ctx, "山城旧事", str(ORIGINALS))
    chapter, photo = rendered
    # In the page's order: the chapter's second picture is fetched first, the photo sits between.
    stored = [("http://127.0.0.1:9/img/b.jpg", chapter[1], 2), ("http://127.0.0.1:9/img/photo.jpg", photo, 1),
              ("http://127.0.0.1:9/img/a.jpg", chapter[0], 0),
              ("http://127.0.0.1:9/img/broken.jpg", chapter[0][:3000], 3),
              ("http://127.0.0.1:9/img/huge.png", _png((8000, 6000)), 4)]
    for key, data, position in stored:
        ctx.store.upsert_page_image(PageImage(key=key, url=key, site="127.0.0.1", found_on=SHOWN_ON, data=data,
                                              media_type="image/png" if key.endswith("png") else "image/jpeg",
                                              position=position))
    app = create_celery(settings, task_always_eager=True)
    tasks.use_context(app, ctx)
    sent = []
    read_task = app.tasks["tracker.tasks.read_picture"]
    original = read_task.apply_async
    read_task.apply_async = lambda args, **kw: (sent.append(args[0]), original(args, **kw))[1]
    try:
        dispatch_images(ctx, [k for k, _, _ in stored], app=app)
    finally:
        del read_task.apply_async
        tasks.use_context(app, None)
    # Only the two pictures of text got a reading task; the others were judged without OCR.
    assert sorted(sent) == ["http://127.0.0.1:9/img/a.jpg", "http://127.0.0.1:9/img/b.jpg"]
    status = {k: ctx.store.get_page_image(k).reading for k, _, _ in stored}
    assert status["http://127.0.0.1:9/img/photo.jpg"]["status"] == NO_TEXT
    assert "lines" not in status["http://127.0.0.1:9/img/photo.jpg"]
    assert status["http://127.0.0.1:9/img/broken.jpg"]["status"] == UNDECODABLE
    assert status["http://127.0.0.1:9/img/huge.png"]["status"] == TOO_LARGE
    assert "48,000,000 pixels" in status["http://127.0.0.1:9/img/huge.png"]["reason"]
    first = status["http://127.0.0.1:9/img/a.jpg"]
    assert first["status"] == READ and first["engine"] == "rapidocr" and first["characters"] > 250
    x0, y0, x1, y1 = first["lines"][3]["box"]
    assert 0 <= x0 < x1 <= first["width"] and 0 <= y0 < y1 <= first["height"]
    # The page's pictures were matched as one text, in page order, against the right chapter.
    (match,) = ctx.store.matches()
    assert match.page == SHOWN_ON + SUFFIX and match.chapter.endswith("第二章")
    assert match.verdict in ("duplicate", "partial", "excerpt") and match.containment > 0.8, match
    page = ctx.store.get_page(match.page)
    where = line_map(page)
    assert [w["picture"] for w in where[:1]] == ["http://127.0.0.1:9/img/a.jpg"]
    assert where[-1]["picture"] == "http://127.0.0.1:9/img/b.jpg"
    covered = lines_in(where, [(s["page_start"], s["page_end"]) for s in match.spans])
    assert {w["picture"] for w in covered} == {"http://127.0.0.1:9/img/a.jpg", "http://127.0.0.1:9/img/b.jpg"}
    assert len(covered) > 0.8 * len(where)
    assert page.text[covered[0]["start"]:covered[0]["end"]] in [line["text"] for line in first["lines"]]


def test_picture_text_joins_lines_in_order_and_spans_map_back_to_lines():
    class Img:
        def __init__(self, key, lines, status=READ):
            self.key, self.reading = key, {"status": status, "lines": lines}

    a = Img("a", [{"text": "甲乙", "box": [0, 0, 20, 10]}, {"text": "丙", "box": [0, 20, 10, 30]}])
    skipped = Img("p", [], NO_TEXT)
    b = Img("b", [{"text": "丁戊己", "box": [5, 5, 35, 15]}])
    text, where = picture_text([a, skipped, b])
    assert text == "甲乙\n丙\n丁戊己"
    assert [(w["picture"], w["start"], w["end"]) for w in where] == [("a", 0, 2), ("a", 3, 4), ("b", 5, 8)]
    assert all(text[w["start"]:w["end"]] for w in where)
    assert [w["start"] for w in lines_in(where, [(1, 2)])] == [0]
    assert [w["start"] for w in lines_in(where, [(6, 7), (0, 1)])] == [0, 5]
    assert [w["start"] for w in lines_in(where, [(0, 8)])] == [0, 3, 5]
    assert lines_in(where, [(2, 3)]) == []  # only the newline between two lines


def test_counts_in_a_sentence():
    counts = {"pictures seen": 4, "pictures read": 2, "characters recognised": 1204}
    skipped = {"picture: no text": 1, "picture: too large": 1, "image: not an image (text/html)": 3}
    assert counts_sentence(counts, skipped) == (
        "4 pictures seen: 2 read by OCR (1,204 characters recognised); 2 skipped (1 no text, 1 too large)")
    assert counts_sentence({**counts, "picture pages matched": 1}, {}).endswith(
        "; 1 page matched on the text of its pictures")
    assert counts_sentence({}, {}) == ""


def test_a_picture_whose_reading_task_was_lost_is_sent_again_by_the_daily_run(ctx, monkeypatch):
    from datetime import timedelta

    from tracker.store import now
    from tracker.workers import backlog

    for key, status in (("http://127.0.0.1:9/img/a.jpg", "to read"), ("http://127.0.0.1:9/img/b.jpg", "read"),
                        ("http://127.0.0.1:9/img/c.jpg", "no text")):
        ctx.store.upsert_page_image(PageImage(key=key, url=key, site="127.0.0.1", found_on=SHOWN_ON,
                                              data=key.encode(), media_type="image/jpeg"))
        ctx.store.set_page_image_status(key, "done")
        ctx.store.set_page_image_reading(key, {"status": status})
    assert backlog.pictures_to_read(ctx) == []  # judged just now: its task may still be on its way
    monkeypatch.setattr(backlog, "now", lambda: now() + timedelta(hours=13))
    assert backlog.pictures_to_read(ctx) == ["http://127.0.0.1:9/img/a.jpg"]
