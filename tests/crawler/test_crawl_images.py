"""The crawler fetches the images of chapter and book pages and the tracker matches them
against the registered covers: the copies are found (from another host, lazy-loaded, inline
as data:), nothing else matches, what is not fetched is never asked for, and every image
that fails is counted with its reason, apart from the pages."""
from __future__ import annotations

import pytest

import fptrack_samples
from crawler.rules import make_rules
from pagetext.extraction.page import extract
from tracker.context import Context
from tracker.media.images import register_image
from web.demo.chapters import chapters_from_folder

from .layout_sites import LayoutSite, cover_art
from .test_crawl_site import FAST, crawl, fptrack, registered  # noqa: F401 - the fixture and the commands
from .test_layouts import assert_accounted

pytestmark = pytest.mark.slow
CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)


@pytest.fixture
def with_covers(registered):
    ctx = Context(registered)
    art = cover_art()
    for name in ("cover.png", "illustration.png"):
        register_image(ctx, "山城旧事", name, art[name])
    ctx.close()
    return registered


def test_copies_of_the_cover_and_illustration_are_found_and_nothing_else(with_covers):
    with LayoutSite("covers", CHAPTERS) as site:
        result = crawl(with_covers, site.url + "/")
        first = [h.path for h in site.hits]
        again = crawl(with_covers, site.url + "/")
        second = list(site.hits[len(first):])
        images = site.image_url
    assert result["outcome"] == again["outcome"] == "finished"
    ctx = Context(with_covers)
    found = {(m.image, m.work_image) for m in ctx.store.image_matches()}
    inline = [i.key for i in ctx.store.page_images() if i.key.startswith("data:")]
    assert len(inline) == 1
    assert found == {(f"{images}/covers/5.jpg", "山城旧事/cover.png"),
                     (f"{images}/ill/1.png", "山城旧事/illustration.png"),
                     (inline[0], "山城旧事/cover.png")}
    cover = ctx.store.get_image_match(f"{images}/covers/5.jpg", "山城旧事/cover.png")
    assert cover.found_on == site.url + "/b/5/" and cover.site == result["site"]
    logo = ctx.store.get_page_image(site.url + "/logo.png")
    assert logo.status == "done" and not ctx.store.image_matches(image=logo.key)
    # The cover shown on every page is fetched once; hidden, tracking-pixel and placeholder images never.
    assert first.count("/covers/5.jpg") == 1
    assert "/px.gif" not in first and "/hidden.png" not in first
    run2, run = ctx.store.crawl_runs(site=result["site"], limit=2)  # the latest first
    assert_accounted(run)  # the page accounting is untouched by the images
    assert_accounted(run2)
    c = run.counts
    assert c["images fetched"] == 5 and c["images stored"] == 4 and c["images skipped"] == 2, (c, run.skipped)
    assert c["images matched"] == 3
    # The text still matches as ever.
    assert {m.page.removeprefix(site.url) for m in ctx.store.matches()} == site.paths("chapter")
    # A second crawl gets 304s for the chapter pages (so their images are not asked for again) and asks
    # for the book page's stored images conditionally: 304s again, nothing new is processed.
    again_images = [h for h in second if h.path in ("/covers/5.jpg", "/ill/1.png", "/logo.png")]
    assert sorted(h.path for h in again_images) == ["/covers/5.jpg", "/logo.png"]
    assert all(h.status == 304 and h.conditional for h in again_images)
    assert run2.counts.get("images not modified", 0) == 2 and not run2.counts.get("images stored")
    assert ctx.store.count_image_matches() == 3
    ctx.close()


def test_image_failures_are_counted_with_their_reasons(with_covers):
    with LayoutSite("covers", CHAPTERS) as site:
        result = crawl(with_covers, site.url + "/")
    ctx = Context(with_covers)
    stats = ctx.store.crawl_runs(site=result["site"], limit=1)[0]
    assert stats.counts["images skipped"] == 2
    reasons = {k: v for k, v in stats.skipped.items() if k.startswith("image: ")}
    assert reasons == {"image: not an image (text/html)": 1, "image: HTTP 404": 1}
    ctx.close()


def test_a_site_rule_turns_images_off(with_covers, tmp_path):
    with LayoutSite("covers", CHAPTERS) as site:
        rules = tmp_path / "sites.toml"
        rules.write_text(f'[[site]]\nname = "covers"\nstart_urls = ["{site.url}/"]\nimages = false\n', "utf-8")
        fptrack(with_covers, "crawl", "--rules", str(rules), *FAST, "-q")
        asked = {h.path for h in site.hits}
    assert not asked & {"/covers/5.jpg", "/ill/1.png", "/logo.png", "/fake.jpg", "/gone.jpg"}
    assert make_rules({"start_urls": ["http://x/"], "images": False}).images is False


def test_the_extractor_reads_lazy_images_and_leaves_hidden_and_tiny_ones():
    html = ("<html><head><meta property='og:image' content='/c.jpg'><link rel='image_src' href='/c2.jpg'></head>"
            "<body><img src='/logo.svg'><img src='/px.gif' width='1' height='1'>"
            "<img src='data:image/gif;base64,R0lGOD' data-original='/a.png'>"
            "<img srcset='/s.jpg 100w, /l.jpg 800w, /m.jpg 400w'><img data-src='//cdn.test/b.webp'>"
            "<div hidden><img src='/hidden.jpg'></div><img src='/c.jpg'>"
            "<img src='javascript:alert(1)'><img src='data:text/html;base64,PGh0bWw+'></body></html>")
    got = extract(html, "https://site.test/book/1/").images
    assert got == ["https://site.test/c.jpg", "https://site.test/c2.jpg", "https://site.test/a.png",
                   "https://site.test/l.jpg", "https://cdn.test/b.webp"]
