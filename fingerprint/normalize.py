"""Normalise pirated text into units that survive the usual disguises.

A pirate page differs from the original by full-width letters, traditional
characters, zero-width and junk characters between characters, changed
punctuation and whitespace, site watermarks and ad lines. `normalize` maps the
raw text through one per-code-point table (NFKC, lower case, traditional to
simplified, punctuation and symbols dropped), removes watermark phrases, URLs
and ad lines, and returns the surviving units together with their offsets in
the raw text, so every later match can point back at the exact raw passage.

Units are grouped into tokens: each CJK character is one token; a run of
Latin letters or of digits (unbroken in the raw text) is one word token. A run
longer than LONG_WORD is no word but a blob (base64, a hex dump, minified code)
and is dropped, counted in `long_tokens`.

Every step is linear in the length of the text: the patterns below bound their
repeats, so a hostile page (a megabyte of letters with no space) costs what
any megabyte of text costs.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from fingerprint.cache import cached_arrays
from fingerprint.hashing import xxh64

# Unit kinds.
DROP, CJK, LATIN, DIGIT, OTHER, NEWLINE, PUNCT = range(7)

TABLE_SIZE = 0x32000  # through CJK Extension G; anything above is dropped
WORD_TAG = np.uint64(1 << 63)  # word tokens have the top bit set; characters are < 2**21

_CJK_RANGES = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2EBEF),
    (0x30000, 0x3134F),
)
# ASCII punctuation kept (as PUNCT) so that URL patterns can be found; dropped afterwards.
_URL_PUNCT = set("./:-_?=&%@~#")


def _is_cjk(cp: int) -> bool:
    return cp == 0x3007 or any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


@dataclass(frozen=True)
class _Tables:
    canon: np.ndarray  # uint32: canonical code point for each code point
    kind: np.ndarray  # uint8: unit kind for each code point


@lru_cache(maxsize=1)
def tables() -> _Tables:
    """The code point tables: from the disk cache, or built (about a second)."""

    depends = f"normalize-v1 unicode={unicodedata.unidata_version} opencc={_version('OpenCC')} ads={AD_PHRASES!r}"
    arrays = cached_arrays("normalize", depends, _build_tables)
    return _Tables(canon=arrays["canon"], kind=arrays["kind"])


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def _build_tables() -> dict[str, np.ndarray]:
    import opencc

    canon = np.zeros(TABLE_SIZE, dtype=np.uint32)
    kind = np.zeros(TABLE_SIZE, dtype=np.uint8)
    cjk: list[int] = []
    for cp in range(TABLE_SIZE):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if _is_cjk(cp):
            canon[cp] = cp
            kind[cp] = CJK
            cjk.append(cp)
            continue
        if ch == "\n":
            canon[cp], kind[cp] = cp, NEWLINE
            continue
        folded = unicodedata.normalize("NFKC", ch)
        folded = "".join(c for c in folded.lower() if not unicodedata.category(c).startswith("M"))
        if ch in "。．":  # ideographic and full-width full stops spell domains on pirate sites
            folded = "."
        if len(folded) != 1:
            # Expansions such as "㈠" -> "(一)" or "ﬁ" -> "fi": keep the first letter or digit.
            letters = [c for c in folded if c.isalnum()]
            if not letters:
                continue
            folded = letters[0]
        fcp = ord(folded)
        cat = unicodedata.category(folded)
        if _is_cjk(fcp):
            canon[cp], kind[cp] = fcp, CJK
            cjk.append(cp)
        elif "a" <= folded <= "z":
            canon[cp], kind[cp] = fcp, LATIN
        elif "0" <= folded <= "9":
            canon[cp], kind[cp] = fcp, DIGIT
        elif cat.startswith("L") or cat == "Co" or cat == "Nl":
            canon[cp], kind[cp] = fcp, OTHER
        elif folded in _URL_PUNCT:
            canon[cp], kind[cp] = fcp, PUNCT
    # Traditional -> simplified, character by character (one per line, so no phrase rules apply).
    conv = opencc.OpenCC("t2s")
    src = [chr(canon[cp]) for cp in cjk]
    out = conv.convert("\n".join(src)).split("\n")
    if len(out) == len(src):
        for cp, s in zip(cjk, out):
            if len(s) == 1 and _is_cjk(ord(s)):
                canon[cp] = ord(s)
    return {"canon": canon, "kind": kind}


# Watermarks, ad and navigation phrases of pirate sites, matched on the canonical
# text (no punctuation, lower case) so junk between their characters does not hide them.
AD_PHRASES = (
    "天才一秒记住", "一秒记住", "记住本站", "本站地址", "本站网址", "本站域名", "首发域名", "请记住本书",
    "最快更新", "最新章节", "无弹窗", "无广告", "请点击下一页", "点击下一页", "本章未完", "继续阅读",
    "手机阅读", "手机用户", "手机版", "阅读网址", "加入书签", "投推荐票", "章节错误", "点此举报",
    "免费阅读", "全文阅读", "txt下载", "电子书下载", "小说天堂", "书香门第", "奇书网", "更新时间",
    "本章字数", "作品仅供", "小时内删除", "版权归原作者", "支持正版", "求收藏", "求月票", "百度搜索",
    "笔趣阁", "顶点小说", "丫丫电子书", "书友群", "广告屏蔽", "更优质的阅读体验", "上一章", "下一章",
    "返回目录", "章节目录", "qisuu", "bookhome", "xstt5", "shuyaya",
)
_PHRASE_RE = re.compile("|".join(re.escape(p) for p in sorted(AD_PHRASES, key=len, reverse=True)))
# A line whose canonical text, once its ad phrases are gone, is this short is an ad line.
AD_LINE_REST = 30
# Labels are at most 63 characters (the DNS limit) and a path at most URL_PATH_MAX: with
# unbounded repeats, every start in a long run of letters would rescan the rest of the
# run (quadratic time); bounded, each start costs a constant.
URL_PATH_MAX = 2048
_URL_RE = re.compile(
    r"(?:https?://)?(?:[a-z0-9-]{1,63}\.){1,4}(?:com|net|org|cc|la|info|cn|me|tw|co|xyz|top|vip|io|biz)"
    r"(?:/[a-z0-9./?=&%_~#-]{0," + str(URL_PATH_MAX) + "})?"
)
# Longer runs of letters or digits are not words: natural-language words stay under 50
# letters (German compounds under 80), the numbers people write (phone, ID, ISBN) under
# 20 digits and even a SHA-256 in hex is 64; what is longer is a base64 blob, a hex dump,
# minified code or key mashing, which no reader copies and which would only carry
# hashing and pinyin work proportional to its size into every later stage.
LONG_WORD = 256


@dataclass
class NormalizedText:
    """The units of a text that fingerprints are made of, with their raw offsets."""

    raw: str
    units: np.ndarray  # uint32 canonical code points
    unit_pos: np.ndarray  # int64 offset of each unit in `raw`
    kinds: np.ndarray  # uint8 kind of each unit
    tokens: np.ndarray  # uint64: a CJK/other character's code point, or a word hash | WORD_TAG
    tok_start: np.ndarray  # int64 raw offset where each token starts
    tok_end: np.ndarray  # int64 raw offset just past each token
    words: dict[int, str] = field(default_factory=dict)  # token index -> word, for word tokens
    removed: list[tuple[int, int, str]] = field(default_factory=list)  # raw spans dropped, with why
    long_tokens: int = 0  # runs of letters or digits longer than LONG_WORD, dropped (also in `removed`)

    @property
    def canonical(self) -> str:
        """The canonical text: the kept units, concatenated."""
        return self.units.astype("<u4").tobytes().decode("utf-32-le")

    @property
    def cjk_share(self) -> float:
        """Share of tokens that are CJK characters (0.0 for an empty text)."""
        if len(self.tokens) == 0:
            return 0.0
        return float(np.count_nonzero(self.kinds == CJK)) / len(self.tokens)

    def token_strings(self) -> list[str]:
        """Each token as a string: the character, or the whole word."""
        out = []
        for i, t in enumerate(self.tokens.tolist()):
            out.append(self.words[i] if i in self.words else chr(t))
        return out

    def __len__(self) -> int:
        return int(self.tokens.shape[0])


def _to_codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _decode(cps: np.ndarray) -> str:
    return cps.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


def normalize(text: str, *, remove_ads: bool = True) -> NormalizedText:
    """Turn raw text into canonical units and tokens, each with its raw offsets.

    >>> n = normalize("他們＊說：ＯＫ")
    >>> n.canonical
    '他们说ok'
    """
    t = tables()
    cps = _to_codepoints(text)
    idx = np.where(cps < TABLE_SIZE, cps, 0)
    kind = t.kind[idx]
    canon = t.canon[idx]
    removed: list[tuple[int, int, str]] = []

    # 1. URLs, found in the canonical text that still has its URL punctuation.
    pos = np.flatnonzero(kind != DROP)
    keep = np.ones(pos.shape[0], dtype=bool)
    if remove_ads and pos.shape[0]:
        _drop_urls(pos, canon, kind, keep, removed)
    pos = pos[keep & (kind[pos] != PUNCT)]

    # 2. Watermark phrases and ad lines, on the canonical text with its line breaks.
    if remove_ads and pos.shape[0]:
        pos = _drop_ads(pos, canon, kind, removed)
    pos = pos[kind[pos] != NEWLINE]

    # 3. Blobs: runs of letters or digits too long to be words.
    pos, long_tokens = _drop_long_words(pos, kind[pos], removed)

    units = canon[pos]
    kinds = kind[pos]
    tokens, tok_start, tok_end, words = _tokenize(units, pos, kinds)
    removed.sort()
    return NormalizedText(
        raw=text,
        units=units,
        unit_pos=pos.astype(np.int64),
        kinds=kinds,
        tokens=tokens,
        tok_start=tok_start,
        tok_end=tok_end,
        words=words,
        removed=removed,
        long_tokens=long_tokens,
    )


def _drop_urls(pos: np.ndarray, canon: np.ndarray, kind: np.ndarray, keep: np.ndarray, removed: list) -> None:
    """Drop URLs. A URL cannot cross a CJK character, so the pattern runs only on
    runs of Latin letters, digits and URL punctuation (few and short in Chinese text)."""
    k = kind[pos]
    latin = (k == LATIN) | (k == DIGIT) | (k == PUNCT)
    edges = np.diff(np.concatenate(([0], latin.view(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    long_runs = (ends - starts) >= 4
    for a, b in zip(starts[long_runs].tolist(), ends[long_runs].tolist()):
        run = _decode(canon[pos[a:b]])
        if "." not in run:  # every URL has a dot: most runs (words, numbers, blobs) skip the pattern
            continue
        for m in _URL_RE.finditer(run):
            s, e = a + m.start(), a + m.end()
            keep[s:e] = False
            removed.append((int(pos[s]), int(pos[e - 1]) + 1, "url"))


def _drop_ads(pos: np.ndarray, canon: np.ndarray, kind: np.ndarray, removed: list) -> np.ndarray:
    s = _decode(canon[pos])
    hits = [(m.start(), m.end()) for m in _PHRASE_RE.finditer(s)]
    if not hits:
        return pos
    keep = np.ones(pos.shape[0], dtype=bool)
    line_starts = [0] + (np.flatnonzero(kind[pos] == NEWLINE) + 1).tolist()
    done_lines: set[int] = set()
    story_lines: set[int] = set()  # lines already measured and long enough to keep: measured once
    for a, b in hits:
        line = bisect.bisect_right(line_starts, a) - 1
        if line in done_lines:
            continue
        if line not in story_lines:
            lo = line_starts[line]
            hi = line_starts[line + 1] - 1 if line + 1 < len(line_starts) else len(s)
            rest = len(_PHRASE_RE.sub("", s[lo:hi]))
            if rest <= AD_LINE_REST:
                keep[lo:hi] = False
                done_lines.add(line)
                if hi > lo:
                    removed.append((int(pos[lo]), int(pos[hi - 1]) + 1, "ad line"))
                continue
            story_lines.add(line)
        keep[a:b] = False
        removed.append((int(pos[a]), int(pos[b - 1]) + 1, "watermark"))
    return pos[keep]


def _token_runs(pos: np.ndarray, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, wordish): each token as units [start, end); wordish marks the units of words."""
    n = pos.shape[0]
    wordish = (kinds == LATIN) | (kinds == DIGIT)
    # A word continues while the next unit is of the same kind and adjacent in the raw text.
    cont = np.zeros(n, dtype=bool)
    cont[1:] = wordish[1:] & (kinds[1:] == kinds[:-1]) & (pos[1:] == pos[:-1] + 1)
    starts = np.flatnonzero(~cont)
    ends = np.append(starts[1:], n)
    return starts, ends, wordish


