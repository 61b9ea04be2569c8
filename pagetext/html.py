"""The main text of a web page, without the site around it.

Reposted chapters live inside pages full of navigation, ads and "上一章/下一章"
links; fingerprinting all of that would make every page of one site look
alike. trafilatura finds the main text of article-like pages well, but novel
sites often put a whole chapter in one <div id="content"> with <br> line breaks,
where it can return little or nothing, so an lxml-based extraction that keeps
those line breaks backs it up.
"""
from __future__ import annotations

import copy
import logging
import re

__all__ = [
    "looks_like_html", "html_to_text", "parse_html", "drop_hidden", "remove_furniture", "drop_comments", "block_text",
    "strip_tags", "tidy",
]

_STRONG_MARKERS = re.compile(r"<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<meta\s", re.I)
_KNOWN_TAG = re.compile(
    r"</?(?:p|div|br|span|a|table|tr|td|li|ul|ol|h[1-6]|title|script|style|article|section|font|b|i|em|strong)\b[^<>]*>",
    re.I,
)
XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
# Code points lxml parses but refuses when text is moved between nodes (controls,
# surrogates, the non-characters U+FFFE and U+FFFF): dropped before parsing.
NOT_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")

# Elements that never hold a page's main text.
DROP_TAGS = (
    "script", "style", "noscript", "template", "head", "nav", "header", "footer", "aside", "form",
    "iframe", "object", "embed", "svg", "canvas", "button", "select", "input", "textarea", "label",
    "menu", "dialog",
)
# id/class words (split on - _ and spaces) of site furniture; whole words only, so
# "read-content" or "header-less" wording inside a name does not remove the chapter.
BOILERPLATE_WORDS = frozenset(
    "nav navbar navigation menu topbar footer header sidebar breadcrumb breadcrumbs crumbs ad ads advert "
    "adsbygoogle advertisement banner comment comments share social copyright pagination pager "
    "related recommend popup modal cookie login toolbar".split()
)
BLOCK_TAGS = frozenset(
    "address article aside blockquote body dd details div dl dt fieldset figcaption figure h1 h2 h3 h4 h5 h6 "
    "hr html li main ol p pre section summary table tbody td tfoot th thead tr ul center".split()
)
_MIN_TRAFILATURA_SHARE = 0.5  # below this share of the fallback's text, trafilatura missed the chapter

log = logging.getLogger(__name__)


def looks_like_html(text: str) -> bool:
    """True when the start of `text` is HTML markup rather than prose.

    A doctype/<html>/<head>/<body>/<meta> tag is enough; otherwise three or
    more common tags are needed, so a novel quoting «<<书名>>» or a single
    "<b>" in plain text stays plain text.
    """
    head = text[:8192]
    if _STRONG_MARKERS.search(head):
        return True
    return len(_KNOWN_TAG.findall(head)) >= 3 and head.lstrip().startswith("<")


def html_to_text(html: str) -> tuple[str, dict]:
    """Main text of an HTML page (navigation, scripts, styles, footers, ads removed), paragraphs
    separated by newlines; meta has 'title'.

    meta also has 'extractor': "trafilatura" or "lxml", saying which one produced the text.
    Broken markup is tolerated; markup lxml cannot parse at all is stripped of tags instead.
    """
    html = XML_DECLARATION.sub("", html, count=1)  # lxml refuses str input that declares an encoding
    html = NOT_XML_CHARS.sub("", html)
    if not html.strip():
        return "", {"title": "", "extractor": "lxml"}
    tree = parse_html(html)
    if tree is None:
        return strip_tags(html), {"title": "", "extractor": "regex"}
    drop_hidden(tree)
    title = _title(tree)
    root = remove_furniture(tree)
    fallback = block_text(root)
    main = _trafilatura_text(copy.deepcopy(tree)) if fallback else ""
    if main and _visible_len(main) >= _MIN_TRAFILATURA_SHARE * _visible_len(fallback):
        return main, {"title": title, "extractor": "trafilatura"}
    return fallback, {"title": title, "extractor": "lxml"}


def parse_html(html: str):
    from lxml import etree
    from lxml import html as lxml_html

    try:
        tree = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        try:  # e.g. a fragment without any element lxml accepts as a document
            tree = lxml_html.fragment_fromstring(html, create_parent="div")
        except (etree.ParserError, ValueError):
            return None
    return tree


