"""Search queries that find copies of a work: its title, its chapter titles, and its most
distinctive sentences, each as a quoted phrase a search engine matches word for word.

Pure text work (no I/O): tracker.discovery.discover sends the queries, this module only makes them.

A sentence is distinctive when its character pairs are rare in the rest of the work (the
idf of its bigrams, summed) and it is long enough to name one book but short enough for a
search engine's phrase limit. Stock phrases ("本章未完", "求月票", "Chapter 3") and
sentences the work repeats never make a query: every copy of every novel has them.

    >>> [q.text for q in build_queries("w", "山城旧事", [("w/1", "第一章 雨夜来客", "她笑了。"
    ...     "陈守义把信反复看了十几遍，终于认出了那个熟悉的落款。")], QueryPlan(chapter_titles=1))]
    ['"陈守义把信反复看了十几遍，终于认出了那个熟悉的落款"', '"山城旧事"', '"山城旧事" "雨夜来客"']

Every step is linear in the text: hostile input (megabytes without a full stop) costs
time in proportion to its length.
"""
from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WORD_UNITS = 2  # the length of a word of a script without CJK characters, one CJK character being 1
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# A token: one CJK character, or a run of other letters and digits (a word).
_TOKEN = re.compile(f"[{CJK}]|(?:(?![{CJK}])[^\\W_])+")
# Sentences end at these marks, at a line break, or (Latin text) at ". " / "! " / "? ".
_SENTENCE = re.compile(r"[^。！？!?…\n]+[。！？!?…]*")
_LATIN_END = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"[^，,、；;：:]+[，,、；;：:]*")
# Quote marks (they would end the phrase; copies change them anyway) go; characters a terminal
# would act on become spaces.
_QUOTES = re.compile("[\"“”„‟«»「」『』〝〞＂]")
_DROP = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufeff]")
_SPACES = re.compile(r"\s+")
_URLISH = re.compile(r"https?:|www\.|\.(?:com|net|org|cc|la|info)\b", re.IGNORECASE)
_NUMBERING = re.compile(
    r"^\s*(?:第\s*[0-9０-９零〇一二两三四五六七八九十百千万]+\s*[章回卷节集部篇话]"
    r"|(?:chapter|ch\.?|part|book|vol\.?|volume)\s*[0-9ivxlcdm]+\b"
    r"|[0-9０-９]+(?=[\s.、:：-]))[\s.、:：\-–—]*",
    re.IGNORECASE)

#: Lines every web novel (or its pirate copy) carries; a sentence holding one is not distinctive.
STOCK_PHRASES = (
    "本章未完", "点击下一页", "下一页继续", "上一章", "下一章", "返回目录", "加入书签", "推荐票", "月票", "求收藏",
    "求订阅", "手机阅读", "最新章节", "天才一秒", "记住本站", "笔趣阁", "本书首发", "请收藏", "章节错误", "未完待续",
    "作者有话", "感谢打赏", "无弹窗", "全文阅读", "免费阅读", "txt下载", "请记住", "本站地址", "阅读网",
    "to be continued", "next chapter", "previous chapter", "table of contents", "read more", "all rights reserved",
    "translator", "support me on", "patreon", "click here", "bookmark",
)
# Characters too common to tell one novel from another: a pair made only of these counts nothing.
_COMMON = frozenset("的一是了不在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年"
                    "过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本"
                    "前开但因只从想实日己")


@dataclass(frozen=True)
class QueryPlan:
    """How many queries of each kind a work gets, and how long a sentence may be.

    Lengths are in units: a CJK character is 1, a word of another script is 2 (so an
    English phrase of 7-20 words fits, within the 32 words search engines match as a phrase)."""
    sentences: int = 5
    chapter_titles: int = 2
    title: bool = True
    min_units: int = 14
    max_units: int = 40

    def __post_init__(self) -> None:
        if self.sentences < 0 or self.chapter_titles < 0:
            raise ValueError("the numbers of sentence and chapter-title queries must be 0 or more")
        if not 4 <= self.min_units <= self.max_units:
            raise ValueError(f"sentence length: need 4 <= min_units <= max_units, "
                             f"got {self.min_units}, {self.max_units}")


