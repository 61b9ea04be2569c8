"""Numbers written out in Chinese or English, as values, so 三千六百 meets "3,600" and "three thousand six hundred".

Only values of 11 and more become keys: smaller ones are single words that the
dictionary already carries across (三 -> "three"), and too common to anchor anything.
Every parser here reads a bounded run of characters once (linear).
"""
from __future__ import annotations

import re

MIN_VALUE = 11
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
ZH_NUMERAL = re.compile("[零〇一二两三四五六七八九十百千万亿]{2,12}")


def zh_value(run: str) -> int | None:
    """三千六百 -> 3600, 十二 -> 12, 二十五万 -> 250000; None when it is not a well-formed number."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in _ZH_DIGIT:
            if digit is not None and run[0] not in "十":  # 一二 is not a number (a list of digits is read below)
                return _digits(run)
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            section += (1 if digit is None else digit) * _ZH_UNIT[ch]
            digit = None
        elif ch in _ZH_BIG:
            total += (section + (digit or 0)) * _ZH_BIG[ch]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


def _digits(run: str) -> int | None:
    if all(c in _ZH_DIGIT for c in run):  # 一九一三 -> 1913
        return int("".join(str(_ZH_DIGIT[c]) for c in run))
    return None


_EN_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "myriad": 10_000, "million": 1_000_000}
NUMBER_WORDS = frozenset(_EN_SMALL) | frozenset(_EN_TENS) | frozenset(_EN_SCALE)


def en_values(words: list[str]) -> list[int]:
    """Values of the number phrases in a run of lower-case words ("three thousand six hundred" -> [3600])."""
    out: list[int] = []
    total, current, seen = 0, 0, False
    for w in words + [""]:
        if w.isascii() and w.isdigit() and len(w) <= 12:
            if seen:
                out.append(total + current)
            out.append(int(w))
            total, current, seen = 0, 0, False
        elif w in _EN_SMALL or w in _EN_TENS:
            current += _EN_SMALL.get(w, 0) + _EN_TENS.get(w, 0)
            seen = True
        elif w in _EN_SCALE and seen:
            scale = _EN_SCALE[w]
            if scale >= 1000:
                total, current = (total + current) * scale, 0
            else:
                current *= scale
        elif w == "and" and seen:
            continue
        else:
            if seen:
                out.append(total + current)
            total, current, seen = 0, 0, False
    return [v for v in out if v >= MIN_VALUE]