def drop_hidden(tree, css: str = "") -> None:
    """Remove the text the page's own CSS hides from a reader (pagetext.visibility): elements
    with display:none go with all they hold, elements hidden by visibility or a zero font-size
    lose their own text, and what follows a removed element stays, in time linear in the page.
    `css`: the page's external stylesheets, when the caller has them."""
    from pagetext.visibility import hidden_parts

    gone, muted = hidden_parts(tree, css)
    for el in muted:
        el.text = None
        for child in el:  # a child's tail is its parent's text
            child.tail = None
    # An emptied element without children is gone too: trafilatura breaks lines around empty inline tags.
    _remove_keeping_tails([*gone, *(el for el in muted if len(el) == 0)])


def _title(tree) -> str:
    for path in (".//title", ".//meta[@property='og:title']", ".//h1"):
        el = tree.find(path)
        if el is None:
            continue
        text = el.get("content") if el.tag == "meta" else el.text_content()
        text = " ".join((text or "").split())
        if text:
            return text
    return ""


_trafilatura: list = []  # [module or None], filled on first use


def trafilatura_available() -> bool:
    """Import trafilatura once; when it cannot be imported, say so once, loudly, and why."""
    if not _trafilatura:
        try:
            import trafilatura
        except ImportError as e:  # e.g. lxml 5.2+ without lxml_html_clean, a declared dependency
            log.warning("trafilatura cannot be imported (%s): HTML pages are read by the lxml extraction alone. "
                        "Reinstall fptrack's dependencies (scripts/bootstrap, or pip install fptrack) to fix it.", e)
            trafilatura = None
        _trafilatura.append(trafilatura)
    return _trafilatura[0] is not None


def _trafilatura_text(tree) -> str:
    """trafilatura on the page after remove_furniture: it can only narrow the text further."""
    if not trafilatura_available():
        return ""
    trafilatura = _trafilatura[0]
    try:
        text = trafilatura.extract(
            tree, favor_recall=True, include_comments=False, include_tables=True, deduplicate=False
        )
    except Exception as e:  # a third-party heuristic must not turn a bad page into a traceback
        log.debug("trafilatura failed (%s); using the lxml extraction", e)
        return ""
    return tidy(text or "")


def remove_furniture(tree):
    """Drop scripts, styles, navigation, headers, footers, ads and link lists; return the body.

    Linear in the size of the page: text lengths are counted once, bottom up, and each
    parent's text is joined once after its furniture is gone (see _remove_keeping_tails).
    """

    body = tree.find(".//body")
    root = body if body is not None else tree
    drop_comments(root)
    _remove_keeping_tails(_outermost(root, lambda el: el.tag in DROP_TAGS))
    text_len, link_len = _text_lengths(root)

    def furniture(el) -> bool:
        words = re.split(r"[\s_\-]+", f"{el.get('id', '')} {el.get('class', '')}".lower())
        return bool(BOILERPLATE_WORDS.intersection(words)) or _link_list(el, text_len, link_len)

    # A block is judged on its whole subtree as the page has it; dropping another block
    # changes no other block's subtree, so judging all first and dropping after is the same
    # as dropping as one goes. The root itself leaves the page but is still what the caller reads.
    drop_root = root.getparent() is not None and furniture(root)
    _remove_keeping_tails(_outermost(root, furniture, below=True))
    if drop_root:
        root.drop_tree()
    return root


def drop_comments(root) -> None:
    """Remove the comments and processing instructions under `root`, keeping the text after
    each: "line1<!-- ad -->line2" reads "line1line2", in time linear in the page.

    (lxml's strip_tags leaves the two halves as adjacent text nodes, and reading such text
    back costs time quadratic in the number of nodes.)"""
    from lxml import etree

    _remove_keeping_tails(root.iter(etree.Comment, etree.ProcessingInstruction))


def _outermost(root, test, *, below: bool = False) -> list:
    """Elements under `root` (and `root` itself unless `below`) passing `test`, none inside another."""
    from lxml import etree

    found = []
    walk = etree.iterwalk(root, events=("start",))
    for _, el in walk:
        if isinstance(el.tag, str) and not (below and el is root) and test(el):
            found.append(el)
            walk.skip_subtree()
    return found


def _remove_keeping_tails(nodes) -> None:
    """Remove each node (with its subtree) but keep the text that follows it, as drop_tree does.

    drop_tree appends each tail to the previous sibling's tail: n dropped siblings copy that
    growing string n times. lxml's strip_elements leaves adjacent text nodes, which lxml
    reads back by repeated concatenation. Here each parent's text is joined once, so both
    cost time linear in the page."""
    by_parent: dict = {}
    for node in list(nodes):
        parent = node.getparent()
        if parent is not None:
            by_parent.setdefault(parent, set()).add(node)
    for parent, gone in by_parent.items():
        anchor, texts = None, [parent.text]
        for child in list(parent):
            if child in gone:
                texts.append(child.tail)
                parent.remove(child)  # the tail goes with it
                continue
            _join_text(parent, anchor, texts)
            anchor, texts = child, [child.tail]
        _join_text(parent, anchor, texts)


