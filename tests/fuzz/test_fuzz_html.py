"""Fuzzing the HTML entry points: broken markup (unclosed tags, stray "<", entities of
surrogates, NUL bytes), deep nesting and giant tokens give a clean result, never an exception.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from pagetext.extraction.page import KINDS, extract, remove_site_lines
from pagetext.html import html_to_text, looks_like_html, strip_tags
from tests.fuzz.strategies import hostile_texts, markup, urls

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(markup)
def test_html_to_text_reads_any_markup(html):
    text, meta = html_to_text(html)
    assert isinstance(text, str) and isinstance(meta["title"], str)
    assert meta["extractor"] in ("trafilatura", "lxml", "regex")
    assert "\x00" not in text


@FUZZ
@given(markup)
def test_looks_like_html_and_strip_tags_take_any_text(text):
    assert looks_like_html(text) in (True, False)
    assert isinstance(strip_tags(text), str)


@FUZZ
@given(markup, urls)
def test_extract_reads_any_page(html, url):
    ex = extract(html, url)
    assert ex.kind in KINDS
    assert isinstance(ex.title, str) and isinstance(ex.text, str)
    assert all(u.startswith(("http://", "https://")) for u in ex.links)
    assert set(ex.chapter_links) <= set(ex.links) or ex.chapter_links == []
    assert ex.next_part is None or ex.next_part.startswith(("http://", "https://"))
    assert ex.part is None or 1 <= ex.part[0] <= ex.part[1]


@FUZZ
@given(hostile_texts)
def test_remove_site_lines_takes_any_text(text):
    out = remove_site_lines(text)
    assert isinstance(out, str) and len(out) <= len(text)
