"""What a crawled page holds: its chapter title, main text, kind, links, and where its next part is.

Novel sites put a chapter in one <div id="content"> with <br> line breaks, article sites in
<p>s under an <article>; both are found by text density (visible text per block, less the
text of links), after fingerprint.html has removed scripts, navigation, ads and link lists.
Lines that sites inject into the chapter itself (watermarks, "本章未完，请点击下一页继续阅读",
domain names) are then dropped line by line, or sentence by sentence when a site glued them
to a real paragraph, so a prose line that merely contains a word like 阅读 stays. Text the
page's own CSS hides (junk characters in display:none spans and the like) is removed first,
by fingerprint.html.drop_hidden, as simtool does on files.

Real sites need rules that no list of sites or phrases keeps up with; crawler.extraction holds
them, each judged by shape: per-paragraph comment counters and translators' note boxes leave
the tree before density looks (furniture.py); calls to action, load banners, note lines,
addresses on any top-level domain and lines a page repeats leave the text (lines.py); and a
page that holds a whole work gives each chapter (chapters.py, Extracted.chapters).

Pure (lxml only): a spider calls `extract(response.text, response.url)`, tests call it on
strings. Every step takes time linear in the page, whatever it holds (a megabyte of letters,
thousands of sibling tags): patterns bound their repeats, and tree walks visit each element
a bounded number of times (tests/crawler/test_extract_linear.py).
"""
from __future__ import annotations

import copy
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import parse_qsl, urldefrag, urljoin, urlsplit

