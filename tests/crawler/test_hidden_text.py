"""The crawler's extraction reads a page as a reader sees it: text hidden by the page's CSS is gone."""
from __future__ import annotations

import pytest

from pagetext.extraction.page import Selectors, extract
from web.demo.chapters import chapters_from_folder

from ..conftest import ROOT
from .render_site import HIDING, JUNK, hidden_page

ORIGINALS = ROOT / "samples" / "originals"
CHAPTERS = chapters_from_folder(ORIGINALS)


def squeeze(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("way", HIDING)
def test_extract_drops_junk_hidden_each_way_and_keeps_the_chapter(way):
    title, text = CHAPTERS[1]
    ex = extract(hidden_page(title, text, way), "http://127.0.0.1/hidden/2.html")
    assert ex.kind == "chapter"
    assert not any(c in ex.text for c in JUNK)
    assert squeeze(ex.text) == squeeze(text)
    assert ex.title == title


@pytest.mark.parametrize("way", HIDING)
def test_a_content_rule_reads_the_shown_text_too(way):
    title, text = CHAPTERS[2]
    ex = extract(hidden_page(title, text, way), "http://127.0.0.1/hidden/3.html", Selectors(content="#j"))
    assert ex.extractor == "rules"
    assert squeeze(ex.text) == squeeze(text)


def test_hidden_links_are_not_followed():
    html = ("<html><head><style>.trap{display:none}</style></head><body>"
            '<a href="/book/1/">目录</a><div class="trap"><a href="/honeypot">第一章</a></div>'
            '<a href="/x" style="visibility:hidden">x</a><a href="/y" hidden>y</a></body></html>')
    ex = extract(html, "http://127.0.0.1/")
    assert ex.links == ["http://127.0.0.1/book/1/"]
