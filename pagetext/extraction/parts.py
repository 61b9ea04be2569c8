"""Chapters a site splits over pages: which part of how many a page is, and the URL of its next part."""
from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

__all__ = ["BARE_PART", "PART_MARK", "UNFINISHED", "next_part", "part"]

_NEXT_PAGE_TEXT = re.compile(r"下一?[页頁]|next\s*page", re.I)
_NEXT_CHAPTER_TEXT = re.compile(r"[下后後]一?[章回节節]|next\s*chapter", re.I)
_CATALOGUE_TEXT = re.compile(r"目[录錄]|章节列表|返回书页|index|contents", re.I)
UNFINISHED = re.compile(r"本章未完|点击下一页|下一页继续")
# "(1/2)", "（2/3）", "【1/2】", "第1/3页"; a bare "1/3" only where a short heading or line ends with it.
PART_MARK = re.compile(r"[（(【\[]\s*(\d{1,3})\s*/\s*(\d{1,3})\s*[)）】\]]|第\s*(\d{1,3})\s*/\s*(\d{1,3})\s*[页頁]")
BARE_PART = re.compile(r"(?<![\d/.])(\d{1,2})\s*/\s*(\d{1,2})\s*$")
_PART_SUFFIX = re.compile(r"(.+?)[_-](\d{1,2})")  # "2_3" -> chapter "2", part 3
_PAGE_PARAMS = ("page", "p", "pn", "pg", "pageno", "part")


def part(page_title: str, headings: list[str], raw_text: str) -> tuple[int, int] | None:
    """(k, n) from "(1/2)" / "第1/3页" in the title or a heading, or a short line of the text."""
    short_lines = [line.strip() for line in raw_text.split("\n") if 0 < len(line.strip()) <= 30]
    for s in [page_title, *headings, *short_lines]:
        for m in PART_MARK.finditer(s):
            k, n = (int(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
            if 1 <= k <= n and n >= 2:
                return k, n
    for s in [*headings, *short_lines]:
        m = BARE_PART.search(s)
        if m and len(s) <= 40:
            k, n = int(m.group(1)), int(m.group(2))
            if 1 <= k <= n and n >= 2:
                return k, n
    return None


def _split_name(url: str) -> tuple[str, str, str, int] | None:
    """(scheme://host/dir/, chapter stem, extension, part number) of a chapter URL; "2_3.html" is part 3 of "2"."""
    parts = urlsplit(url)
    directory, _, name = parts.path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    m = _PART_SUFFIX.fullmatch(stem)
    chapter, k = (m.group(1), int(m.group(2))) if m else (stem, 1)
    if not re.search(r"\d", chapter):  # "chapter-12.html" is chapter 12, not part 12 of "chapter"
        return None
    return f"{parts.scheme}://{parts.netloc}{directory}/", chapter, ext, k


def _page_param(url: str) -> tuple[str, str, int]:
    """(URL without the page parameter, parameter name, page number); number 1 when there is none."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    for key, value in query:
        if key.lower() in _PAGE_PARAMS and value.isdigit():
            rest = "&".join(f"{k}={v}" for k, v in query if k != key)
            return f"{parts.scheme}://{parts.netloc}{parts.path}?{rest}", key.lower(), int(value)
    rest = "&".join(f"{k}={v}" for k, v in query)
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{rest}", "", 1


def _is_next_part_url(u: str, here: str) -> bool:
    """True when `u` is `here` with the next part suffix: 2.html -> 2_2.html, 2_2.html -> 2_3.html, ?page=3."""
    a, b = _split_name(here), _split_name(u)
    if a and b and a[:3] == b[:3] and b[3] == a[3] + 1:
        return True
    here_rest, _, k = _page_param(here)
    u_rest, key, k2 = _page_param(u)
    return bool(key) and u_rest == here_rest and k2 == k + 1


def _is_sibling_chapter(u: str, here: str) -> bool:
    """True when `u` names another chapter in the same folder: 2.html -> 3.html."""
    a, b = _split_name(here), _split_name(u)
    return bool(a and b and a[0] == b[0] and a[2] == b[2] and a[1] != b[1] and b[3] == 1)


def next_part(here: str, anchors, selected: list[str | None], part, unfinished: bool) -> str | None:
    if part and part[0] >= part[1]:
        return None  # the last part's "下一页" leads to the next chapter
    next_chapter = {u for u, t in anchors if _NEXT_CHAPTER_TEXT.search(t)}
    catalogue = {u for u, t in anchors if _CATALOGUE_TEXT.search(t)}
    candidates: list[tuple[str, bool]] = []  # (url, whether the URL itself says it is the next part)
    candidates += [(u, True) for u in selected if u]
    for u, t in anchors:
        words = re.sub(r"[\s»›>→\[\]【】()（）]", "", t)
        if len(words) <= 12 and _NEXT_PAGE_TEXT.fullmatch(words) and not _NEXT_CHAPTER_TEXT.search(words):
            candidates.append((u, False))
    for u, t in anchors:
        if not _NEXT_CHAPTER_TEXT.search(t) and _is_next_part_url(u, here):
            candidates.append((u, True))
    for u, trusted in candidates:
        if u == here or u in next_chapter or u in catalogue:
            continue
        if not urlsplit(u).query and urlsplit(u).path.endswith("/"):
            continue  # a folder index is the book's catalogue
        if not trusted and not (part or unfinished) and _is_sibling_chapter(u, here):
            continue  # mobile sites label the next chapter "下一页"
        return u
    return None
