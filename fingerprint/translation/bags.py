"""A text as sentences of concepts: what the aligner compares across languages.

Chinese: each sentence is segmented by forward maximum matching on the lexicon's
words (after the normaliser's character table, so traditional text reads as
simplified); each word is a *unit* with the concept ids of its senses, since one
Chinese word is translated by one of several English words. Every two adjacent
characters also give a *name key* (their coarse romanisation, romanize.py), the
way a translator spells a name the dictionary does not know.

English: each sentence is a set of concept ids (the stems of its words that some
gloss uses), the name keys of its runs of romanised capitalised words ("Chia
Pao-yü" -> chia·pao, pao·yu), and the numbers it writes.

Both sides give number keys (数 ≥ 11, numbers.py). Sentences end at 。！？；!?; and
line breaks, and at "." before a space or a closing quote. Everything here reads
the text once; the patterns have no nested repeats.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from fingerprint.normalize import CJK, NormalizedText, tables
from fingerprint.pinyin import tables as pinyin_tables
from fingerprint.translation import numbers
from fingerprint.translation.lexicon import STOPWORDS, fold, lexicon, stem
from fingerprint.translation.romanize import MAX_NAME, romanised, syllable_tables

NAME_BASE = 1 << 40  # name keys: NAME_BASE + a * 1024 + b (coarse syllable ids a, b)
NUMBER_BASE = 1 << 50  # number keys: NUMBER_BASE + value
MAX_SENTENCE = 600  # characters or words; longer runs without a stop are cut (a page with no punctuation)

_SENTENCE_END = re.compile(r"[。！？!?；;]+[」』”’\"'）)\]]*|\.+(?=[\s\"”’')\]])[\"”’')\]]*|\n")
_EN_TOKEN = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*|\d+(?:,\d{3})*")


@dataclass
class TextBags:
    """A text's sentences with their concepts (see the module's docstring)."""

    language: str
    starts: np.ndarray  # int64 raw offset where each sentence starts
    ends: np.ndarray  # int64 raw offset past each sentence's last kept character
    sizes: np.ndarray  # int64 characters (zh) or words (en) per sentence: its weight in coverage
    concepts: list[frozenset[int]]  # en: concept ids of the sentence; zh: union over its units
    units: list[list[np.ndarray]]  # zh only: the concept ids of each word of the sentence
    names: list[frozenset[int]]
    numbers: list[frozenset[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def unit_lists(self) -> tuple[list[list[list[int]]], list[float]]:
        """(zh) each sentence's words as lists of concept ids, rarest sense first, and what each
        sentence could match at most (the sum of its words' best dictionary weights); computed once."""
        cached = getattr(self, "_unit_lists", None)
        if cached is None:
            idf = lexicon().idf
            lists = [[u[np.argsort(-idf[u], kind="stable")].tolist() for u in sent] for sent in self.units]
            pots = [float(sum(idf[u].max() for u in sent if len(u))) for sent in self.units]
            cached = self._unit_lists = (lists, pots)
        return cached

    @property
    def total(self) -> int:
        return int(self.sizes.sum())


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """[start, end) raw offsets of the sentences of `text` (empty ones dropped)."""
    out, at = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > at:
            out.append((at, m.end()))
        at = m.end()
    if at < len(text):
        out.append((at, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _split_long(bounds: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    out = []
    for a, b in bounds:
        while b - a > limit:
            out.append((a, a + limit))
            a += limit
        out.append((a, b))
    return out


def _coarse_ids() -> tuple[np.ndarray, dict[str, int]]:
    """Per pinyin syllable id: the id of its coarse spelling (1..); and coarse spelling -> id."""
    py2wg, _ = syllable_tables()
    names = pinyin_tables().names
    ids: dict[str, int] = {}
    per = np.zeros(len(names), dtype=np.int64)
    for i, py in enumerate(names):
        c = py2wg.get(py)
        if c:
            per[i] = ids.setdefault(c, len(ids) + 1)
    return per, ids


_COARSE: tuple[np.ndarray, dict[str, int]] | None = None


def coarse_ids() -> tuple[np.ndarray, dict[str, int]]:
    global _COARSE
    if _COARSE is None:
        _COARSE = _coarse_ids()
    return _COARSE


_CONTENT_WORDS: dict[str, tuple[np.ndarray, list[int]]] | None = None
_LONG_PREFIXES: frozenset[str] = frozenset()  # first two characters of every word of three or more


def _content_words() -> dict[str, tuple[np.ndarray, list[int]]]:
    """Each dictionary word with its concepts less the general ones (_STOP_CONCEPTS), as an
    array and a list; a word left with none maps to empty ones (it still takes its place)."""
    global _CONTENT_WORDS, _LONG_PREFIXES
    if _CONTENT_WORDS is None:
        _LONG_PREFIXES = frozenset(w[:2] for w in lexicon().words if len(w) >= 3)
        stop = _STOP_CONCEPTS
        out = {}
        for w, cids in lexicon().words.items():
            keep = [c for c in cids.tolist() if c not in stop]
            out[w] = (np.asarray(keep, dtype=np.int32), keep)
        _CONTENT_WORDS = out
    return _CONTENT_WORDS


def _zh_bags(text: str, bounds: list[tuple[int, int]]) -> TextBags:
    canon = tables().canon
    syl = pinyin_tables().syllable
    per_syl, _ = coarse_ids()
    words = _content_words()
    maxlen = min(lexicon().max_len, 8)
    # the whole text's canonical code points at once; CJK ones are the characters read
    raw = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    c = np.where(raw < canon.shape[0], canon[np.minimum(raw, canon.shape[0] - 1)].astype(np.int64), 0)
    cjk = ((c >= 0x4E00) & (c <= 0x9FFF)) | ((c >= 0x3400) & (c <= 0x4DBF)) | ((c >= 0x20000) & (c <= 0x3134F))
    co_all = per_syl[syl[np.minimum(c, syl.shape[0] - 1)].astype(np.int64)]
    starts, ends, sizes, concepts, units, names, nums = [], [], [], [], [], [], []
    for a, b in bounds:
        at = a + np.flatnonzero(cjk[a:b])
        if not at.shape[0]:
            continue
        cps = c[at]
        s = cps.astype("<u4").tobytes().decode("utf-32-le")
        sent_units: list[np.ndarray] = []
        found: set[int] = set()
        i, n = 0, len(s)
        longest = _LONG_PREFIXES
        while i < n:
            hit = None
            # only a position starting a known longer word needs the longer lengths tried
            top = min(maxlen if s[i:i + 2] in longest else 2, n - i)
            for L in range(top, 0, -1):
                hit = words.get(s[i:i + L])
                if hit is not None:
                    break
            if hit is not None and hit[1]:
                sent_units.append(hit[0])
                found.update(hit[1])
            i += L
        co = co_all[at]
        ok = (co[:-1] > 0) & (co[1:] > 0)
        bi = NAME_BASE + co[:-1][ok] * 1024 + co[1:][ok]
        nm = [NUMBER_BASE + v for r in numbers.ZH_NUMERAL.findall(s)
              if (v := numbers.zh_value(r)) is not None and v >= numbers.MIN_VALUE]
        starts.append(int(at[0]))
        ends.append(int(at[-1]) + 1)
        sizes.append(n)
        units.append(sent_units)
        concepts.append(frozenset(found))
        names.append(frozenset(bi.tolist()))
        nums.append(frozenset(nm))
    return TextBags("zh", np.asarray(starts, np.int64), np.asarray(ends, np.int64), np.asarray(sizes, np.int64),
                    concepts, units, names, nums)


# What one English token (as written) brings, computed once per process: its concepts, its
# reading as a romanised name (or None), whether it is also an English word, whether it may
# be part of a number. Bounded, so a page of random words cannot grow it without end.
_TOKENS: dict[str, tuple[tuple[int, ...], list[str] | None, bool, bool, list[str]]] = {}
_TOKENS_MAX = 300_000


def _token(tok: str) -> tuple[tuple[int, ...], list[str] | None, bool, bool, list[str]]:
    info = _TOKENS.get(tok)
    if info is not None:
        return info
    lex = lexicon()
    low = fold(tok).replace("’", "'")
    parts = low.split("-")
    reading = None
    if tok[0].isupper() and low not in STOPWORDS:
        r = romanised(tok)
        reading = r[0] if r else None
    lone = low in lex.vocab and "-" not in low and "'" not in low
    cs = []
    for part in parts:
        c = _concept(part, lex.stem_id)
        if c >= 0:
            cs.append(c)
    numeric = any(w in numbers.NUMBER_WORDS or w[:1].isdigit() for w in parts)
    info = (tuple(cs), reading, lone, numeric, parts)
    if len(_TOKENS) < _TOKENS_MAX:
        _TOKENS[tok] = info
    return info


def _en_bags(text: str, bounds: list[tuple[int, int]]) -> TextBags:
    _, cid = coarse_ids()
    stop = _STOP_CONCEPTS
    starts, ends, sizes, concepts, units, names, nums = [], [], [], [], [], [], []
    for a, b in bounds:
        toks = [(m.group(), m.start()) for m in _EN_TOKEN.finditer(text, a, b)]
        if not toks:
            continue
        found: set[int] = set()
        keys: set[int] = set()
        run: list[list[str]] = []  # readings of the current run of capitalised romanised tokens
        lone_word = False  # the run is one token that is also an English word ("Chance": chan-tse)
        numeric = False
        for tok, _ in toks:
            cs, reading, lone, num, _parts = _TOKENS.get(tok) or _token(tok)
            numeric = numeric or num
            if reading is not None:
                if not run:
                    lone_word = lone
                run.append(reading)
                continue
            if run:
                _name_keys(run, lone_word, cid, keys)
                run = []
            found.update(cs)
        if run:
            _name_keys(run, lone_word, cid, keys)
        nm = []
        if numeric:
            words = [w.replace(",", "") for tok, _ in toks for w in _token(tok)[4]]
            nm = [NUMBER_BASE + v for v in numbers.en_values(words)]
        starts.append(toks[0][1])
        ends.append(toks[-1][1] + len(toks[-1][0]))
        sizes.append(len(toks))
        concepts.append(frozenset(found - stop))
        units.append([])
        names.append(frozenset(keys))
        nums.append(frozenset(nm))
    return TextBags("en", np.asarray(starts, np.int64), np.asarray(ends, np.int64), np.asarray(sizes, np.int64),
                    concepts, units, names, nums)


def _name_keys(run: list[list[str]], lone_word: bool, cid: dict[str, int], out: set[int]) -> None:
    """Adjacent-syllable keys of a run of romanised capitalised tokens ("Chang Fei", "Pao-yü",
    "Baoyu"); a lone English word that happens to spell syllables ("Chance") is no name."""
    if lone_word and len(run) == 1:
        return
    syl = [s for r in run for s in r][: 3 * MAX_NAME]
    ids = [cid.get(s, 0) for s in syl]
    for x, y in zip(ids, ids[1:]):
        if x and y:
            out.add(NAME_BASE + x * 1024 + y)


# English forms the stemmer does not bring to the form glosses use ("came" -> "come").
_IRREGULAR = {
    "came": "come", "went": "go", "gone": "go", "said": "say", "saw": "see", "seen": "see", "took": "take",
    "taken": "take", "gave": "give", "given": "give", "made": "make", "got": "get", "knew": "know",
    "known": "know", "thought": "think", "told": "tell", "found": "find", "left": "leave", "felt": "feel",
    "brought": "bring", "bought": "buy", "fought": "fight", "sought": "seek", "taught": "teach",
    "caught": "catch", "stood": "stand", "sat": "sit", "ran": "run", "rode": "ride", "ridden": "ride",
    "wrote": "write", "written": "write", "spoke": "speak", "spoken": "speak", "fell": "fall",
    "fallen": "fall", "held": "hold", "heard": "hear", "lost": "lose", "met": "meet", "sent": "send",
    "slew": "slay", "slain": "slay", "struck": "strike", "drew": "draw", "drawn": "draw", "rose": "rise",
    "risen": "rise", "began": "begin", "begun": "begin", "became": "become", "ate": "eat", "eaten": "eat",
    "drank": "drink", "drunk": "drink", "flew": "fly", "fled": "flee", "led": "lead", "lay": "lie",
    "laid": "lay", "paid": "pay", "sold": "sell", "shot": "shoot", "slept": "sleep", "kept": "keep",
    "wept": "weep", "won": "win", "wore": "wear", "worn": "wear", "threw": "throw", "thrown": "throw",
    "hid": "hide", "hidden": "hide", "bore": "bear", "born": "bear", "broke": "break", "broken": "break",
    "chose": "choose", "chosen": "choose", "forgot": "forget", "understood": "understand", "men": "man",
    "women": "woman", "children": "child", "feet": "foot", "teeth": "tooth", "mice": "mouse",
    "better": "good", "best": "good", "worse": "bad", "worst": "bad", "dead": "die", "death": "die",
}


def _lemma(word: str) -> str:
    return _IRREGULAR.get(word, word)


_CONCEPT: dict[str, int] = {}  # lower-case English word -> concept id, or -1 (memoised)


def _concept(word: str, stem_id: dict[str, int]) -> int:
    if word in STOPWORDS or len(word) < 2 or word.isdigit():
        c = -1
    else:
        c = stem_id.get(stem(_lemma(word.split("'")[0])), -1)
    if len(_CONCEPT) < 500_000:
        _CONCEPT[word] = c
    return c


def _stop_concepts() -> frozenset[int]:
    lex = lexicon()
    # Concepts too general to tell one sentence from another: the most glossed stems.
    order = np.argsort(lex.idf)[:40]
    return frozenset(int(i) for i in order.tolist())


_STOP_CONCEPTS: frozenset[int] = frozenset()


def text_bags(text: str, language: str) -> TextBags:
    """The sentences of a text in `language` ("zh" or "en") as bags of concepts."""
    global _STOP_CONCEPTS
    if not _STOP_CONCEPTS:
        _STOP_CONCEPTS = _stop_concepts()
    bounds = _split_long(sentence_bounds(text), MAX_SENTENCE)
    if language == "zh":
        return _zh_bags(text, bounds)
    if language == "en":
        return _en_bags(text, bounds)
    raise ValueError(f"no translation bags for language {language!r}; use zh or en")


def from_normalized(nt: NormalizedText, language: str) -> TextBags:
    return text_bags(nt.raw, language)


__all__ = ["CJK", "NAME_BASE", "NUMBER_BASE", "TextBags", "from_normalized", "sentence_bounds", "text_bags"]