@dataclass(frozen=True)
class Query:
    """One query for one work: `text` is what the search provider is sent."""
    work: str
    kind: str  # title | chapter-title | sentence (tracker.store.discovery.QUERY_KINDS)
    text: str
    source: str = ""  # the chapter key the phrase comes from ("" for the title)


def build_queries(work: str, title: str, chapters: Iterable[tuple[str, str, str]], plan: QueryPlan | None = None,
                  *, author: str = "") -> list[Query]:
    """The queries for one work: its distinctive sentences, then its title, then its most
    telling chapter titles. `chapters` are (key, title, text) in the work's order.
    Deterministic: the same work always gives the same queries, in the same order."""
    plan = plan or QueryPlan()
    chapters = list(chapters)
    out: list[Query] = []
    for key, sentence in distinctive_sentences(chapters, plan.sentences, plan):
        out.append(Query(work, "sentence", quoted(sentence), key))
    name = phrase(title)
    if plan.title and name:
        who = phrase(author)
        out.append(Query(work, "title", quoted(name) + (f" {quoted(who)}" if who else "")))
    if name:
        for key, rest in telling_chapter_titles(chapters, plan.chapter_titles, title):
            out.append(Query(work, "chapter-title", f"{quoted(name)} {quoted(rest)}", key))
    seen: set[str] = set()
    return [q for q in out if not (q.text in seen or seen.add(q.text))]


def quoted(text: str) -> str:
    return f'"{text}"'


def phrase(text: str) -> str:
    """Text made fit to stand inside a quoted phrase: no quote marks or control characters,
    one space between words, no punctuation at its ends."""
    return _strip_edges(_SPACES.sub(" ", _DROP.sub(" ", _QUOTES.sub("", text))))


def units(text: str) -> int:
    """The length of a phrase: 1 per CJK character, 2 per word of another script."""
    n = 0
    for m in _TOKEN.finditer(text):
        n += 1 if len(m.group()) == 1 and _is_cjk(m.group()) else WORD_UNITS
    return n


def tokens(text: str) -> list[str]:
    """CJK characters one by one, other words lower-cased."""
    return [t.lower() for t in _TOKEN.findall(text)]


def is_stock(text: str) -> bool:
    """Whether the text holds a line every web novel carries (or a web address)."""
    low = text.lower()
    return any(p in low for p in STOCK_PHRASES) or bool(_URLISH.search(text))


def candidates(text: str, plan: QueryPlan) -> list[str]:
    """The phrases of a chapter that could make a query: its sentences, the long ones cut at
    their clauses (or, without clause marks, at `max_units`), each between the length bounds."""
    out = []
    for m in _SENTENCE.finditer(text):
        for sentence in _LATIN_END.split(m.group()):
            for piece in _pieces(phrase(sentence), plan.max_units):
                # The character cap: a "word" of a thousand letters is no phrase a search engine takes.
                if len(piece) <= 8 * plan.max_units and plan.min_units <= units(piece) <= plan.max_units:
                    out.append(piece)
    return out


def distinctive_sentences(chapters: Sequence[tuple[str, str, str]], k: int,
                          plan: QueryPlan | None = None) -> list[tuple[str, str]]:
    """The `k` most distinctive phrases of a work as (chapter key, phrase), from as many
    different chapters as there are, best first."""
    plan = plan or QueryPlan()
    if k <= 0:
        return []
    found: list[tuple[int, str, str]] = []  # (chapter order, key, phrase)
    for i, (key, _title, text) in enumerate(chapters):
        found.extend((i, key, p) for p in candidates(text, plan))
    repeated = Counter(p for _, _, p in found)
    grams = [_bigrams(tokens(p)) for _, _, p in found]
    df: Counter[str] = Counter()
    for g in grams:
        df.update(g)
    n = len(found)
    scored = []
    for pos, ((order, key, p), g) in enumerate(zip(found, grams)):
        if repeated[p] > 1 or is_stock(p) or not _varied(p):
            continue
        score = sum(math.log((n + 1) / df[b]) for b in g if not _common(b))
        if score > 0:
            scored.append((round(score, 9), -pos, order, key, p))
    best = heapq.nlargest(k * 4, scored)  # enough to spread over chapters without sorting everything
    chosen: list[tuple[str, str]] = []
    used: set[int] = set()
    for _score, _pos, order, key, p in best:  # one phrase per chapter first ...
        if len(chosen) < k and order not in used:
            chosen.append((key, p))
            used.add(order)
    for _score, _pos, _order, key, p in best:  # ... then the next best wherever they are
        if len(chosen) < k and (key, p) not in chosen:
            chosen.append((key, p))
    return chosen


