"""Pages that hold several chapters, each in its own wrapper: find the wrappers and their headings.

A whole-work page (a fan-fiction site's "entire work", a novel site's one-page edition)
puts every chapter in a sibling element that starts with a heading ("第一章 …",
"Chapter 2: …") and holds a chapter's worth of text. Such a page is several chapters, not
one: each should be fingerprinted on its own. Linear: text lengths and first headings are
computed once, bottom up, and only outermost headings are read.
"""
from __future__ import annotations

import re

from lxml import etree

from pagetext.html import _outermost, _text_lengths

__all__ = ["chapter_wrappers", "may_hold_chapters", "CHAPTER_HEADING"]

_NUMERAL = "0-9０-９零〇○一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟"
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
)
CHAPTER_HEADING = re.compile(
    rf"第\s*[{_NUMERAL}]+\s*[章回节節卷]|^\s*(?:chapter|ch\.?|part)\s*(?:\d+|[ivxlcdm]+\b|(?:{_NUMBER_WORDS})\b)",
    re.I,
)
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_WRAPPER_TAGS = frozenset(("div", "section", "article", "li", "td"))
_MIN_TEXT = 150  # visible characters: a chapter (or a short one), not a teaser or a heading with a line under it
_MIN_CHAPTERS = 2
_HEADING_MAX = 120  # visible characters of a heading's text
_HEADINGS = etree.XPath("count(.//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6)")  # in lxml's C code


def may_hold_chapters(root) -> bool:
    """False when `root` has fewer headings than a whole-work page needs (most chapter pages)."""
    return _HEADINGS(root) >= _MIN_CHAPTERS


def chapter_wrappers(root, lengths: tuple[dict, dict] | None = None) -> list[tuple[str, object]]:
    """[(heading text, wrapper element)] when `root` holds two or more sibling chapter wrappers, else [].

    `lengths` is pagetext.html._text_lengths(root) when the caller has it already (lengths
    of elements removed since then do no harm: they are no longer in the tree)."""
    if not may_hold_chapters(root):
        return []  # a page of one chapter has one heading or none: spare the walks
    text_len, link_len = lengths or _text_lengths(root)
    headings = _outermost(root, lambda el: el.tag in _HEADING_TAGS)
    heading_text = {}
    for h in headings:
        if text_len.get(h, 0) <= _HEADING_MAX:
            heading_text[h] = " ".join(h.text_content().split())
    first: dict = {}  # element -> the first heading in it (document order), or None
    for el in reversed(list(root.iter())):  # children before parents
        if el in heading_text:
            first[el] = el
            continue
        found = None
        for child in el:
            found = first.get(child)
            if found is not None:
                break
        first[el] = found
    best: list = []
    best_len = 0
    for parent in root.iter():
        if not isinstance(parent.tag, str) or len(parent) < _MIN_CHAPTERS:
            continue
        found = []
        for child in parent:
            if not isinstance(child.tag, str) or child.tag not in _WRAPPER_TAGS:
                continue
            h = first.get(child)
            if h is None or text_len.get(child, 0) < _MIN_TEXT:
                continue
            if link_len.get(child, 0) > 0.5 * text_len[child]:
                continue  # a volume of a catalogue: chapter links under a "第一卷" heading
            found.append((heading_text[h], child))
        if sum(1 for t, _ in found if CHAPTER_HEADING.search(t)) < _MIN_CHAPTERS:
            continue
        covered = sum(text_len[c] for _, c in found)
        if covered > best_len:
            best, best_len = found, covered
    return best
