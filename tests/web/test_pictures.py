"""A chapter posted as pictures, as the admin and the evidence package show it: the picture with
the copied lines boxed beside the original, the picture drawn anew, and in the package the
picture as served with the text read from it. The readings are written here as the workers
store them (tests/tracker/test_pictures.py reads real pictures)."""
from __future__ import annotations

import io
import json
import zipfile

from lxml import html as lxml_html
from PIL import Image

from tracker.store import MatchRecord, Page, PageImage
from web.evidence.package import build_package, select_page
from web.reports.catalog import ChapterCatalog

from .conftest import CH2, T0

SHOWN_ON = "https://pics.example/c/2.html"
KEY = SHOWN_ON + "#pictures"
PICTURES = ("https://img.pics.example/2-1.png", "https://img.pics.example/2-2.png")


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (250, 245, 230)).save(out, "PNG")
    return out.getvalue()


def add_picture_copy(store) -> tuple[str, list[dict]]:
    """Chapter 2 posted over two pictures: three lines read, the first two copy the chapter."""
    lines = [CH2[:20], CH2[20:40], "手机阅读本站"]
    where, at, text = [], 0, []
    for _n, (picture, line, top) in enumerate(zip((PICTURES[0], PICTURES[0], PICTURES[1]), lines, (40, 120, 40))):
        store.upsert_page_image(PageImage(key=picture, url=picture, site="pics", found_on=SHOWN_ON,
                                          data=_png(600, 400), media_type="image/png", fetched_at=T0,
                                          position=PICTURES.index(picture)))
        if text:
            at += 1
        where.append({"picture": picture, "box": [30, top, 560, top + 48], "start": at, "end": at + len(line)})
        text.append(line)
        at += len(line)
    for picture in PICTURES:
        mine = [{"text": lines[i], "box": where[i]["box"], "confidence": 0.97} for i in range(3)
                if where[i]["picture"] == picture]
        store.set_page_image_reading(picture, {"status": "read", "engine": "rapidocr", "lines": mine,
                                               "width": 600, "height": 400, "characters": 40})
    store.upsert_page(Page(key=KEY, url=SHOWN_ON, site="pics", text="\n".join(text), fetched_at=T0,
                           meta={"pictures_of": SHOWN_ON, "picture_lines": json.dumps(where)}))
    spans = [{"page_start": 0, "page_end": 41, "original_start": 0, "original_end": 40}]
    store.upsert_match(MatchRecord(page=KEY, chapter="山城旧事/第2章", work="山城旧事", site="pics", similarity=0.3,
                                   containment=0.3, page_share=0.85, verdict="partial", spans=spans,
                                   first_seen=T0, last_seen=T0))
    return "\n".join(text), where


def test_the_match_page_shows_each_picture_with_the_copied_lines_boxed(admin, store):
    add_picture_copy(store)
    r = admin.get("/matches/view", query_string={"page_key": KEY, "chapter": "山城旧事/第2章"})
    assert r.status_code == 200
    doc = lxml_html.fromstring(r.data)
    figures = doc.cssselect("#pictures figure.picture")
    assert len(figures) == 2
    first = figures[0]
    assert first.cssselect("svg")[0].get("viewbox") == "0 0 600 400"
    assert "images/picture?key=" in first.cssselect("image")[0].get("href")
    copied = first.cssselect("rect.copied")
    assert [(b.get("x"), b.get("y"), b.get("width"), b.get("height")) for b in copied] == [
        ("30", "40", "530", "48"), ("30", "120", "530", "48")]
    assert copied[0].cssselect("title")[0].text == CH2[:20]
    # The second picture's only line is the site's own: read, boxed grey, not copied.
    assert not figures[1].cssselect("rect.copied") and len(figures[1].cssselect("rect.read")) == 1
    assert "2 of 2 lines read by rapidocr copy the original" in first.text_content()
    # The picture under the boxes is drawn anew from what the crawl stored.
    img = admin.get(first.cssselect("image")[0].get("href"))
    assert img.status_code == 200 and img.mimetype == "image/png"
    assert Image.open(io.BytesIO(img.data)).size == (600, 400)


def test_a_text_page_has_no_pictures(admin):
    r = admin.get("/matches/view", query_string={"page_key": "https://biquge.example/1.html", "chapter": "山城旧事/第1章"})
    assert r.status_code == 200 and b'id="pictures"' not in r.data


def test_the_evidence_package_keeps_the_pictures_as_served_and_the_text_read(store):
    text, where = add_picture_copy(store)
    out = io.BytesIO()
    build_package(store, ChapterCatalog().outline(store), select_page(store, KEY), out, pdf=False)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        names = z.namelist()
        pictures = sorted(n for n in names if n.startswith("pictures/001/") and n.endswith(".png"))
        assert len(pictures) == 2
        assert z.read(pictures[0]) == store.get_page_image(PICTURES[0]).data  # byte for byte as served
        read = z.read("pictures/001/text.txt").decode()
        report = z.read("report.html").decode()
    assert text in read and f"{PICTURES[0]}\t30,40,560,88\t0-20" in read
    assert report.count("<figure class=\"picture\"") == 2 and "data:image/png;base64," in report
    assert 'class="copied"' in report


def test_the_site_page_says_what_became_of_its_pictures(admin, store):
    from datetime import timedelta

    from tracker.store import CrawlRun

    add_picture_copy(store)
    photo = "https://img.pics.example/photo.jpg"
    store.upsert_page_image(PageImage(key=photo, url=photo, site="pics", found_on=SHOWN_ON, data=_png(80, 60),
                                      media_type="image/png", fetched_at=T0, position=2))
    store.set_page_image_reading(photo, {"status": "no text"})
    store.add_crawl_run(CrawlRun(site="pics", started_at=T0, finished_at=T0 + timedelta(minutes=1), outcome="finished",
                                 counts={"fetched": 3, "skipped": 1, "pictures seen": 3, "pictures read": 2,
                                         "characters recognised": 1204, "picture pages matched": 1},
                                 skipped={"no chapter text on the page": 1, "picture: no text": 1}, job="pics"))
    r = admin.get("/sites/view", query_string={"name": "pics"})
    assert r.status_code == 200
    said = " ".join(lxml_html.fromstring(r.data).cssselect("#site-pictures")[0].text_content().split())
    assert ("The latest crawl that found pictures: 3 pictures seen: 2 read by OCR (1,204 characters recognised); "
            "1 skipped (1 no text); 1 page matched on the text of its pictures.") in said
    assert "now: 2 pictures read (80 characters recognised), 1 with no text." in said
