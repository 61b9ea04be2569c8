"""Real site structures (tests/crawler/layout_sites.py), crawled for real: every chapter is
stored with its text and matched to its original, every request is accounted for, and a
second crawl of an unchanged site costs 304s, not bodies."""
from __future__ import annotations

import dataclasses

import pytest

import fptrack_samples
from tracker.context import Context
from tracker.store import NotFound
from web.demo.chapters import chapters_from_folder

from .layout_sites import INLINE_MARK, LAYOUTS, MARKS, LayoutSite, lines_of
from .test_crawl_site import crawl, registered  # noqa: F401 - the fixture and the command

pytestmark = pytest.mark.slow
CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)
ENDINGS = ("第一章", "第二章", "第三章")
OUTCOMES = ("catalogues", "stored", "unchanged", "not modified", "parts joined", "skipped", "failed")


def run_of(ctx, site_name):
    (run, *_) = ctx.store.crawl_runs(site=site_name, limit=1)
    return run


def assert_accounted(run):
    """Every request the crawl made ends as exactly one outcome."""
    c = run.counts
    pages = lambda reasons: sum(n for r, n in reasons.items()  # noqa: E731
                                if not r.startswith(("image: ", "picture: ")))
    assert pages(run.skipped) == c.get("skipped", 0) and pages(run.failed) == c.get("failed", 0)
    assert c.get("fetched", 0) + c.get("no response", 0) == sum(c.get(k, 0) for k in OUTCOMES), c


def assert_has_text(stored: str, text: str) -> None:
    for k, line in enumerate(lines_of(text)):
        if k == 2:  # where the site put its watermark inside the paragraph: the sentence holding it goes
            assert line[:12] in stored and INLINE_MARK not in stored, line
        else:
            assert line in stored, line
    assert not any(mark in stored for mark in MARKS)


# "pictures" holds a chapter with no text but its pictures: test_crawl_pictures.py reads and matches it.
@pytest.mark.parametrize("layout", sorted(set(LAYOUTS) - {"pictures"}))
def test_every_chapter_of_a_layout_is_stored_with_its_text_and_matched(registered, layout):
    with LayoutSite(layout, CHAPTERS) as site:
        result = crawl(registered, site.url + "/")
        base = site.url
    assert result["outcome"] == "finished"
    ctx = Context(registered)
    stored = {p.key.removeprefix(base): p for p in ctx.store.pages()}
    want = site.paths("chapter", "lone part")
    assert set(stored) == want
    for path in want:
        parts = stored[path].meta.get("part_urls", "").split() or [base + path]
        for part in parts:  # each part's text, watermarked on its own page
            assert_has_text(stored[path].text, site.pages[part.removeprefix(base)].text)
    found = {}
    for m in ctx.store.matches():
        found.setdefault(m.page.removeprefix(base), set()).add(m.chapter)
    for path in want:
        assert any(c.endswith(ENDINGS[site.pages[path].copies]) for c in found.get(path, ())), (path, found.get(path))
    run = run_of(ctx, result["site"])
    assert_accounted(run)
    assert run.counts.get("failed", 0) == 0
    if layout == "sitemap":
        assert run.counts["sitemaps"] == 2 and run.counts["sitemap URLs"] == len(CHAPTERS) + 1
    # robots.txt is read once, by Scrapy's robots middleware, whose parser also gives the sitemaps
    assert [h.path for h in site.hits].count("/robots.txt") == 1
    if layout == "split":
        joined = stored["/b/9/2.html"]
        assert joined.meta["parts"] == 3 and run.counts["parts joined"] == 2
        # part 2 of chapter 2, also linked from the catalogue, is inside the joined page only: joined as
        # fetched when it came first, else fetched again by the chain and its own fetch counted as joined
        assert run.skipped.get("later part of a split chapter (joined to its first part)", 0) <= 1
        assert stored["/b/9/3_2.html"].meta["parts"] == 1  # part 2 of 3, stored on its own
    ctx.close()


def test_a_second_crawl_of_an_unchanged_site_with_etags_downloads_no_chapter_again(registered):
    with LayoutSite("qidian", CHAPTERS) as site:
        first = crawl(registered, site.url + "/")
        before = len(site.hits)
        again = crawl(registered, site.url + "/")
        hits = site.hits[before:]
    chapters = site.paths("chapter")
    assert first["stored"] == len(chapters)
    on_chapters = [h for h in hits if h.path in chapters]
    assert len(on_chapters) == len(chapters)
    assert all(h.conditional and h.status == 304 and h.sent == 0 for h in on_chapters), on_chapters
    assert again["stored"] == 0 and again["unchanged"] == 0 and again["not modified"] == len(chapters)
    ctx = Context(registered)
    run = run_of(ctx, again["site"])
    assert run.counts["not modified"] == len(chapters) and "processed" not in run.counts
    assert_accounted(run)
    ctx.close()


