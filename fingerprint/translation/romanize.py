"""Names carried across languages by their sound.

A translator writes 贾宝玉 as "Jia Baoyu" (pinyin), "Chia Pao-yü" (Wade-Giles),
"Chia Pao-yu" (Wade-Giles without marks) or "Chia Pao-yü" (Giles); 刘备 as
"Liu Bei" or "Liu Pei". All of them meet in one coarse spelling per syllable:
the Wade-Giles syllable folded (no apostrophes, no diacritics, ü as u), so
aspirated and unaspirated stops fall together (bei/pei -> "pei") as they do
when a typesetter drops the apostrophe.

`chinese_name_keys` spells a Chinese word; `english_names` finds the runs of
romanised syllables in English text ("Chia Pao-yü", "Kuan Yü", "Baoyu").
Both give `name keys`: every run of two or more consecutive syllables of a
name, so a translator who writes only the given name ("Pao-yü") still meets
the full name.
"""
from __future__ import annotations

import re
from functools import lru_cache

from fingerprint.pinyin import segment_pinyin, tables
from fingerprint.translation.lexicon import fold

MAX_NAME = 4  # syllables in a name (longer runs of capitalised syllables are not names)
# Wade-Giles spellings of one syllable that older translators wrote differently.
_VARIANTS = {"szu": "ssu", "sze": "ssu", "tsze": "tzu", "tze": "tzu", "erh": "erh", "eh": "erh", "yi": "i"}


def _coarse(wg: str) -> str:
    s = fold(wg).replace("'", "").replace("’", "").replace("ʻ", "").replace("v", "u")
    return _VARIANTS.get(s, s)


@lru_cache(maxsize=1)
def syllable_tables() -> tuple[dict[str, str], frozenset[str]]:
    """(toneless pinyin -> coarse Wade-Giles, the set of coarse Wade-Giles syllables)."""
    from pypinyin import Style
    from pypinyin.style import convert

    out: dict[str, str] = {}
    for py in tables().names:
        if not py or not py.isalpha():
            continue
        try:
            wg = convert(py.replace("v", "ü"), Style.WADEGILES, True)
        except Exception:
            wg = py
        out[py] = _coarse(wg or py)
    return out, frozenset(out.values())


def coarse_of_pinyin(syllable: str) -> str:
    """Toneless pinyin syllable ("bao", "lv") -> coarse spelling ("pao", "lu")."""
    py2wg, _ = syllable_tables()
    return py2wg.get(syllable, syllable)


def chinese_syllables(word: str) -> list[str]:
    """The coarse spelling of each character of a Chinese word (its first reading)."""
    t = tables()
    out = []
    for ch in word:
        cp = ord(ch)
        sid = int(t.syllable[cp]) if cp < t.syllable.shape[0] else 0
        if not sid:
            return []
        out.append(coarse_of_pinyin(t.names[sid]))
    return out


def name_keys(syllables: list[str]) -> list[str]:
    """Every run of two or more consecutive syllables, joined by spaces (a name and its parts)."""
    n = len(syllables)
    return [" ".join(syllables[i:j]) for i in range(n) for j in range(i + 2, n + 1)]


def chinese_name_keys(word: str) -> list[str]:
    """Name keys of a Chinese word of 2..MAX_NAME characters (贾宝玉 -> chia pao yu, chia pao, pao yu)."""
    if not 2 <= len(word) <= MAX_NAME:
        return []
    return name_keys(chinese_syllables(word))


_PART = re.compile(r"[a-z]+(?:['’ʻ][a-z]+)?")


def _readings(part: str) -> list[list[str]]:
    """Coarse syllable readings of one hyphen-free piece of a romanised name ("pao", "baoyu", "ch'ing")."""
    py2wg, wg = syllable_tables()
    flat = part.replace("'", "").replace("’", "").replace("ʻ", "")
    out: list[list[str]] = []
    c = _VARIANTS.get(flat, flat)
    if c in wg:  # a Wade-Giles (or Giles) syllable
        out.append([c])
    if flat in py2wg and [py2wg[flat]] not in out:  # a pinyin syllable
        out.append([py2wg[flat]])
    if not out and "'" not in part and len(flat) <= 24:  # pinyin run together: baoyu, zhuge
        seg = segment_pinyin(flat)
        if seg and len(seg) <= MAX_NAME:
            out.append([py2wg.get(s, s) for s in seg])
    return out


def romanised(token: str) -> list[list[str]]:
    """Readings of a capitalised token ("Pao-yü", "Baoyu", "Ch'ing") as coarse syllables; [] if none."""
    pieces = fold(token).split("-")
    readings: list[list[str]] = [[]]
    for piece in pieces:
        if not piece or not _PART.fullmatch(piece):
            return []
        opts = _readings(piece)
        if not opts:
            return []
        readings = [r + o for r in readings for o in opts][:4]
    return [r for r in readings if 0 < len(r) <= MAX_NAME]
