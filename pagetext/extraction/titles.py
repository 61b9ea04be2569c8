"""A page's chapter title: a site rule's pick, a heading that reads as a chapter heading,
or the page title without the site's suffix and words; and the text's first lines that
only repeat it."""
from __future__ import annotations

import re
import unicodedata

from pagetext.extraction.letters import CHAPTER_HEADING
from pagetext.extraction.parts import BARE_PART, PART_MARK
from pagetext.extraction.selection import select, selected_text

__all__ = ["chapter_title", "headings", "page_title", "without_heading_lines"]

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


_HEAD_LINES = 3  # a site repeats the heading at the top of the text, in a line or two, if at all
_HEADING_LINE_MAX = 60  # visible characters: a heading, not a paragraph that names the chapter
_NUMBERS = re.compile(r"\d+")
_LEADING_NUMBER = re.compile(r"\s*\d{1,5}\s*[.、:：]\s*")  # "1. Good Morning Brother", "22.第22章"
_SENTENCE_END = re.compile(r"[。！？.!?…”」』\"]\s*$")
# A chapter number anywhere in a heading ("Chapter 1: Chapter 1 Mom…" carries two).
_MARKER = re.compile(r"第\s*[0-9０-９零〇○一二两三四五六七八九十百千万]+\s*[章回节節卷]|\bchapter\s+(?:\d+|[ivxlcdm]+)\b",
                     re.I)
_WORDS_MIN = 4  # letters of a heading's own words that must read in a title
_DIGITS = re.compile(r"\d+")


def _key(text: str) -> str:
    """The letters and digits of `text`, NFKC, lower case: "第13章  应聘工作" -> "第13章应聘工作"."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def _numbers(text: str) -> set[int]:
    return {int(n) for n in _NUMBERS.findall(unicodedata.normalize("NFKC", text))}


def without_heading_lines(text: str, title: str, page_title: str = "") -> str:
    """`text` without the first lines that only repeat the chapter's heading.

    Sites put the heading at the top of the chapter's block ("第13章  应聘工作", or "Chapter 001"
    then "Good Morning Brother" under "1. Good Morning Brother"). A top line goes when it carries
    a chapter number and reads whole in the title or the page title (or is a bare "Chapter 001"
    whose number the title carries), when it carries a number the title carries and its words
    read in a title's ("AST 0101 – A Quiet Beauty"), or, right after such a line, when it is the
    title's words without the number and no sentence. A heading without a number stays (an article's <h1>
    "雨夜" heads its own text), and so does a sentence ("天黑，别出门。" under "第一章 天黑别出门"
    is the story's first). The first line that is none of these ends the look."""
    if not title and not page_title:
        return text
    keys = [k for k in (_key(title), _key(page_title)) if k]
    unnumbered = [k for k in (_key(_MARKER.sub("", title)), _key(_MARKER.sub("", page_title))) if k]
    wordings = [_DIGITS.sub("", k) for k in unnumbered]
    numbers = _numbers(title) | _numbers(page_title)
    bare_title = _key(_LEADING_NUMBER.sub("", CHAPTER_HEADING.sub("", title), count=1))
    lines = text.split("\n")
    drop = 0
    for line in lines[:_HEAD_LINES]:
        k = _key(line)
        if not k or len(k) > _HEADING_LINE_MAX:
            break
        if CHAPTER_HEADING.search(line):
            rest = _key(_MARKER.sub("", line))
            # Whole in a title; or its words, numbers aside, in one ("第45章 雪夜" under "第四十五章
            # 雪夜", "Chapter 1: Chapter 1 Mom is…" under "… - Chapter 1 Mom is… | Site"); or a bare
            # number the title carries.
            if any(k in t for t in keys) or len(rest) >= _WORDS_MIN and any(rest in t for t in unnumbered) \
                    or rest and rest == bare_title or not rest and _numbers(line) & numbers:
                drop += 1
                continue
        elif drop and len(k) >= 2 and k == bare_title and not _SENTENCE_END.search(line):
            drop += 1
            continue
        elif _numbers(line) & numbers and len(words := _DIGITS.sub("", k)) >= _WORDS_MIN \
                and any(words in w for w in wordings):
            # The number written the site's way: "AST 0101 – A Quiet Beauty" under "AST - Chapter 101 - A Quiet Beauty".
            drop += 1
            continue
        break
    return "\n".join(lines[drop:]) if drop else text
