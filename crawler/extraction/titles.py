"""A page's chapter title: a site rule's pick, a heading that reads as a chapter heading,
or the page title without the site's suffix and words."""
from __future__ import annotations

import re

from crawler.extraction.letters import CHAPTER_HEADING
from crawler.extraction.parts import BARE_PART, PART_MARK
from crawler.extraction.selection import select, selected_text

__all__ = ["chapter_title", "headings", "page_title"]

_TITLE_SEPARATORS = re.compile(r"[_|｜—–-]")  # the segments are stripped: no \s* to rescan runs of spaces
# Site words a title segment ends with, stripped one at a time from the end (a pattern
# (?:...)+$ rescans to the end from each start: quadratic on a title of repeated words).
_TITLE_NOISE_WORDS = ("最新章节", "全文阅读", "在线阅读", "免费阅读", "无弹窗", "txt下载")
_TITLE_NOISE_WORD = re.compile("|".join(_TITLE_NOISE_WORDS), re.I)
_TITLE_NOISE_LENGTHS = sorted({len(w) for w in _TITLE_NOISE_WORDS})


def page_title(tree) -> str:
    el = tree.find(".//title")
    return " ".join((el.text_content() if el is not None else "").split())


def headings(tree) -> list[str]:
    return [t for t in (" ".join(h.text_content().split()) for h in tree.iter("h1")) if t]


def chapter_title(tree, sel: str, page_title: str, headings: list[str]) -> str:
    title = ""
    if sel:
        title = next((t for t in map(selected_text, select(tree, sel)) if t), "")
    if not title:
        # The site logo is an <h1> on some sites: prefer one that reads as a chapter heading.
        title = next((h for h in headings if CHAPTER_HEADING.search(h)), "")
        title = title or next((h for h in headings if h in page_title), "")
        title = title or _without_site_suffix(page_title) or (headings[0] if headings else "")
    title = PART_MARK.sub("", title)
    title = BARE_PART.sub("", title) if len(title) <= 60 else title
    return " ".join(title.split())


def _without_site_suffix(title: str) -> str:
    """"第一章 雨夜来客_山城旧事_笔趣阁" -> "第一章 雨夜来客"; the segment with a chapter heading wins."""
    segments = [s.strip() for s in _TITLE_SEPARATORS.split(title) if s.strip()]
    if not segments:
        return ""
    best = next((s for s in segments if CHAPTER_HEADING.search(s)), segments[0])
    return _without_noise_words(best).strip() or best


def _without_noise_words(title: str) -> str:
    """`title` without the site words it ends with ("第一章 雨夜来客最新章节" -> "第一章 雨夜来客")."""
    end = len(title)
    while True:
        n = next((n for n in _TITLE_NOISE_LENGTHS if n <= end and _TITLE_NOISE_WORD.fullmatch(title, end - n, end)), 0)
        if not n:
            return title[:end]
        end -= n