def telling_chapter_titles(chapters: Sequence[tuple[str, str, str]], k: int,
                           work_title: str = "") -> list[tuple[str, str]]:
    """Up to `k` chapter titles without their numbering ("第一章 雨夜来客" -> "雨夜来客"),
    longest first (ties: in the work's order); titles that are only a number, or the work's
    title and a number, are left out."""
    if k <= 0:
        return []
    found = []
    for i, (key, title, text) in enumerate(chapters):
        # The stored title may be a file name ("山城旧事-第一章"); the text's first line is then its heading.
        heading = text[:200].lstrip().split("\n", 1)[0]
        for name in (title[:200], heading if _NUMBERING.match(heading) else ""):
            rest = _title_rest(name, work_title)
            if units(rest) >= 2 and not is_stock(rest) and len(rest) <= 60:
                found.append((-units(rest), i, key, rest))
                break
    seen: set[str] = set()
    out = []
    for _u, _i, key, rest in sorted(found):
        if rest not in seen:
            seen.add(rest)
            out.append((key, rest))
    return out[:k]


def _title_rest(name: str, work_title: str) -> str:
    """A chapter title without the work's title in front and without its numbering."""
    name = phrase(name)
    work_title = phrase(work_title)
    if work_title and name.startswith(work_title):
        name = _strip_edges(name[len(work_title):])
    return phrase(_NUMBERING.sub("", name, count=1))


def _pieces(sentence: str, max_units: int) -> Iterable[str]:
    """A sentence, or when it is too long its clauses joined up to `max_units`, a clause still
    too long being cut into windows of `max_units`."""
    if units(sentence) <= max_units:
        yield sentence
        return
    current: list[str] = []  # a list, not +=: clauses without letters add nothing to the size
    size = 0
    for m in _CLAUSE.finditer(sentence):
        clause = m.group()
        n = units(clause)
        if n > max_units:
            if current:
                yield phrase("".join(current))
            current, size = [], 0
            yield from _windows(clause, max_units)
            continue
        if size + n > max_units and current:
            yield phrase("".join(current))
            current, size = [], 0
        current.append(clause)
        size += n
    if current:
        yield phrase("".join(current))


def _windows(text: str, max_units: int) -> Iterable[str]:
    start, size, end = 0, 0, 0
    for m in _TOKEN.finditer(text):
        n = 1 if len(m.group()) == 1 and _is_cjk(m.group()) else WORD_UNITS
        if size + n > max_units:
            yield phrase(text[start:end])
            start, size = m.start(), 0
        size += n
        end = m.end()
    if size:
        yield phrase(text[start:end])


def _strip_edges(text: str) -> str:
    """Text without spaces and punctuation at its ends (a loop: a regex anchored at the end
    would rescan a long run of punctuation from every position)."""
    i, j = 0, len(text)
    while i < j and not text[i].isalnum():
        i += 1
    while j > i and not text[j - 1].isalnum():
        j -= 1
    return text[i:j]


def _bigrams(toks: list[str]) -> set[str]:
    return {a + "\x1f" + b for a, b in zip(toks, toks[1:])}


def _common(bigram: str) -> bool:
    a, _, b = bigram.partition("\x1f")
    return a in _COMMON and b in _COMMON


def _varied(text: str) -> bool:
    """Not a run of one sound ("啊啊啊啊……") or a list of numbers: half its tokens differ, and it has letters."""
    toks = tokens(text)
    return len(set(toks)) * 2 >= len(toks) and any(not t.isdigit() for t in toks)


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF
            or 0xAC00 <= o <= 0xD7AF)
