"""Site furniture inside the content block, found by its shape rather than by a list of sites.

Two kinds of element ride inside the chapter's own paragraphs and so escape the density
pass: counters a site appends to many paragraphs (paragraph comment counts "12",
"评论(3)") and translators' footnotes (note boxes, <sup> markers that point to them).
A third sits next to the chapter's loose text in the same block: the reader's controls
(font size, colours: labels and links that only run a script). Each pass visits every
element a bounded number of times, so all are linear in the page.
"""
from __future__ import annotations

import re

from lxml import etree

from pagetext.html import BLOCK_TAGS, _outermost, _remove_keeping_tails, _text_lengths

__all__ = ["drop_controls", "drop_counters", "drop_footnotes", "may_hold_notes"]

# A counter's whole text: digits, maybe bracketed, maybe with a short label ("评论(3)", "12 comments").
_COUNTER = re.compile(
    r"\s*(?:[^\s\d]{0,6}\s*)?[(\[（【]?\s*[+]?\d{1,6}\s*[)\]）】]?\s*(?:[^\s\d]{0,10})?\s*"
)
_SMALL_TAGS = frozenset(("span", "a", "em", "i", "b", "small", "sup", "button", "strong", "font", "label", "div"))
_COUNTER_MIN_PARAGRAPHS = 3  # one paragraph ending in "12" is prose; three with the same trailing element are furniture
# Class or id words that name a note box; the words are split on case changes, "-", "_" and spaces.
_NOTE_WORDS = frozenset(("note", "notes", "footnote", "footnotes", "tl", "tlnote", "tn", "annotation",
                         "annotations", "endnote", "endnotes", "fn", "footnotes-list"))
_WORD_SPLIT = re.compile(r"[\s_\-]+|(?<=[a-z])(?=[A-Z])")
_REFERENCE = re.compile(r"\s*[\[(（【]?\s*(?:\d{1,3}|[a-z]|\*{1,3}|†)\s*[\])）】]?\s*")
_BRACKETED = re.compile(r"\s*[\[(（【]")
_NOTE_SHARE = 0.5  # a note box never holds most of the page's text: that is the chapter in a "note" class
_NOTES_SHARE = 0.3  # nor do all of them together
# A cheap first look, in lxml's C code: anything that could be a marker or a note box at all.
_MAY_HOLD_NOTES = etree.XPath(
    "boolean(.//sup | .//*[contains(translate(@class, 'NOTFLAI', 'notflai'), 'not')"
    " or contains(translate(@id, 'NOTFLAI', 'notflai'), 'not') or contains(@class, 'tl') or contains(@class, 'tn')"
    " or contains(@class, 'fn') or contains(@id, 'fn') or contains(@class, 'TL') or contains(@class, 'TN')"
    " or contains(translate(@class, 'ANOTI', 'anoti'), 'annotation')])"
)


def _words(el) -> set[str]:
    """The lower-cased words of an element's id and class."""
    return {w.lower() for w in _WORD_SPLIT.split(f"{el.get('id', '')} {el.get('class', '')}") if w}


def _own_text(el) -> str:
    """The text of a small element: at most three children, none with children of its own
    (so reading it costs a constant, however deep a hostile page nests)."""
    if len(el) > 3 or any(len(c) for c in el):
        return ""
    return el.text_content()


def drop_counters(root) -> int:
    """Remove the small trailing elements that hold only a number in many paragraphs; return how many.

    The element must be the paragraph's last child with no text after it, hold only a
    counter, and its (tag, class) must end at least three paragraphs: then it is the site's
    per-paragraph comment count, not a number in the story."""
    by_shape: dict[tuple[str, str], list] = {}
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag not in BLOCK_TAGS or not len(el):
            continue
        last = el[-1]
        if not isinstance(last.tag, str) or last.tag not in _SMALL_TAGS or (last.tail or "").strip():
            continue
        text = _own_text(last)
        if not text.strip() or len(text) > 24 or not _COUNTER.fullmatch(text):
            continue
        # A paragraph that is only the counter is not a paragraph with one.
        if not (el.text or "").strip() and len(el) == 1:
            continue
        by_shape.setdefault((last.tag, last.get("class", "")), []).append(last)
    gone = [el for found in by_shape.values() if len(found) >= _COUNTER_MIN_PARAGRAPHS for el in found]
    _remove_keeping_tails(gone)
    return len(gone)