from crawler.extraction.chapters import chapter_wrappers, may_hold_chapters
from crawler.extraction.furniture import drop_counters, drop_footnotes, may_hold_notes
from crawler.extraction.lines import footnote_marks, has_site_address, is_site_line, recurring, without_marks
from fingerprint.html import (
    BLOCK_TAGS,
    BOILERPLATE_WORDS,
    DROP_TAGS,
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
    tidy,
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
                    _compiled(sel)
                except ValueError as e:
                    raise ValueError(f"Selectors.{name}: {e}") from None


# ----------------------------------------------------------------------------- patterns

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_NUMERAL = "0-9０-９零〇○一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟"
_CHAPTER_HEADING = re.compile(
    rf"第\s*[{_NUMERAL}]+\s*[章回节節卷]|^\s*chapter\s+(?:\d+|[ivxlcdm]+)\b", re.I
)
_NEXT_PAGE_TEXT = re.compile(r"下一?[页頁]|next\s*page", re.I)
_NEXT_CHAPTER_TEXT = re.compile(r"[下后後]一?[章回节節]|next\s*chapter", re.I)
_CATALOGUE_TEXT = re.compile(r"目[录錄]|章节列表|返回书页|index|contents", re.I)
_UNFINISHED = re.compile(r"本章未完|点击下一页|下一页继续")
# "(1/2)", "（2/3）", "【1/2】", "第1/3页"; a bare "1/3" only where a short heading or line ends with it.
_PART_MARK = re.compile(r"[（(【\[]\s*(\d{1,3})\s*/\s*(\d{1,3})\s*[)）】\]]|第\s*(\d{1,3})\s*/\s*(\d{1,3})\s*[页頁]")
_BARE_PART = re.compile(r"(?<![\d/.])(\d{1,2})\s*/\s*(\d{1,2})\s*$")
_PART_SUFFIX = re.compile(r"(.+?)[_-](\d{1,2})")  # "2_3" -> chapter "2", part 3
_PAGE_PARAMS = ("page", "p", "pn", "pg", "pageno", "part")
_TITLE_SEPARATORS = re.compile(r"[_|｜—–-]")  # the segments are stripped: no \s* to rescan runs of spaces
# Site words a title segment ends with, stripped one at a time from the end (a pattern
# (?:...)+$ rescans to the end from each start: quadratic on a title of repeated words).
_TITLE_NOISE_WORDS = ("最新章节", "全文阅读", "在线阅读", "免费阅读", "无弹窗", "txt下载")
_TITLE_NOISE_WORD = re.compile("|".join(_TITLE_NOISE_WORDS), re.I)
_TITLE_NOISE_LENGTHS = sorted({len(w) for w in _TITLE_NOISE_WORDS})

# Phrases sites inject into chapters; a sentence holding one is never the author's.
_STRONG = re.compile(
    r"本章未完|点击下一页继续|一秒记住|记住本站|本站地址|本站网址|阅读网址|首发域名|最新章节请|最快更新|更新最快|"
    r"手机用户请|手机版阅读|手机阅读请|请收藏本站|小说网首发|本书首发|首[发發](?:于|於|自|地址|网站)|无弹窗|"
    r"求收藏|求推荐票|求月票|投推荐票|加入书签|章节错误|点此举报|按\s*回车|本站所有小说|所有章节均由网友上传|"
    r"All\s+Rights\s+Reserved|Copyright\s*(?:©|\(c\)|\d{4})|百度搜索.{0,20}?(?:小说网|阁)",
    re.I,
)
# Words that mark a short line as site furniture; a long prose line may use them.
_WEAK = re.compile(
    r"最新章节|手机阅读|首发|本站|小说网|书友群|全文阅读|免费阅读|在线阅读|转载|请访问|txt下载|全本小说|笔趣阁|顶点小说",
    re.I,
)
_WEAK_MAX_LEN = 40
# Labels of at most 63 characters (the DNS limit), at most 8 of them, a path of at most
# 2,048: unbounded, every start in a long run of letters (or of "a.a.a") rescanned the rest
# of the run, and a 300 kB page took a quarter of an hour; bounded, each start costs a
# constant. A domain starts after its scheme or where no letter or digit precedes it (where
# one does, the match starting there would have started earlier), so the positions inside a
# run of letters cost one look back each.
_DOMAIN = re.compile(
    r"(?:https?://|(?<![a-z0-9]))[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){0,6}"
    r"\.(?:com|net|org|cn|cc|la|me|info|co|tv|io|top|xyz|vip|tw|hk|us|in|so|biz|site|club|wang)(?![a-z0-9-])"
    r"(?:/[A-Za-z0-9_./?=&%-]{0,2048})?",
    re.I,
)
# A bracketed watermark: an opening bracket, up to 30 characters, a domain, up to 30, the
# closing bracket, with no bracket or line break inside (see _without_bracketed_domains).
_BRACKET = re.compile(r"[（()）【】\[\]\n]")
_OPENING, _CLOSING = "（(【[", "）)】]"
_BRACKETED_SLACK = 30
_DOMAIN_RESIDUE_MIN = 20  # a sentence with a domain and fewer letters of its own is a watermark
_PARAGRAPH_MAX = 600  # visible characters: longer blocks without <br> are not one paragraph among many
_NAV_TOKEN = re.compile(
    r"上一[章页頁回节]|下一[章页頁回节]|(?:返回|回到)?(?:章节)?目[录錄]|返回书页|返回列表|加入书签|投推荐票|"
    r"(?:回到|返回)顶部|首页|书架"
)
_NAV_FILLER = re.compile(r"[\s←→<>«»|｜\-–—·:：\[\]【】()（）]")
_MARKER_LINE = re.compile(
    r"[（(【\[]?\s*(?:第\s*)?\d{1,3}\s*/\s*\d{1,3}\s*[页頁]?\s*[)）】\]]?"
    r"|[（(]?\s*(?:本章完|全文完|未完待续)\s*[。.…]*\s*[)）]?"
)
# No leading \s*: the spaces before the mark are stripped after it goes, and a leading \s*
# would rescan a long run of spaces from each of its positions.
_TRAILING_MARK = re.compile(r"[（(]\s*(?:本章完|\d{1,3}\s*/\s*\d{1,3})\s*[)）]\s*$")
_SENTENCE_END = re.compile(r"(?<=[。！？!?])")
# A letter, a dot of any width (or 点), a letter: the shape any site address has. Spaces around
# the dot only count in CJK text, where they hide an address; in English they end a sentence.
_ADDRESS_HINT = re.compile(r"[A-Za-zＡ-Ｚａ-ｚ0-9０-９][.。．｡][A-Za-zＡ-Ｚａ-ｚ]")
_SPACED_ADDRESS_HINT = re.compile(r"[A-Za-zＡ-Ｚａ-ｚ0-9０-９]\s{0,3}[.。．｡点點]\s{0,3}[A-Za-zＡ-Ｚａ-ｚ]")
_LATIN_START = re.compile(r"\s{0,3}[A-Za-zＡ-Ｚａ-ｚ]")
_FULL_WIDTH_LETTER = re.compile(r"[ａ-ｚＡ-Ｚ０-９．]")  # a domain written in full-width letters needs NFKC to be seen


# ----------------------------------------------------------------------------- public API


def is_chapter_text(text: str) -> bool:
    """Tell whether `text` has enough prose for a chapter: ≥ 200 CJK characters or ≥ 1200 Latin letters."""
    head = text[:4000]  # enough for either count on any real chapter; the rest only when needed
    if len(_CJK.findall(head)) >= 200 or len(_LATIN.findall(head)) >= 1200:
        return True
    return len(text) > len(head) and (len(_CJK.findall(text)) >= 200 or len(_LATIN.findall(text)) >= 1200)


def extract(html: str, url: str, selectors: Selectors | None = None) -> Extracted:
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
    drop_hidden(tree)
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
    here = urldefrag(url or "")[0]
    base = _base_url(tree, here)
    anchors = _anchors(tree, base)
    links = _unique(u for u, _ in anchors)
    chapter_links = _chapter_links(tree, base, anchors, rules)
    page_title, headings = _page_title(tree), _headings(tree)
    title = _chapter_title(tree, rules, page_title, headings)
    link_share = _link_share(tree)
    selected_next = [_absolute(_href_of(i), base) for i in _select(tree, rules.next_page)]
    chapters = _chapters(content_root, lengths) if several else []  # before _main_text changes the tree
    raw, extractor = _main_text(tree, html, rules)  # removes the site furniture from `tree`
    part = _part(page_title, headings, raw)
    text = remove_site_lines(raw)
    if chapters:
        text = "\n".join(t for _, t in chapters)
    if not text and extractor not in ("trafilatura", "lxml"):
        fallback, meta = html_to_text(html)
        text, extractor = remove_site_lines(fallback), meta["extractor"]
    next_part = _next_part(here, anchors, selected_next, part, bool(_UNFINISHED.search(raw)))
    if len(chapter_links) >= 5 and link_share >= 0.5:
        kind = "catalogue"
    elif is_chapter_text(text):
        kind = "chapter"
    else:
        kind = "other"
    return Extracted(title, text, kind, next_part, part, links, chapter_links, extractor, chapters)


def remove_site_lines(text: str) -> str:
    """Drop the lines (or sentences of a line) that a pirate site adds to a chapter's text."""
    lines = [line.strip() for line in text.split("\n")]
    repeated = recurring(lines)  # a slogan the site puts between paragraphs, whatever it says
    notes, marks = footnote_marks(lines)  # "[1] ..." note lines referenced by "[1]" in the prose
    out = []
    for i, line in enumerate(lines):
        if line in repeated or i in notes:
            continue
        if marks:
            line = without_marks(line, marks)
        line = _clean_line(line)
        if line:
            out.append(line)
    return "\n".join(out)


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


# ----------------------------------------------------------------------------- selectors


@lru_cache(maxsize=256)
def _compiled(sel: str):
    from lxml import etree

    try:
        if sel.lstrip().startswith(("/", "(")):
            return etree.XPath(sel)
        from lxml.cssselect import CSSSelector

        return CSSSelector(sel, translator="html")
    except Exception as e:  # cssselect and lxml each have their own syntax error types
        raise ValueError(f"not a valid CSS selector or XPath: {sel!r} ({e})") from None


def _select(tree, sel: str) -> list:
    """Elements (or strings, for an XPath ending in text() or @attr) that `sel` picks."""
    if not sel:
        return []
    try:
        found = _compiled(sel)(tree)
    except Exception:  # e.g. an XPath that is valid but fails on this document
        return []
    if not isinstance(found, list):
        found = [found] if isinstance(found, str) and found.strip() else []
    return found


def _selected_text(item) -> str:
    return " ".join((item if isinstance(item, str) else item.text_content()).split())


# ----------------------------------------------------------------------------- links


def _base_url(tree, url: str) -> str:
    base = tree.find(".//base[@href]")
    if base is not None:
        try:
            return urljoin(url, base.get("href").strip())
        except ValueError:
            pass
    return url


def _absolute(href: str | None, base: str) -> str | None:
    href = re.sub(r"[\t\r\n]", "", href or "").strip()
    if not href or href.startswith("#"):  # a jump inside this page names nothing new to fetch
        return None
    try:
        u = urldefrag(urljoin(base, href))[0]
        parts = urlsplit(u)
    except ValueError:
        return None
    return u if parts.scheme in ("http", "https") and parts.netloc else None


def _anchors(tree, base: str) -> list[tuple[str, str]]:
    """(absolute URL, visible text) of every http(s) <a href>, in document order."""
    out = []
    for a in tree.iter("a"):
        u = _absolute(a.get("href"), base)
        if u:
            out.append((u, " ".join(a.text_content().split())))
    return out


def _unique(items) -> list[str]:
    return list(dict.fromkeys(items))


def _href_of(item) -> str | None:
    """The link a selector picked: an href string, an <a>, or the first <a> inside an element."""
    if isinstance(item, str):
        return item
    if not isinstance(getattr(item, "tag", None), str):
        return None
    a = item if item.get("href") is not None else item.find(".//a[@href]")
    return a.get("href") if a is not None else None


def _chapter_links(tree, base: str, anchors: list[tuple[str, str]], rules: Selectors) -> list[str]:
    if rules.chapter_links:
        found = _unique(u for u in (_absolute(_href_of(i), base) for i in _select(tree, rules.chapter_links)) if u)
        if found:
            return found
    return _unique(u for u, t in anchors if len(t) <= 60 and _CHAPTER_HEADING.search(t))


def _link_share(tree) -> float:
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
                n = _visible(el.text)
                total += n
                linked += n if in_link else 0
        else:
            skip -= opened.pop()
            in_link -= el.tag == "a"
            if not skip and el.tail and el is not root:
                n = _visible(el.tail)
                total += n
                linked += n if in_link else 0
    return linked / total if total else 0.0


def _is_furniture(el) -> bool:
    if el.tag in DROP_TAGS:
        return True
    words = re.split(r"[\s_\-]+", f"{el.get('id', '')} {el.get('class', '')}".lower())
    return bool(BOILERPLATE_WORDS.intersection(words))


# ----------------------------------------------------------------------------- title and parts


def _page_title(tree) -> str:
    el = tree.find(".//title")
    return " ".join((el.text_content() if el is not None else "").split())


def _headings(tree) -> list[str]:
    return [t for t in (" ".join(h.text_content().split()) for h in tree.iter("h1")) if t]


def _chapter_title(tree, rules: Selectors, page_title: str, headings: list[str]) -> str:
    title = ""
    if rules.title:
        title = next((t for t in map(_selected_text, _select(tree, rules.title)) if t), "")
    if not title:
        # The site logo is an <h1> on some sites: prefer one that reads as a chapter heading.
        title = next((h for h in headings if _CHAPTER_HEADING.search(h)), "")
        title = title or next((h for h in headings if h in page_title), "")
        title = title or _without_site_suffix(page_title) or (headings[0] if headings else "")
    title = _PART_MARK.sub("", title)
    title = _BARE_PART.sub("", title) if len(title) <= 60 else title
    return " ".join(title.split())


def _without_site_suffix(title: str) -> str:
    """"第一章 雨夜来客_山城旧事_笔趣阁" -> "第一章 雨夜来客"; the segment with a chapter heading wins."""
    segments = [s.strip() for s in _TITLE_SEPARATORS.split(title) if s.strip()]
    if not segments:
        return ""
    best = next((s for s in segments if _CHAPTER_HEADING.search(s)), segments[0])
    return _without_noise_words(best).strip() or best


def _without_noise_words(title: str) -> str:
    """`title` without the site words it ends with ("第一章 雨夜来客最新章节" -> "第一章 雨夜来客")."""
    end = len(title)
    while True:
        n = next((n for n in _TITLE_NOISE_LENGTHS if n <= end and _TITLE_NOISE_WORD.fullmatch(title, end - n, end)), 0)
        if not n:
            return title[:end]
        end -= n


def _part(page_title: str, headings: list[str], raw_text: str) -> tuple[int, int] | None:
    """(k, n) from "(1/2)" / "第1/3页" in the title or a heading, or a short line of the text."""
    short_lines = [line.strip() for line in raw_text.split("\n") if 0 < len(line.strip()) <= 30]
    for s in [page_title, *headings, *short_lines]:
        for m in _PART_MARK.finditer(s):
            k, n = (int(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
            if 1 <= k <= n and n >= 2:
                return k, n
    for s in [*headings, *short_lines]:
        m = _BARE_PART.search(s)
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


def _next_part(here: str, anchors, selected: list[str | None], part, unfinished: bool) -> str | None:
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


# ----------------------------------------------------------------------------- main text


def _main_text(tree, html: str, rules: Selectors) -> tuple[str, str]:
    """The page's main text (site lines still in it) and the name of the path that found it."""
    if rules.content:
        found = _select(tree, rules.content)
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
            hit = is_line_block(b) and (b.tag == "p" or _visible(b.text_content()) <= _PARAGRAPH_MAX)
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


# ----------------------------------------------------------------------------- site lines


def _visible(text: str) -> int:
    return len("".join(text.split()))


def _weight(text: str) -> float:
    """Visible characters, a non-ASCII (CJK) one counting twice an ASCII one (it carries about a word)."""
    visible = "".join(text.split())
    ascii_chars = len(visible.encode("ascii", "ignore"))
    return len(visible) - 0.5 * ascii_chars


def _is_marker_line(line: str) -> bool:
    """A line that is only pagination, "(本章完)", or a "上一章 目录 下一章" bar."""
    if len(line) > 80:  # such lines are short; this spares the patterns every paragraph
        return False
    if _MARKER_LINE.fullmatch(line):
        return True
    return bool(_NAV_TOKEN.search(line)) and not _NAV_FILLER.sub("", _NAV_TOKEN.sub("", line))


def _own_letters(sentence: str) -> int:
    """CJK characters and Latin letters of `sentence` outside domain names."""
    rest = _DOMAIN.sub("", unicodedata.normalize("NFKC", sentence))
    return len(_CJK.findall(rest)) + len(_LATIN.findall(rest))


def _clean_line(line: str) -> str:
    line = line.strip()
    if not line or _is_marker_line(line):
        return ""
    if _visible(line) <= _WEAK_MAX_LEN and _WEAK.search(line):
        return ""
    if is_site_line(line):  # calls to action, load banners, translator notes
        return ""
    wide = _FULL_WIDTH_LETTER.search(line)
    if not (_STRONG.search(line) or _DOMAIN.search(unicodedata.normalize("NFKC", line) if wide else line)
            or _ADDRESS_HINT.search(line) or (_CJK.search(line) and _SPACED_ADDRESS_HINT.search(line))):
        return _strip_trailing_mark(line)
    kept = []
    for sentence in _address_sentences(_SENTENCE_END.split(line)):
        if not sentence or _STRONG.search(sentence):
            continue
        # A bracketed domain is a watermark glued to a paragraph: "（笔趣阁 www.x.com）陈守义坐在…"
        sentence = _without_bracketed_domains(sentence)
        known = _DOMAIN.search(unicodedata.normalize("NFKC", sentence))
        if not known and has_site_address(sentence):  # an address on a domain the pattern does not know
            continue
        if known:
            if _own_letters(sentence) < _DOMAIN_RESIDUE_MIN:
                continue
            sentence = _DOMAIN.sub("", sentence)
        kept.append(sentence)
    return _strip_trailing_mark("".join(kept).strip())


def _address_sentences(sentences: list[str]) -> list[str]:
    """`sentences` with a sentence that ends in "。" joined to the next when Latin letters go on
    from the dot: "ｂｉｑｕｇｅ。ｘｙｚ" is one address written with a full-width dot, not two sentences."""
    groups: list[list[str]] = []  # joined once at the end: "a。a。a。…" must not grow a string per piece
    for s in sentences:
        if groups and groups[-1][-1].endswith("。") and _LATIN_START.match(s):
            groups[-1].append(s)
        else:
            groups.append([s])
    return ["".join(g) for g in groups]


def _without_bracketed_domains(text: str) -> str:
    """`text` without its bracketed watermarks: "（笔趣阁 www.x.com）" and the like.

    Nothing inside such a watermark is a bracket, so it runs from an opening bracket to the
    very next bracket, which must close it: each stretch between brackets is tested once,
    and only from its first 31 positions (as a single pattern with a lazy prefix, it was
    tried from each position of each stretch, against the whole stretch)."""
    marks = [m.start() for m in _BRACKET.finditer(text)]
    out: list[str] = []
    done = 0
    for i, j in zip(marks, marks[1:]):
        if text[i] in _OPENING and text[j] in _CLOSING and _holds_domain(text[i + 1 : j]):
            out.append(text[done:i])
            done = j + 1
    out.append(text[done:])
    return "".join(out)


def _holds_domain(inside: str) -> bool:
    """True when `inside` is up to 30 characters, a domain, then up to 30 characters.

    A domain's match reaches as far as any reading of it can (labels, then path, are
    greedy), so the furthest end tells whether the rest fits in the slack."""
    for start in range(min(_BRACKETED_SLACK, len(inside)) + 1):
        m = _DOMAIN.match(inside, start)
        if m and m.end() >= len(inside) - _BRACKETED_SLACK:
            return True
    return False


def _strip_trailing_mark(line: str) -> str:
    line = _TRAILING_MARK.sub("", line).strip() if line.endswith((")", "）")) else line
    return "" if not line or _is_marker_line(line) else line
