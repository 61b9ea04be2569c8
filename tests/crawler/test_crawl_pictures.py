"""A chapter posted as pictures, crawled end to end on a loopback site: the page has no chapter
text, only two screenshots of the chapter (drawn by bench/pictures/render.py from the registered
chapter) with a photo between them. `fptrack crawl` fetches them, reads the two with text by OCR,
never the photo, matches the pictures' text in page order to the right chapter, counts it all
in the crawl's record and summary, and the match's evidence points at the pictures' lines."""
from __future__ import annotations

import pytest

import fptrack_samples
from tracker.context import Context
from tracker.evidence.warc import read_warc
from tracker.media.pictures import SUFFIX, line_map
from web.demo.chapters import chapters_from_folder
from web.reports.catalog import ChapterCatalog
from web.review.evidence import match_evidence

from ..conftest import need
from .layout_sites import LayoutSite
from .test_crawl_site import FAST, fptrack, registered  # noqa: F401 - the fixture and the command
from .test_layouts import assert_accounted

pytestmark = pytest.mark.slow
CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)


@pytest.fixture
def ocr():
    from bench.pictures.render import available_fonts
    from ocr.engines import EngineMissing, make_engine

    try:
        make_engine("rapidocr", threads=1)
    except EngineMissing as e:
        need(False, f"the rapidocr OCR engine is not installed: {e}")
    need(bool(available_fonts()), "no Chinese font installed for the renderer; run scripts/system-deps test")


def test_a_chapter_posted_as_pictures_is_read_matched_counted_and_boxed(registered, ocr):
    with LayoutSite("pictures", CHAPTERS) as site:
        r = fptrack(registered, "crawl", site.url + "/", *FAST)
        hits = [h.path for h in site.hits]
    shown_on = site.url + "/p/9/2.html"
    # The summary says, in words, what became of the pictures.
    assert "3 pictures seen: 2 read by OCR (" in r.stdout and "1 skipped (1 no text)" in r.stdout, r.stdout
    assert hits.count("/pic/9/2-2.jpg") == 1  # lazy-loaded: its real address fetched once
    ctx = Context(registered)
    try:
        (run,) = ctx.store.crawl_runs(limit=1)
        assert_accounted(run)  # the pages' accounting is untouched by the pictures
        c = run.counts
        assert c["pictures seen"] == 3 and c["pictures read"] == 2 and c["characters recognised"] > 600, c
        assert run.skipped["picture: no text"] == 1
        photo = ctx.store.get_page_image(site.image_url + "/pic/9/photo.jpg")
        assert photo.reading["status"] == "no text" and "lines" not in photo.reading
        # The pictures' text, in page order, matched the chapter they show; the other chapters as text.
        found = {m.page: m for m in ctx.store.matches()}
        copy = found[shown_on + SUFFIX]
        assert copy.chapter == "山城旧事/山城旧事-第二章" and copy.verdict == "duplicate", copy
        assert copy.containment > 0.8
        page = ctx.store.get_page(shown_on + SUFFIX)
        assert page.url == shown_on and page.site == run.site
        pictures = [w["picture"] for w in line_map(page)]
        assert pictures[0].endswith("/2-1.jpg") and pictures[-1].endswith("/2-2.jpg")
        # Each picture's HTTP exchange is kept as a WARC, the evidence of the page its pictures make;
        # the photo's is not.
        kept = ctx.store.evidence(copy.page)
        assert sorted(e.url.rsplit("/", 1)[1] for e in kept) == ["2-1.jpg", "2-2.jpg"]
        assert all(e.kind == "warc" for e in kept) and c["picture evidence kept"] == 2
        served = ctx.store.get_page_image(site.image_url + "/pic/9/2-1.jpg").data
        response = next(r for e in kept for r in read_warc(ctx.store.evidence_data(copy.page, e.sha256))
                        if r.type == "response" and r.url.endswith("/2-1.jpg"))
        assert served in response.payload
        # The match's evidence: both pictures, most of their lines boxed as copied.
        evidence = match_evidence(ctx.store, ChapterCatalog().outline(ctx.store), copy.page, copy.chapter)
        shown = evidence["pictures"]
        assert [p["key"].rsplit("/", 1)[1] for p in shown] == ["2-1.jpg", "2-2.jpg"]
        for p in shown:
            assert p["copied"] >= 0.8 * len(p["boxes"]) > 5 and p["width"] == 1080 and p["engine"] == "rapidocr"
            b = next(b for b in p["boxes"] if b["copied"])
            assert 0 <= b["x"] < b["x"] + b["width"] <= p["width"] and 0 <= b["y"] < b["y"] + b["height"] <= p["height"]
    finally:
        ctx.close()