# A link that runs a script instead of leading somewhere: a button ("font1", "护眼", "加入书签").
_SCRIPT_HREF = re.compile(r"\s*(?:javascript:|#\s*$)", re.I)
_CONTROLS_MIN = 2  # one script link in a block is a button beside text; two or more with little else, a panel
_CONTROL_LABELS_MAX = 30  # visible characters of the panel's own labels ("选择字体大小：")
_PANEL_TAGS = frozenset(("div", "ul", "ol", "dl", "table", "tr", "td", "section", "center"))
_TWO_SCRIPT_LINKS = etree.XPath(
    "count(.//a[starts-with(translate(normalize-space(@href), 'JAVSCRIPT', 'javscript'), 'javascript:')"
    " or normalize-space(@href) = '#' or (not(@href) and @onclick)]) >= 2"
)


def _runs_script(a) -> bool:
    href = a.get("href")
    return href is None and a.get("onclick") is not None or href is not None and bool(_SCRIPT_HREF.match(href))


def drop_controls(root, lengths: tuple[dict, dict] | None = None) -> int:
    """Remove the reader's control panels (font size, background colour); return how many.

    A panel is a block whose links all run a script, two or more of them, with at most a
    few labels of its own beside them: a chapter's block holds far more text, and a
    navigation bar's links lead to pages. `lengths` is pagetext.html._text_lengths(root)."""
    if not _TWO_SCRIPT_LINKS(root):
        return 0  # most pages: no panel possible, spare the walks (the test runs in lxml's C code)
    text_len, link_len = lengths or _text_lengths(root)
    # Count each block's links and script links bottom up, once (a block's anchors are its children's).
    links: dict = {}
    scripts: dict = {}
    for el in reversed(list(root.iter())):
        n = s = 0
        for child in el:
            n += links.get(child, 0)
            s += scripts.get(child, 0)
        if el.tag == "a":
            n += 1
            s += _runs_script(el)
        links[el] = n
        scripts[el] = s

    def panel(el) -> bool:
        if el.tag not in _PANEL_TAGS:  # a paragraph with two script links is still the story's
            return False
        n = links.get(el, 0)
        return n >= _CONTROLS_MIN and scripts.get(el, 0) == n \
            and text_len.get(el, 0) - link_len.get(el, 0) <= _CONTROL_LABELS_MAX

    found = _outermost(root, panel, below=True)
    _remove_keeping_tails(found)
    return len(found)


def may_hold_notes(root) -> bool:
    """False when nothing under `root` could be a note or a marker (no <sup>, no such id or class)."""
    return bool(_MAY_HOLD_NOTES(root))


def drop_footnotes(root, lengths: tuple[dict, dict] | None = None) -> int:
    """Remove translators' note boxes and the <sup> markers that point to them; return how many.

    `lengths` is pagetext.html._text_lengths(root) when the caller has it already."""
    if not may_hold_notes(root):
        return 0  # most pages: no <sup>, no id or class that could name a note; spare the walks
    text_len, _ = lengths or _text_lengths(root)
    total = text_len.get(root, 0) or 1
    targets: set[str] = set()
    markers = []
    for sup in root.iter("sup"):
        text = _own_text(sup)
        if not text or len(text) > 12 or not _REFERENCE.fullmatch(text):
            continue
        a = sup if sup.get("href") is not None else sup.find(".//a[@href]")
        href = (a.get("href") or "") if a is not None else ""
        if href.startswith("#"):
            targets.add(href[1:])
        if href.startswith("#") or _BRACKETED.match(text):
            markers.append(sup)

    def note_box(el) -> bool:
        if el.tag in ("body", "html") or text_len.get(el, 0) > _NOTE_SHARE * total:
            return False
        if el.get("id") in targets or el.get("name") in targets:
            return True
        return el.tag not in ("sup",) and bool(_NOTE_WORDS & _words(el))

    boxes = _outermost(root, note_box, below=True)
    box_set = set(boxes)
    # A reference list's items each carry a target id: drop the list, not item by item.
    lists = {b.getparent() for b in boxes if b.tag == "li" and b.getparent() is not None}
    for lst in lists:
        if lst.tag in ("ol", "ul") and all(c in box_set for c in lst if isinstance(c.tag, str)) \
                and text_len.get(lst, 0) <= _NOTE_SHARE * total:
            boxes = [b for b in boxes if b.getparent() is not lst] + [lst]
    if sum(text_len.get(b, 0) for b in boxes) > _NOTES_SHARE * total:
        # Notes are a small part of a chapter: when "note" boxes hold much of the page, the words
        # name something else (Tachyons' "tl" is text-align: left, set on every paragraph).
        boxes = []
    _remove_keeping_tails(markers)
    _remove_keeping_tails(boxes)
    return len(markers) + len(boxes)
