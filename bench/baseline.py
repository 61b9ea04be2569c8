"""The brute-force baseline: exact character n-gram containment, every page against every original.

Text is normalised only by dropping whitespace, punctuation, symbols and control characters
(no case folding, no traditional/simplified mapping, no watermark removal). Each document
becomes the sorted array of its distinct n-grams, hashed to uint64 with a polynomial rolling
hash. A (page, original) pair is a copy when

    shared >= min_shared   and   max(shared / |original|, shared / |page|) >= min_containment

with the defaults n = 8, min_shared = 50, min_containment = 0.05. The containment of the
page catches a page that copies a small part of a long original and vice versa (an excerpt
of 10% of a chapter is 0.10 of the original); 50 shared 8-grams is a passage of at least
about 57 characters in common, far above what two unrelated chapters of classical novels
share by chance (stock phrases such as 且听下回分解 are shorter than that).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

_P = np.uint64(0x100000001B3)  # odd multiplier of the rolling hash


@lru_cache(maxsize=1)
def _keep_table() -> np.ndarray:
    """Boolean table over the BMP and the CJK supplementary planes: True = keep the code point."""
    size = 0x32000
    keep = np.zeros(size, dtype=bool)
    for cp in range(size):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        cat = unicodedata.category(chr(cp))
        keep[cp] = cat[0] in "LNM" or cat == "Co"
    return keep


def clean_codepoints(text: str) -> np.ndarray:
    """The code points of `text` without whitespace, punctuation and symbols."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
    keep = _keep_table()
    inside = cps < keep.shape[0]
    mask = np.ones(cps.shape[0], dtype=bool)
    mask[inside] = keep[cps[inside].astype(np.int64)]
    return cps[mask]


def ngram_hashes(text: str, n: int = 8) -> np.ndarray:
    """Sorted distinct uint64 hashes of the character n-grams of the cleaned text."""
    cps = clean_codepoints(text)
    m = cps.shape[0] - n + 1
    if m <= 0:
        return np.empty(0, dtype=np.uint64)
    h = np.zeros(m, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = h * _P + (cps[j : j + m] + np.uint64(1))
        # Final mix so that nearby n-grams spread over the whole range.
        h ^= h >> np.uint64(31)
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    return np.unique(h)


def shared_count(a: np.ndarray, b: np.ndarray) -> int:
    """Number of common values of two sorted distinct arrays."""
    if a.shape[0] == 0 or b.shape[0] == 0:
        return 0
    if a.shape[0] > b.shape[0]:
        a, b = b, a
    idx = np.searchsorted(b, a)
    idx[idx == b.shape[0]] = b.shape[0] - 1
    return int(np.count_nonzero(b[idx] == a))


@dataclass
class BaselineMatch:
    page: str
    original: str
    shared: int
    containment: float  # shared / distinct n-grams of the original
    page_share: float  # shared / distinct n-grams of the page


@dataclass
class Baseline:
    n: int = 8
    min_containment: float = 0.05
    min_shared: int = 50

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not 0.0 < self.min_containment <= 1.0:
            raise ValueError(f"min_containment must be in (0, 1], got {self.min_containment}")

    def fingerprints(self, docs: Iterable) -> tuple[list[str], list[np.ndarray]]:
        keys, grams = [], []
        for d in docs:
            keys.append(d.key)
            grams.append(ngram_hashes(d.text, self.n))
        return keys, grams

    def compare(self, originals: Sequence, pages: Sequence) -> list[BaselineMatch]:
        """Every page against every original; the pairs judged copies."""
        okeys, ograms = self.fingerprints(originals)
        out: list[BaselineMatch] = []
        for page in pages:
            pg = ngram_hashes(page.text, self.n)
            if pg.shape[0] == 0:
                continue
            for ok, og in zip(okeys, ograms):
                s = shared_count(pg, og)
                if s < self.min_shared:
                    continue
                c_o = s / og.shape[0]
                c_p = s / pg.shape[0]
                if max(c_o, c_p) >= self.min_containment:
                    out.append(BaselineMatch(page.key, ok, s, c_o, c_p))
        return out
