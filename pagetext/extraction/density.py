"""The page's main text: a site rule's content selector, else the densest block (visible
text per block, less the text of links), else pagetext.html's fallbacks."""
from __future__ import annotations

import copy

from pagetext.extraction.letters import visible
from pagetext.extraction.selection import select
from pagetext.html import BLOCK_TAGS, block_text, html_to_text, remove_furniture, tidy

__all__ = ["main_text"]

_PARAGRAPH_MAX = 600  # visible characters: longer blocks without <br> are not one paragraph among many


def main_text(tree, html: str, content: str) -> tuple[str, str]:
    """The page's main text (site lines still in it) and the name of the path that found it."""
    if content:
        found = select(tree, content)
        if found:
            texts = []
            for item in found:
                if isinstance(item, str):
                    texts.append(item)
                else:
                    # A copy has no parent, so the furniture pass cannot drop the selected element itself.
                    texts.append(block_text(remove_furniture(copy.deepcopy(item))))
            text = tidy("\n".join(texts))
            if text:
                return text, "rules"
    root = remove_furniture(tree)
    block = _densest_block(root)
    if block is not None:
        text = block_text(block)
        if text:
            return text, "density"
    text, meta = html_to_text(html)
    return text, meta["extractor"]


_CONTAINERS = frozenset(("body", "html", "table", "tbody", "tr", "ul", "ol", "dl"))  # never one paragraph


class _Score:
    __slots__ = ("text", "links", "lines")

    def __init__(self) -> None:
        self.text = 0.0  # weighted visible characters outside links
        self.links = 0.0  # weighted visible characters inside links
        self.lines = 0  # <br> and paragraph children

    @property
    def value(self) -> float:
        return self.text - self.links + min(self.lines, 200)


def _densest_block(root):
    """The block element whose own paragraphs hold the most text that is not link text.

    Text belongs to its nearest block element; a paragraph-like block (<p>, or a <div> with no
    blocks or <br> inside) among two or more such siblings gives its text to its parent, so a
    <div id="content"> with <br> lines and an <article> of <p>s each score as one block.
    """
    from lxml import etree

    scores: dict = {}
    groups: dict = {}
    block_of: dict = {}  # element -> its nearest block element (itself, or an ancestor)
    paragraph_cache: dict = {}
    line_cache: dict = {}
    line_children: dict = {}

    def is_line_block(el) -> bool:
        hit = line_cache.get(el)
        if hit is None:
            hit = el.tag in BLOCK_TAGS and el.tag not in _CONTAINERS and not any(
                isinstance(d.tag, str) and (d.tag in BLOCK_TAGS or d.tag == "br") for d in el.iterdescendants()
            )
            line_cache[el] = hit
        return hit

    def nearest_block(el):
        """The first block element from `el` up; the climb is cached for every element it
        passes, so deep inline nesting costs its depth once, not once per element."""
        path = []
        b = el
        while b not in block_of and (not isinstance(b.tag, str) or b.tag not in BLOCK_TAGS) \
                and b.getparent() is not None:
            path.append(b)
            b = b.getparent()
        b = block_of.get(b, b)
        for p in path:
            block_of[p] = b
        block_of[el] = b
        return b

    def is_paragraph(b) -> bool:
        # A long <div> without line breaks is a whole chapter on its own, not one of many paragraphs.
        hit = paragraph_cache.get(b)
        if hit is None:
            hit = is_line_block(b) and (b.tag == "p" or visible(b.text_content()) <= _PARAGRAPH_MAX)
            paragraph_cache[b] = hit
        return hit

    def group_of(el):
        g = groups.get(el)
        if g is None:
            b = nearest_block(el)
            g = b
            parent = b.getparent()
            if parent is not None and is_paragraph(b):
                siblings = line_children.get(parent)
                if siblings is None:
                    siblings = sum(1 for c in parent if isinstance(c.tag, str) and is_line_block(c))
                    line_children[parent] = siblings
                if siblings >= 2:
                    g = parent
            groups[el] = g
        return g

    def add(owner, text: str, linked: bool) -> None:
        w = _weight(text)
        if not w:
            return
        s = scores.setdefault(group_of(owner), _Score())
        if linked:
            s.links += w
        else:
            s.text += w

    in_link = 0
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            if tag == "a":
                in_link += 1
            if tag and el.text:  # comments and processing instructions have no visible text
                add(el, el.text, in_link > 0)
            if tag in ("br", "p") and el.getparent() is not None:
                scores.setdefault(group_of(el.getparent() if tag == "br" else el), _Score()).lines += 1
        else:
            if tag == "a":
                in_link -= 1
            if el.tail and el is not root and el.getparent() is not None:
                add(el.getparent(), el.tail, in_link > 0)
    if not scores:
        return None
    best = max(scores, key=lambda g: scores[g].value)
    if scores[best].value <= 0:
        return None
    return _widen(best, scores)


def _widen(best, scores: dict):
    """Climb from `best` while its parent holds substantial other text (a chapter split into sections)."""
    top = best
    while top.getparent() is not None:  # the top of best's tree (the body may have been cut loose)
        top = top.getparent()
    under = _sums_under(top, scores)
    own = under[best][0]
    el = best
    while el.getparent() is not None and el.tag not in ("body", "html"):
        parent = el.getparent()
        text, links = under[parent]
        if text - under[el][0] < 0.3 * own or links > 0.25 * (text + links):
            break
        el = parent
    return el


def _sums_under(top, scores: dict) -> dict:
    """element -> [text, links] summed over the groups inside it (itself included), for every
    element that holds a group: one pass from the leaves up, instead of one climb to the
    top per group (quadratic on deeply nested pages). Weights are multiples of 1/2, so the
    sums are exact in any order."""
    under: dict = {}
    for el in reversed(list(top.iter())):  # children before their parents
        s = scores.get(el)
        acc = under.get(el)
        if s is not None:
            acc = under.setdefault(el, [0.0, 0.0])
            acc[0] += max(s.text, 0.0)
            acc[1] += s.links
        parent = el.getparent()
        if acc is not None and parent is not None:
            up = under.setdefault(parent, [0.0, 0.0])
            up[0] += acc[0]
            up[1] += acc[1]
    return under


def _weight(text: str) -> float:
    """Visible characters, a non-ASCII (CJK) one counting twice an ASCII one (it carries about a word)."""
    visible = "".join(text.split())
    ascii_chars = len(visible.encode("ascii", "ignore"))
    return len(visible) - 0.5 * ascii_chars
