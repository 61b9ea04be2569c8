"""The links of a page: its base URL, every http(s) <a href> made absolute, its chapter
links, and how much of its text is link text."""
from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin, urlsplit

from pagetext.extraction.letters import CHAPTER_HEADING, visible
from pagetext.extraction.selection import select
from pagetext.html import BOILERPLATE_WORDS, DROP_TAGS

__all__ = ["absolute", "anchors", "base_url", "chapter_links", "href_of", "link_share", "unique"]


def base_url(tree, url: str) -> str:
    base = tree.find(".//base[@href]")
    if base is not None:
        try:
            return urljoin(url, base.get("href").strip())
        except ValueError:
            pass
    return url


def absolute(href: str | None, base: str) -> str | None:
    href = re.sub(r"[\t\r\n]", "", href or "").strip()
    if not href or href.startswith("#"):  # a jump inside this page names nothing new to fetch
        return None
    try:
        u = urldefrag(urljoin(base, href))[0]
        parts = urlsplit(u)
    except ValueError:
        return None
    return u if parts.scheme in ("http", "https") and parts.netloc else None


def anchors(tree, base: str) -> list[tuple[str, str]]:
    """(absolute URL, visible text) of every http(s) <a href>, in document order."""
    out = []
    for a in tree.iter("a"):
        u = absolute(a.get("href"), base)
        if u:
            out.append((u, " ".join(a.text_content().split())))
    return out


def unique(items) -> list[str]:
    return list(dict.fromkeys(items))


def href_of(item) -> str | None:
    """The link a selector picked: an href string, an <a>, or the first <a> inside an element."""
    if isinstance(item, str):
        return item
    if not isinstance(getattr(item, "tag", None), str):
        return None
    a = item if item.get("href") is not None else item.find(".//a[@href]")
    return a.get("href") if a is not None else None


def chapter_links(tree, base: str, anchors: list[tuple[str, str]], sel: str) -> list[str]:
    if sel:
        found = unique(u for u in (absolute(href_of(i), base) for i in select(tree, sel)) if u)
        if found:
            return found
    return unique(u for u, t in anchors if len(t) <= 60 and CHAPTER_HEADING.search(t))


def link_share(tree) -> float:
    """Share of the page's visible text that is link text, outside headers, footers, ads and scripts."""
    from lxml import etree

    body = tree.find(".//body")
    root = body if body is not None else tree
    total = linked = 0
    skip = 0  # depth inside furniture
    in_link = 0
    opened: list[bool] = []  # whether each open element is furniture
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            furniture = _is_furniture(el)
            opened.append(furniture)
            skip += furniture
            in_link += el.tag == "a"
            if not skip and el.text:
                n = visible(el.text)
                total += n
                linked += n if in_link else 0
        else:
            skip -= opened.pop()
            in_link -= el.tag == "a"
            if not skip and el.tail and el is not root:
                n = visible(el.tail)
                total += n
                linked += n if in_link else 0
    return linked / total if total else 0.0


def _is_furniture(el) -> bool:
    if el.tag in DROP_TAGS:
        return True
    words = re.split(r"[\s_\-]+", f"{el.get('id', '')} {el.get('class', '')}".lower())
    return bool(BOILERPLATE_WORDS.intersection(words))