def test_without_validators_the_content_hash_still_saves_the_work(registered):
    with LayoutSite("biquge", CHAPTERS, validators=False) as site:
        crawl(registered, site.url + "/")
        before = len(site.hits)
        again = crawl(registered, site.url + "/")
        assert not any(h.conditional for h in site.hits[before:])
    assert again["stored"] == 0 and again["unchanged"] == len(site.paths("chapter"))


def test_every_request_on_the_sample_site_ends_as_one_outcome(registered):
    """The sample site's traps: robots.txt, a 404, a redirect to a page already fetched, a slow page,
    a huge one, binaries, a calendar, session ids and a split chapter; none is lost without a reason."""
    from web.demo.server import SampleSite

    with SampleSite(CHAPTERS, slow_delay=3.0, huge_bytes=2_000_000) as site:
        result = crawl(registered, site.url + "/")
    ctx = Context(registered)
    run = run_of(ctx, result["site"])
    assert_accounted(run)
    c = run.counts
    assert c["no response"] == sum(run.skipped.get(r, 0) for r in ("robots.txt forbids it",
                                                                     "larger than 1000000 bytes")) + \
        run.failed["timed out after 1 s"]
    # /html/1/1.html redirects to /book/1/1.html: dropped as a duplicate when that came first, and counted
    assert run.skipped.get("redirected to a page already fetched", 0) <= 1
    ctx.close()


def test_new_extraction_rules_fetch_the_pages_in_full_once(registered, tmp_path):
    with LayoutSite("qidian", CHAPTERS) as site:
        crawl(registered, site.url + "/")
        rules = tmp_path / "sites.toml"
        rules.write_text(f'[[site]]\nname = "qd"\nstart_urls = ["{site.url}/"]\ncontent = ".read-content"\n',
                         encoding="utf-8")
        before = len(site.hits)
        changed = crawl(registered, f"--rules={rules}")
        middle = len(site.hits)
        again = crawl(registered, f"--rules={rules}")
        chapters = site.paths("chapter")
        assert not any(h.conditional for h in site.hits[before:middle] if h.path in chapters)
        assert all(h.status == 304 for h in site.hits[middle:] if h.path in chapters)
    assert changed["not modified"] == 0 and again["not modified"] == len(chapters)


def test_a_lone_part_stored_alone_goes_when_a_later_crawl_joins_it_to_its_chapter(registered):
    with LayoutSite("split", CHAPTERS) as site:
        crawl(registered, site.url + "/")
        ctx = Context(registered)
        lone = site.url + "/b/9/3_2.html"
        assert ctx.store.get_page(lone).meta["parts"] == 1 and ctx.store.count_matches(page=lone) >= 1
        # the site now chains part 1 of chapter 3 to its part 2
        first = site.pages["/b/9/3.html"]
        site.pages["/b/9/3.html"] = dataclasses.replace(first, body=first.body.replace(
            b"</body>", "<a href='/b/9/3_2.html'>下一页</a></body>".encode()))
        result = crawl(registered, site.url + "/")
    joined = ctx.store.get_page(site.url + "/b/9/3.html")
    assert joined.meta["parts"] == 2 and lone in joined.meta["part_urls"].split()
    with pytest.raises(NotFound):
        ctx.store.get_page(lone)
    assert ctx.store.count_matches(page=lone) == 0  # the copy is reported once, on the joined page
    assert run_of(ctx, result["site"]).counts["lone parts superseded"] == 1
    ctx.close()


@pytest.mark.parametrize("processes", [0, 1])  # extracted in the crawl's process, or in a worker
def test_junk_hidden_by_an_external_stylesheet_is_dropped_and_the_sheet_fetched_once(registered, processes):
    from .layout_sites import Page

    registered = dataclasses.replace(registered, extract_processes=processes)
    with LayoutSite("biquge", CHAPTERS) as site:
        site.pages["/css/site.css"] = Page(b"body{font-size:16px} .j7{display:none}", content_type="text/css",
                                           kind="css")
        for path in site.paths("chapter"):
            p = site.pages[path]
            html = p.body.decode("utf-8").replace("</head>", '<link rel="stylesheet" href="/css/site.css"></head>', 1)
            html = html.replace("。", "。<span class='j7'>鑫垚淼</span>")
            site.pages[path] = dataclasses.replace(p, body=html.encode("utf-8"))
        result = crawl(registered, site.url + "/")
        sheet_hits = [h.path for h in site.hits].count("/css/site.css")
        base = site.url
    ctx = Context(registered)
    stored = [p for p in ctx.store.pages() if p.key.startswith(base)]
    assert len(stored) == len(CHAPTERS) and not any("鑫" in p.text for p in stored)
    assert sheet_hits == 1  # one fetch for every page that links it
    assert run_of(ctx, result["site"]).counts["stylesheets read"] == 1
    ctx.close()
