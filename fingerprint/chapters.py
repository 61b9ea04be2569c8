"""Split a whole novel into chapters.

Recognised headings, at the start of a line:

* ``第X章`` / ``第X回`` / ``第X节`` / ``第X卷`` (and 節), where X is a Chinese numeral
  (``一百二十``, ``一零一``, ``二十三``, ``〇``, ``两``), ASCII or full-width digits, optionally
  spaced out (``第　一　回``);
* the same with a short prefix: ``正文 第一回``, ``上卷 第一回``, ``《》目录 第一回``;
* ``Chapter 12`` / ``CHAPTER IV``.

A table of contents lists the headings once before the body. A heading whose body (the text
up to the next heading) is short is a table-of-contents entry (or a bare volume line), not a
chapter; when a number occurs again later with a long body, the later occurrence is the
chapter. A heading repeated right inside its own chapter is ignored. Text before the first
chapter becomes a preamble chapter (number ``None``) only if it has enough text of its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fingerprint.errors import InputError, ParameterError

__all__ = ["Chapter", "split_chapters", "chinese_numeral", "roman_numeral", "parse_number"]

_DIGITS = {
    "零": 0, "〇": 0, "○": 0, "Ｏ": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "貳": 2, "两": 2, "兩": 2,
    "三": 3, "叁": 3, "參": 3, "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "陸": 6,
    "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}
_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_BIG_UNITS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}
_NUM_CHARS = "".join(_DIGITS) + "".join(_UNITS) + "".join(_BIG_UNITS)


def chinese_numeral(s: str) -> int:
    """The value of a Chinese numeral.

    Both the counting form (``一百二十`` = 120, ``一百零八`` = 108, ``十五`` = 15) and the
    digit-by-digit form (``一零一`` = 101, ``一二零`` = 120) are accepted, as are ASCII and
    full-width digits. A trailing digit after a unit is read in the book-heading way, so
    ``一百八`` is 108 (as in ``第一百八回``).

    >>> chinese_numeral("一百二十"), chinese_numeral("一零一"), chinese_numeral("两")
    (120, 101, 2)
    """
    if not isinstance(s, str):
        raise InputError(f"a Chinese numeral must be a string, got {type(s).__name__}")
    t = re.sub(r"\s+", "", s)
    if not t:
        raise InputError("empty numeral: expected Chinese numerals or digits, e.g. '二十三' or '23'")
    if t.isdigit():
        return int(t)
    bad = [c for c in t if c not in _NUM_CHARS]
    if bad:
        raise InputError(f"not a Chinese numeral: {s!r} (unexpected {bad[0]!r})")
    if not any(c in _UNITS or c in _BIG_UNITS for c in t):
        # Digit by digit: 一零一 = 101.
        value = 0
        for c in t:
            value = value * 10 + _DIGITS[c]
        return value
    total = 0  # sum of completed big-unit groups
    section = 0  # value below the current big unit
    digit: int | None = None
    for c in t:
        if c in _DIGITS:
            digit = _DIGITS[c]
        elif c in _UNITS:
            section += (1 if digit is None else digit) * _UNITS[c]
            digit = None
        else:
            section += digit or 0
            total += (section or 1) * _BIG_UNITS[c]
            section, digit = 0, None
    if digit is not None:
        section += digit
    return total + section


_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_numeral(s: str) -> int:
    """The value of a Roman numeral (``IV`` = 4, ``lxi`` = 61)."""
    t = s.strip().upper()
    if not t or any(c not in _ROMAN for c in t):
        raise InputError(f"not a Roman numeral: {s!r}")
    total = 0
    for i, c in enumerate(t):
        v = _ROMAN[c]
        if i + 1 < len(t) and _ROMAN[t[i + 1]] > v:
            total -= v
        else:
            total += v
    return total


def parse_number(s: str) -> int:
    """A heading number in any supported form: digits, Chinese or Roman numerals."""
    t = re.sub(r"\s+", "", s)
    if t.isdigit():
        return int(t)
    if t and all(c.upper() in _ROMAN for c in t):
        return roman_numeral(t)
    return chinese_numeral(t)


@dataclass
class Chapter:
    """One chapter: ``text`` is ``source[start:end]`` (heading included); ``body_start`` is
    where the text after the heading line begins, as an offset in the source."""

    number: int | None  # None for the preamble
    title: str  # the heading line without the number (or "" for the preamble)
    start: int
    end: int
    text: str
    body_start: int = -1
    heading: str = ""  # the whole heading line, stripped

    def __post_init__(self) -> None:
        if self.body_start < 0:
            self.body_start = self.start

    @property
    def body(self) -> str:
        """The chapter without its heading line."""
        return self.text[self.body_start - self.start :]


_SP = r"[ \t\u3000\u00a0]"
_NUM = rf"(?:[{_NUM_CHARS}0-9０-９]{_SP}*)+"
_PREFIX = (
    r"(?:正文|《[^》\n]{0,40}》" + _SP + r"*目[录錄]|目[录錄]|[上中下前后後续續]" + r"[卷部集篇]"
    + r"|卷" + _NUM + r"|[^\s，。！？；：、“”「」『』\"'（）()]{1,10}(?=" + _SP + r"))"
)
_ZH_HEADING = re.compile(
    rf"^{_SP}*(?:{_PREFIX}{_SP}*)?(第{_SP}*({_NUM}){_SP}*([章回节節卷]))(.*)$"
)
_EN_HEADING = re.compile(
    r"^[ \t\u3000]*(?:chapter|CHAPTER|Chapter)[ \t]+([0-9]+|[IVXLCDMivxlcdm]+)\b[.:]?(.*)$"
)
# Characters that mark running prose: a heading glued to its title does not contain them.
_PROSE = re.compile(r"[，。！？；：,.!?;:“”「」\"…—]")
# A heading glued to the next word (no space) is only accepted on a short line without prose.
_GLUED_MAX = 40
# Longer heading lines are a heading run together with the first paragraph.
_LONG_HEADING = 60


@dataclass
class _Cand:
    line_start: int
    line_end: int  # offset just past the heading line (before its newline)
    number: int
    unit: str
    title: str
    heading: str
    body_start: int
    body_len: int = 0


def _match_heading(line: str) -> tuple[int, str, str, int] | None:
    """(number, unit, title, offset in the line where the body starts) or None."""
    m = _ZH_HEADING.match(line)
    if m:
        rest = m.group(4)
        if rest and not rest[0].isspace() and rest[0] not in "：:、.．":
            # Glued to its title ("第一回宴桃园…"): accept only a short, prose-free line.
            if len(line.strip()) > _GLUED_MAX or _PROSE.search(rest):
                return None
        try:
            number = chinese_numeral(m.group(2))
        except InputError:
            return None
        unit = m.group(3)
        body_at = len(line)
        title = rest.strip(" \t\u3000:：、.．")
        if len(line.strip()) > _LONG_HEADING or _PROSE.search(rest):
            # Heading and first paragraph on one line: keep the two title halves, body after.
            # A chapter title is a couplet of two equal halves; the body follows the second.
            parts = re.split(rf"{_SP}+", title, maxsplit=2)
            if len(parts) >= 2 and len(parts[0]) <= 20 and len(parts[1]) > len(parts[0]):
                second = parts[1][: len(parts[0])]
                title = f"{parts[0]} {second}"
                body_at = line.index(parts[1], m.start(4)) + len(second)
            elif len(parts) == 3:
                title = f"{parts[0]} {parts[1]}"
                body_at = line.index(parts[2], m.start(4))
            else:
                title = title[:30]
        else:
            title = re.sub(rf"{_SP}+", " ", title)
        return number, unit, title, body_at
    m = _EN_HEADING.match(line)
    if m:
        rest = m.group(2)
        if len(line.strip()) > _LONG_HEADING:
            return None
        try:
            number = parse_number(m.group(1))
        except InputError:
            return None
        return number, "chapter", rest.strip(" \t.:-—"), len(line)
    return None


def _visible_len(s: str) -> int:
    return len(s) - sum(1 for c in s if c.isspace())


def split_chapters(
    text: str, *, min_body: int = 100, min_preamble: int = 200
) -> list[Chapter]:
    """Split `text` into chapters, in order; see the module docstring for the rules.

    `min_body` is the number of visible characters below which a heading's body is
    considered empty (a table-of-contents entry); `min_preamble` the size the text before the
    first chapter must have, without any table-of-contents lines, to be kept as a preamble.
    A text with no heading at all is returned as one chapter with number None.
    """
    if not isinstance(text, str):
        raise InputError(f"split_chapters needs a str, got {type(text).__name__}; decode the file first")
    if min_body < 0 or min_preamble < 0:
        raise ParameterError("min_body and min_preamble must be >= 0")
    if not text.strip():
        return []

    cands: list[_Cand] = []
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        hit = _match_heading(line.rstrip("\r")) if len(line) < 400 else None
        if hit:
            number, unit, title, body_at = hit
            cands.append(_Cand(pos, end, number, unit, title, line.strip(), pos + body_at))
        pos = end + 1
    if not cands:
        return [Chapter(None, "", 0, len(text), text, 0, "")]

    for i, c in enumerate(cands):
        nxt = cands[i + 1].line_start if i + 1 < len(cands) else len(text)
        c.body_len = _visible_len(text[c.body_start : nxt])

    # 1. Table-of-contents entries and bare volume lines: a body too short to be a chapter.
    short = [c.body_len < min_body for c in cands]
    # 2. The last entry of a table of contents has the text up to the first chapter as its
    #    body; it is recognisable as following a short entry, with its number coming again.
    last_at: dict[tuple[str, int], int] = {}
    for i, c in enumerate(cands):
        if not short[i]:
            last_at[(c.unit, c.number)] = i
    kept2: list[_Cand] = []
    for i, c in enumerate(cands):
        if short[i]:
            continue
        if i > 0 and short[i - 1] and last_at[(c.unit, c.number)] > i:
            continue
        kept2.append(c)
    # 3. A heading repeated inside its own chapter (same number as the chapter just started).
    chapters_c: list[_Cand] = []
    for c in kept2:
        if chapters_c and chapters_c[-1].unit == c.unit and chapters_c[-1].number == c.number:
            continue
        chapters_c.append(c)
    # 4. Mixed units: 卷 lines that survive next to 章/回 chapters are volume intros; they
    #    stay as chapters only when 卷 is the sole unit (a story collection).
    units = {c.unit for c in chapters_c}
    if len(units) > 1 and "卷" in units:
        chapters_c = [c for c in chapters_c if c.unit != "卷"] or chapters_c

    if not chapters_c:
        # Headings only (a bare table of contents) or chapters all shorter than min_body.
        return [Chapter(None, "", 0, len(text), text, 0, "")]
    out: list[Chapter] = []
    first = chapters_c[0].line_start
    pre = text[:first]
    toc_lines = sum(_visible_len(text[c.line_start : c.line_end]) for c in cands if c.line_start < first)
    if _visible_len(pre) - toc_lines >= min_preamble:
        out.append(Chapter(None, "", 0, first, pre, 0, ""))
    for i, c in enumerate(chapters_c):
        end = chapters_c[i + 1].line_start if i + 1 < len(chapters_c) else len(text)
        out.append(
            Chapter(c.number, c.title, c.line_start, end, text[c.line_start : end], c.body_start, c.heading)
        )
    return out