def _join_text(parent, anchor, texts: list) -> None:
    """Give `anchor`'s tail (or the parent's text, with no anchor) the texts of the nodes removed after it."""
    if not any(texts[1:]):
        return
    joined = "".join(t or "" for t in texts)
    if anchor is None:
        parent.text = joined
    else:
        anchor.tail = joined


def _text_lengths(root) -> tuple[dict, dict]:
    """For every element under `root`: the visible length of its text_content(), and the sum
    of that length over the <a> elements in it (itself included), as _link_list weighs them."""
    text_len: dict = {}
    link_len: dict = {}
    for el in reversed(list(root.iter())):  # reversed document order: children before parents
        own = _visible_len(el.text) if isinstance(el.tag, str) and el.text else 0
        links = 0
        for child in el:
            own += text_len[child] + (_visible_len(child.tail) if child.tail else 0)
            links += link_len[child]
        text_len[el] = own
        link_len[el] = links + (own if el.tag == "a" else 0)
    return text_len, link_len


def block_text(root) -> str:
    """All text under `root`, one line per block element or <br>."""
    from lxml import etree

    parts: list[str] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            if tag in BLOCK_TAGS or tag == "br":
                parts.append("\n")
            if tag and el.text:  # comments and processing instructions have no visible text
                parts.append(el.text)
        else:
            if tag in BLOCK_TAGS:
                parts.append("\n")
            if el.tail and el is not root:
                parts.append(el.tail)
    return tidy("".join(parts))


def _link_list(el, text_len: dict, link_len: dict) -> bool:
    """A block that is mostly links (chapter lists, "上一章 目录 下一章") is navigation."""
    if el.tag not in ("div", "ul", "ol", "p", "table", "td", "section", "dl"):
        return False
    text = text_len[el]
    if text == 0:
        return False
    return link_len[el] > 0.6 * text


def tidy(text: str) -> str:
    """Strip each line (ASCII, full-width and no-break spaces) and drop empty lines."""
    lines = (" ".join(line.split()) for line in text.replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def _visible_len(text: str) -> int:
    # Unrolled: called for every text node of every page, where a generator's overhead was most of the cost.
    return (len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\u3000")
            - text.count("\xa0"))


_SCRIPT_OPEN = re.compile(r"<(script|style)\b", re.I)
_SCRIPT_CLOSE = {tag: re.compile(rf"</{tag}\s*>", re.I) for tag in ("script", "style")}
_BREAK_TAG = re.compile(r"(?i)<br\s*/?>|</?(?:p|div|li|tr|h[1-6])\b[^>]*>")
_ANY_TAG = re.compile(r"<[^>]*>")


def strip_tags(html: str) -> str:
    """The text of markup lxml refused: scripts and styles dropped, tags removed, entities decoded."""
    import html as html_entities

    html = _without_scripts(html)
    html = _sub_up_to_last_gt(_BREAK_TAG, "\n", html)
    return tidy(html_entities.unescape(_sub_up_to_last_gt(_ANY_TAG, " ", html)))


def _sub_up_to_last_gt(pattern: re.Pattern, repl: str, html: str) -> str:
    """pattern.sub for a tag pattern ending in [^>]*>: only text up to the last ">" can match.

    On the rest, every "<" would scan to the end of the text and fail (a page of "<" with
    no ">" took quadratic time); up to the last ">", every scan that starts ends in a match
    and is consumed."""
    cut = html.rfind(">") + 1
    return pattern.sub(repl, html[:cut]) + html[cut:]


def _without_scripts(html: str) -> str:
    r"""re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", html) in linear time.

    The pattern rescans to the end of the text for every <script that is never closed; here
    a tag whose closing tag is missing once is known to be missing for every later opening."""
    out: list[str] = []
    done = at = 0
    unclosed: set[str] = set()
    while (m := _SCRIPT_OPEN.search(html, at)) is not None:
        tag = m.group(1).lower()
        close = None if tag in unclosed else _SCRIPT_CLOSE[tag].search(html, m.end())
        if close is None:
            unclosed.add(tag)
            at = m.end()
            continue
        out += (html[done : m.start()], " ")
        done = at = close.end()
    out.append(html[done:])
    return "".join(out)
