"""Text to toneless pinyin syllables and initials, as arrays.

Pinyin makes a fingerprint blind to the tricks that keep the sound: homophone
substitution (同 -> 童), characters written out as pinyin words (知道 -> zhidao),
and, after the normaliser's traditional-to-simplified table, script changes.

Each character takes its first (most common) reading from pypinyin's table.
That is not always the reading in context, but it is always the same for the
same character, which is what matching needs; it is also about 100x faster
than phrase-aware conversion.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fingerprint.cache import cached_arrays
from fingerprint.normalize import TABLE_SIZE, WORD_TAG, NormalizedText

SYLLABLE_TAG = np.uint64(1 << 62)  # syllable units: tag | syllable id; never equal to a character or word
# A Latin run inside Chinese text is read as pinyin only when the text is at least this Chinese.
PINYIN_WORDS_MIN_CJK_SHARE = 0.5
# Longer runs of letters are not read as pinyin. A pirate spells out a word or a name
# (zhidao, xiaoming: 2-4 syllables, under 25 letters); 60 letters is ten syllables or more.
# The bound also keeps the segmentation (which copies a list of pieces at each of up to
# 6 * n steps) at a constant cost per word, whatever a hostile page holds.
PINYIN_WORD_MAX = 60


def _strip_tone(s: str) -> str:
    s = s.replace("ü", "v").replace("ǖ", "v").replace("ǘ", "v").replace("ǚ", "v").replace("ǜ", "v")
    return "".join(c for c in unicodedata.normalize("NFD", s) if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Tables:
    syllable: np.ndarray  # uint16 per code point: syllable id (0 = no reading)
    names: tuple[str, ...]  # syllable id -> toneless syllable ("" for 0)
    initial: np.ndarray  # uint8 per syllable id: 1..26 for a..z (0 = none)
    ids: dict[str, int]  # toneless syllable -> id


@lru_cache(maxsize=1)
def tables() -> _Tables:
    """The syllable tables: from the disk cache, or built from pypinyin's data."""
    from fingerprint.normalize import _version

    arrays = cached_arrays("pinyin", f"pinyin-v1 pypinyin={_version('pypinyin')}", _build_tables)
    names = ("",) + tuple(arrays["names"].tolist())
    ids = {s: i for i, s in enumerate(names) if s}
    return _Tables(syllable=arrays["syllable"], names=names, initial=arrays["initial"], ids=ids)


def _build_tables() -> dict[str, np.ndarray]:
    from pypinyin.pinyin_dict import pinyin_dict

    ids: dict[str, int] = {}
    syl = np.zeros(TABLE_SIZE, dtype=np.uint16)
    for cp, readings in pinyin_dict.items():
        if cp >= TABLE_SIZE:
            continue
        s = _strip_tone(readings.split(",", 1)[0])
        if not s.isascii() or not s.isalpha():
            continue
        syl[cp] = ids.setdefault(s, len(ids) + 1)
    names = ("",) + tuple(sorted(ids, key=ids.get))
    initial = np.zeros(len(names), dtype=np.uint8)
    for i, s in enumerate(names[1:], 1):
        initial[i] = ord(s[0]) - ord("a") + 1
    return {"syllable": syl, "names": np.array(names[1:]), "initial": initial}


def syllables_of(text: str) -> list[str]:
    """Toneless syllables of each character that has a reading.

    >>> syllables_of("知道")
    ['zhi', 'dao']
    """
    t = tables()
    return [t.names[t.syllable[ord(c)]] for c in text if ord(c) < TABLE_SIZE and t.syllable[ord(c)]]


def segment_pinyin(word: str) -> list[str] | None:
    """Split a run of letters into pinyin syllables, or None if it is not pinyin.

    Prefers the split with the fewest syllables, so "xian" stays one syllable.
    >>> segment_pinyin("zhidao")
    ['zhi', 'dao']
    >>> segment_pinyin("hello") is None
    True
    """
    ids = tables().ids
    n = len(word)
    if n == 0 or n > PINYIN_WORD_MAX:
        return None
    best: list[list[str] | None] = [None] * (n + 1)
    best[0] = []
    for i in range(n):
        if best[i] is None:
            continue
        for j in range(i + 1, min(n, i + 6) + 1):
            piece = word[i:j]
            if piece in ids:
                cand = best[i] + [piece]
                if best[j] is None or len(cand) < len(best[j]):
                    best[j] = cand
    return best[n]


@dataclass
class Sounds:
    """A text as a sequence of sound units, each with the raw span it came from."""

    units: np.ndarray  # uint64: SYLLABLE_TAG | id for syllables; characters/words as in NormalizedText
    start: np.ndarray  # int64 raw offsets
    end: np.ndarray
    initials: np.ndarray  # uint8 1..26 per unit (0 where there is no letter)


def to_sounds(nt: NormalizedText) -> Sounds:
    """Map each token to its syllable; read Latin runs in Chinese text as pinyin words.

    Tokens without a reading keep their own value, so non-Chinese text passes through.
    """
    t = tables()
    tok = nt.tokens
    n = tok.shape[0]
    is_char = tok < WORD_TAG
    idx = np.where(is_char, tok, 0).astype(np.int64)
    idx[idx >= TABLE_SIZE] = 0
    sid = t.syllable[idx]
    units = np.where(sid > 0, SYLLABLE_TAG | sid.astype(np.uint64), tok)
    initials = t.initial[sid]
    start, end = nt.tok_start, nt.tok_end
    if not nt.words:
        return Sounds(units=units, start=start, end=end, initials=initials)

    # Word tokens: pinyin words expand into syllables; other words keep their hash and first letter.
    # Every word's first letter at once (a word is all letters a-z or all digits), so only
    # the words that may be pinyin cost a step each.
    words = np.flatnonzero(~is_char)
    first = nt.units[np.searchsorted(nt.unit_pos, start[words])]
    letters = (first >= ord("a")) & (first <= ord("z"))
    initials[words] = np.where(letters, first - (ord("a") - 1), 0)
    if nt.cjk_share < PINYIN_WORDS_MIN_CJK_SHARE:
        return Sounds(units=units, start=start, end=end, initials=initials)
    out_u: list[np.ndarray] = []
    out_s: list[np.ndarray] = []
    out_e: list[np.ndarray] = []
    out_i: list[np.ndarray] = []
    last = 0
    for ti in words[letters].tolist():
        pieces = segment_pinyin(nt.words[ti])
        if pieces is None:
            continue
        out_u.append(units[last:ti])
        out_s.append(start[last:ti])
        out_e.append(end[last:ti])
        out_i.append(initials[last:ti])
        ids = [t.ids[p] for p in pieces]
        out_u.append(SYLLABLE_TAG | np.array(ids, dtype=np.uint64))
        out_s.append(np.full(len(ids), start[ti], dtype=np.int64))
        out_e.append(np.full(len(ids), end[ti], dtype=np.int64))
        out_i.append(t.initial[np.array(ids)])
        last = ti + 1
    if not out_u:
        return Sounds(units=units, start=start, end=end, initials=initials)
    out_u.append(units[last:n])
    out_s.append(start[last:n])
    out_e.append(end[last:n])
    out_i.append(initials[last:n])
    return Sounds(
        units=np.concatenate(out_u),
        start=np.concatenate(out_s),
        end=np.concatenate(out_e),
        initials=np.concatenate(out_i),
    )


