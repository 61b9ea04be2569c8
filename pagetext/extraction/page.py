"""What a crawled page holds: its chapter title, main text, kind, links, and where its next part is.

Novel sites put a chapter in one <div id="content"> with <br> line breaks, article sites in
<p>s under an <article>; both are found by text density (visible text per block, less the
text of links), after pagetext.html has removed scripts, navigation, ads and link lists.
Lines that sites inject into the chapter itself (watermarks, "本章未完，请点击下一页继续阅读",
domain names) are then dropped line by line, or sentence by sentence when a site glued them
to a real paragraph, so a prose line that merely contains a word like 阅读 stays. Text the
page's own CSS hides (junk characters in display:none spans and the like) is removed first,
by pagetext.html.drop_hidden, as simtool does on files.

Real sites need rules that no list of sites or phrases keeps up with; pagetext.extraction holds
them, each judged by shape: per-paragraph comment counters, translators' note boxes and the
reader's control panels (font and colour buttons) leave the tree before density looks
(furniture.py); calls to action, load banners, note lines, addresses on any top-level
domain and lines a page repeats leave the text (lines.py); the heading a site repeats at
the top of the text goes with the title (titles.py); and a
page that holds a whole work gives each chapter (chapters.py, Extracted.chapters).
The extractor's own steps live there too, each module named after what it holds: the
main-text choice (density.py), the chapter title (titles.py), chapters split over pages
(parts.py), a page's links (links.py), the site's lines in the text (sitelines.py) and
site rules' selectors (selection.py); this module puts them together.

Pure (lxml only): a spider calls `extract(response.text, response.url)`, tests call it on
strings. Every step takes time linear in the page, whatever it holds (a megabyte of letters,
thousands of sibling tags): patterns bound their repeats, and tree walks visit each element
a bounded number of times (tests/crawler/test_extract_linear.py).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from urllib.parse import urldefrag

from pagetext.extraction import images, links, parts, titles
from pagetext.extraction.chapters import chapter_wrappers, may_hold_chapters
from pagetext.extraction.density import main_text
from pagetext.extraction.furniture import drop_controls, drop_counters, drop_footnotes, may_hold_notes
from pagetext.extraction.letters import CJK, LATIN
from pagetext.extraction.selection import compiled, select
from pagetext.extraction.sitelines import remove_site_lines
from pagetext.html import (
    NOT_XML_CHARS,
    XML_DECLARATION,
    _text_lengths,
    block_text,
    drop_comments,
    drop_hidden,
    html_to_text,
    parse_html,
    remove_furniture,
    strip_tags,
)

__all__ = ["KINDS", "Extracted", "Selectors", "extract", "is_chapter_text", "remove_site_lines"]

KINDS = ("chapter", "catalogue", "other")


@dataclass
class Extracted:
    """The parts of one page a crawler needs."""

    title: str  # chapter title, without the site suffix and the "(1/2)" part marker
    text: str  # main text, one paragraph per line, site furniture removed
    kind: str  # "chapter" | "catalogue" | "other"
    next_part: str | None = None  # absolute URL of the next part of a chapter split over pages
    part: tuple[int, int] | None = None  # (k, n) when the page says it is part k of n
    links: list[str] = field(default_factory=list)  # every http(s) <a href>, absolute, in order, once each
    chapter_links: list[str] = field(default_factory=list)  # the links that look like chapter links
    extractor: str = "none"  # "rules" | "density" | "trafilatura" | "lxml" | "regex" | "none"
    # (heading, text) of each chapter when the page holds two or more, each in its own wrapper
    # (a whole-work page); then `text` is all of them, one after another. Empty otherwise.
    chapters: list[tuple[str, str]] = field(default_factory=list)
    # The images the page shows a reader (its cover, illustrations; pagetext.extraction.images).
    images: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Selectors:
    """Per-site rules: each a CSS selector, or XPath when it starts with "/" or "("; empty = automatic."""

    title: str = ""
    content: str = ""
    next_page: str = ""  # selects the <a> of the next part
    chapter_links: str = ""  # selects the <a> elements of chapter links on catalogue pages

    def __post_init__(self) -> None:
        # A typo in a site rule should fail when the rules are loaded, not once per page.
        for name in ("title", "content", "next_page", "chapter_links"):
            sel = getattr(self, name)
            if sel:
                try:
                    compiled(sel)
                except ValueError as e:
                    raise ValueError(f"Selectors.{name}: {e}") from None


# ----------------------------------------------------------------------------- public API


def is_chapter_text(text: str) -> bool:
    """Tell whether `text` has enough prose for a chapter: ≥ 200 CJK characters or ≥ 1200 Latin letters."""
    head = text[:4000]  # enough for either count on any real chapter; the rest only when needed
    if len(CJK.findall(head)) >= 200 or len(LATIN.findall(head)) >= 1200:
        return True
    return len(text) > len(head) and (len(CJK.findall(text)) >= 200 or len(LATIN.findall(text)) >= 1200)


def extract(html: str, url: str, selectors: Selectors | None = None, css: str = "") -> Extracted:
    """Extract the title, main text, kind, links and part structure of one HTML page.

    Never raises on bad markup: broken HTML is repaired by lxml, markup lxml refuses is
    stripped of its tags, and an empty page is kind "other" with no text.
    """
    html = XML_DECLARATION.sub("", html or "", count=1)  # lxml refuses str input that declares an encoding
    html = NOT_XML_CHARS.sub("", html)  # lxml parses them but refuses them when text is moved around
    if not html.strip():
        return Extracted("", "", "other")
    tree = parse_html(html)
    if tree is None:
        text = remove_site_lines(strip_tags(html))
        return Extracted("", text, "chapter" if is_chapter_text(text) else "other", extractor="regex")
    # Text after a comment ("line1<!-- ad -->line2") is a comment's tail, which block text walks skip.
    drop_comments(tree)
    # What the page's CSS hides is junk for the reader (and its hidden links are traps): gone before anything is read.
    drop_hidden(tree, css)
    body = tree.find(".//body")
    content_root = body if body is not None else tree
    # Translators' note boxes and per-paragraph comment counters sit inside the chapter's own
    # block, where density cannot tell them apart: gone by their shape before it looks. A site
    # rule's content selector may name a "note" element itself: the operator's word wins.
    rules = selectors or Selectors()
    notes = not rules.content and may_hold_notes(content_root)
    several = not rules.content and may_hold_chapters(content_root)
    # One count of text lengths serves both passes (the chapters' thresholds do not need the notes gone).
    lengths = _text_lengths(content_root) if notes or several else None
    if notes:
        drop_footnotes(content_root, lengths)
    drop_counters(content_root)
    drop_controls(content_root)  # font-size and colour buttons beside the chapter's loose text
    here = urldefrag(url or "")[0]
    base = links.base_url(tree, here)
    anchors = links.anchors(tree, base)
    page_links = links.unique(u for u, _ in anchors)
    chapter_links = links.chapter_links(tree, base, anchors, rules.chapter_links)
    pictures = images.page_images(tree, base)
    page_title, headings = titles.page_title(tree), titles.headings(tree)
    title = titles.chapter_title(tree, rules.title, page_title, headings)
    link_share = links.link_share(tree)
    selected_next = [links.absolute(links.href_of(i), base) for i in select(tree, rules.next_page)]
    chapters = _chapters(content_root, lengths) if several else []  # before main_text changes the tree
    raw, extractor = main_text(tree, html, rules.content)  # removes the site furniture from `tree`
    part = parts.part(page_title, headings, raw)
    # The heading the site repeats at the top of the block is the title's, not the chapter's text.
    text = titles.without_heading_lines(remove_site_lines(raw), title, page_title)
    if chapters:
        text = "\n".join(t for _, t in chapters)
    if not text and extractor not in ("trafilatura", "lxml"):
        fallback, meta = html_to_text(html)
        text, extractor = remove_site_lines(fallback), meta["extractor"]
    next_part = parts.next_part(here, anchors, selected_next, part, bool(parts.UNFINISHED.search(raw)))
    if len(chapter_links) >= 5 and link_share >= 0.5:
        kind = "catalogue"
    elif is_chapter_text(text):
        kind = "chapter"
    else:
        kind = "other"
    return Extracted(title, text, kind, next_part, part, page_links, chapter_links, extractor, chapters, pictures)


def _chapters(root, lengths) -> list[tuple[str, str]]:
    """(heading, text) of each chapter of a whole-work page; [] for a page of one chapter."""
    out = []
    for heading, wrapper in chapter_wrappers(root, lengths):
        # A copy has no parent, so the furniture pass reads the wrapper alone and leaves the page as it is.
        lines = remove_site_lines(block_text(remove_furniture(copy.deepcopy(wrapper)))).split("\n")
        if lines and " ".join(lines[0].split()) == heading:
            lines = lines[1:]
        text = "\n".join(lines).strip()
        if text:
            out.append((heading, text))
    return out if len(out) >= 2 else []

