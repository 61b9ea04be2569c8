"""Which language a text is written in, for the translation channel: "zh", "en" or "" (neither, or too little).

Counted on the normalised tokens: every CJK character is a token and so is every
Latin word. A chapter in Chinese with a few English words is "zh"; an English page
under a Chinese site's menus is "en" as long as its words outnumber the menu's
characters. Text with fewer than MIN_TOKENS tokens has no language here (the channel
leaves it alone).
"""
from __future__ import annotations

import numpy as np

from fingerprint.normalize import CJK, LATIN, NormalizedText

MIN_TOKENS = 20
ZH_SHARE = 0.5  # CJK characters among tokens at least this: Chinese
EN_SHARE = 0.5  # Latin words among tokens at least this: English (or another Latin-script language)


def language_of(nt: NormalizedText) -> str:
    n = len(nt)
    if n < MIN_TOKENS:
        return ""
    cjk = nt.cjk_share
    if cjk >= ZH_SHARE:
        return "zh"
    # a word token's first unit is LATIN; count tokens whose first unit is a Latin letter
    first = np.searchsorted(nt.unit_pos, nt.tok_start)
    first = first[first < nt.kinds.shape[0]]
    latin = float(np.count_nonzero(nt.kinds[first] == LATIN)) / n
    return "en" if latin >= EN_SHARE else ""


__all__ = ["language_of", "CJK"]