def _drop_long_words(pos: np.ndarray, kinds: np.ndarray, removed: list) -> tuple[np.ndarray, int]:
    """`pos` without the units of words longer than LONG_WORD, and how many such words there were.

    Dropping a whole run cannot join its neighbours into one word: they are not adjacent
    in the raw text, which is what a word needs."""
    if pos.shape[0] <= LONG_WORD:
        return pos, 0
    starts, ends, wordish = _token_runs(pos, kinds)
    long = np.flatnonzero(wordish[starts] & (ends - starts > LONG_WORD))
    if long.shape[0] == 0:
        return pos, 0
    keep = np.ones(pos.shape[0], dtype=bool)
    for a, b in zip(starts[long].tolist(), ends[long].tolist()):
        keep[a:b] = False
        removed.append((int(pos[a]), int(pos[b - 1]) + 1, "long word"))
    return pos[keep], int(long.shape[0])


def _tokenize(units: np.ndarray, pos: np.ndarray, kinds: np.ndarray):
    n = units.shape[0]
    if n == 0:
        e = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), e, e.copy(), {}
    starts, ends, wordish = _token_runs(pos, kinds)
    tokens = units[starts].astype(np.uint64)
    tok_start = pos[starts].astype(np.int64)
    tok_end = pos[ends - 1].astype(np.int64) + 1
    words: dict[int, str] = {}
    multi = np.flatnonzero(wordish[starts])
    if multi.shape[0]:
        text = _decode(units)
        ws = [text[a:b] for a, b in zip(starts[multi].tolist(), ends[multi].tolist())]
        # Each distinct word hashed once, the tokens set in one assignment: a text of short
        # words ("a.b.c..." is one per two characters) costs a dict lookup per word.
        hashes = {w: xxh64(w, 0x5EED) for w in set(ws)}
        tokens[multi] = np.array([hashes[w] for w in ws], dtype=np.uint64) | WORD_TAG
        words = dict(zip(multi.tolist(), ws))
    return tokens, tok_start, tok_end, words
