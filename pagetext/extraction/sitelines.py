"""Lines (or sentences of a line) that a pirate site adds to a chapter's text: watermarks,
pagination and navigation bars, injected phrases, domain names."""
from __future__ import annotations

import re
import unicodedata

from pagetext.extraction.letters import CJK, LATIN, visible
from pagetext.extraction.lines import (
    footnote_marks,
    has_site_address,
    is_banner,
    is_site_line,
    narrates,
    recurring,
    without_marks,
)

__all__ = ["remove_site_lines"]

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
_NAV_TOKEN = re.compile(
    r"上一[章页頁回节]|下一[章页頁回节]|(?:返回|回到)?(?:章节)?目[录錄]|返回书页|返回列表|加入书签|投推荐票|"
    r"(?:回到|返回)顶部|首页|书架|"
    r"\b(?:previous|prev|next)\s+(?:chapter|page)\b|\btable\s+of\s+contents\b|\bback\s+to\s+(?:the\s+)?(?:top|index)\b",
    re.I,
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
    return len(CJK.findall(rest)) + len(LATIN.findall(rest))


def _clean_line(line: str) -> str:
    line = line.strip()
    if not line or _is_marker_line(line):
        return ""
    if visible(line) <= _WEAK_MAX_LEN and _WEAK.search(line):
        return ""
    if is_site_line(line):  # calls to action, load banners, translator notes
        return ""
    line = _without_bracketed_banners(line)
    wide = _FULL_WIDTH_LETTER.search(line)
    if not (_STRONG.search(line) or _DOMAIN.search(unicodedata.normalize("NFKC", line) if wide else line)
            or _ADDRESS_HINT.search(line) or (CJK.search(line) and _SPACED_ADDRESS_HINT.search(line))):
        return _strip_trailing_mark(line)
    kept = []
    for sentence in _address_sentences(_SENTENCE_END.split(line)):
        if not sentence or _STRONG.search(sentence):
            continue
        # A site's own sentence with its address alone in brackets: "本文来自 轻小说文库(http://x.com)".
        own_address = _DOMAIN.search(unicodedata.normalize("NFKC", sentence))
        if own_address and _bracketed_alone(sentence, own_address) and _site_sentence(sentence, own_address):
            continue
        # A bracketed domain is a watermark glued to a paragraph: "（笔趣阁 www.x.com）陈守义坐在…"
        sentence = _without_bracketed_domains(sentence)
        known = _DOMAIN.search(unicodedata.normalize("NFKC", sentence))
        if not known and has_site_address(sentence):  # an address on a domain the pattern does not know
            continue
        if known:
            if _own_letters(sentence) < _DOMAIN_RESIDUE_MIN or _site_sentence(sentence, known):
                continue
            sentence = _DOMAIN.sub("", sentence)
        kept.append(sentence)
    return _strip_trailing_mark("".join(kept).strip())


_CLAUSE_MARK = re.compile(r"[\s，,、：:；;。！？!?（）()【】\[\]]")


def _bracketed_alone(sentence: str, address) -> bool:
    """True when `address` (a match in the NFKC form of `sentence`) is all its brackets hold."""
    text = unicodedata.normalize("NFKC", sentence)
    start, end = address.start(), address.end()
    return start > 0 and end < len(text) and text[start - 1] in "（(【[" and text[end] in "）)】]"


def _site_sentence(sentence: str, address) -> bool:
    """True for a short CJK sentence of the site's own that an address is a clause of.

    "手机站全新改版升级地址：m.x.la，数据和书签与电脑站同步，无广告清新阅读！": the address stands
    between marks, one clause among the site's, and the rest tells no story. An address glued
    to prose on either side ("…网www.x.com这个也来问那个也来寻…") is a watermark injected into
    the author's sentence: only the address goes, the sentence stays."""
    if not CJK.search(sentence) or narrates(sentence) or _own_letters(sentence) > _WEAK_MAX_LEN:
        return False
    text = unicodedata.normalize("NFKC", sentence)
    before, after = text[: address.start()], text[address.end():]
    return (not before.strip() or bool(_CLAUSE_MARK.match(before[-1]))) and \
        (not after.strip() or bool(_CLAUSE_MARK.match(after[0])))


# A bracketed stretch of up to 60 characters with no bracket inside: "（內容加載失敗！請重載或更換瀏覽器）".
_BRACKETED_STRETCH = re.compile(r"[（(【\[]([^（()）【】\[\]\n]{1,60})[）)】\]]")


def _without_bracketed_banners(line: str) -> str:
    """`line` without the load banners a site glued to a paragraph in brackets:
    "……擺設並不豪華。……（內容加載失敗！請重載或更換瀏覽器）" keeps its sentence."""
    if "（" not in line and "(" not in line and "【" not in line and "[" not in line:
        return line  # most lines: no bracket, nothing to read (a paragraph costs four substring scans)
    return _BRACKETED_STRETCH.sub(lambda m: "" if is_banner(m.group(1)) else m.group(), line).strip()


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
