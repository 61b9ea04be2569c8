"""Winnowing (Schleimer, Wilkerson, Aiken 2003): k-gram hashes with positions.

Of every `window` consecutive k-gram hashes the smallest is kept (the rightmost
on ties), so any shared run of at least window + k - 1 units is guaranteed to
share a kept hash, whatever surrounds it. Kept hashes carry their positions,
which is what lets a match point at the copied passage.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fingerprint.errors import ParameterError
from fingerprint.hashing import kgram_hashes


@dataclass(frozen=True)
class WinnowParams:
    k: int = 8  # units per k-gram
    window: int = 8  # k-grams per window; guarantee threshold = k + window - 1 units
    seed: int = 0

    def __post_init__(self):
        if self.k < 1 or self.window < 1:
            raise ParameterError(f"winnowing needs k >= 1 and window >= 1, got k={self.k}, window={self.window}")

    @property
    def guarantee(self) -> int:
        """Every shared run of at least this many units shares a selected hash."""
        return self.k + self.window - 1


@dataclass
class Winnowed:
    """Selected k-gram hashes and the unit positions where their k-grams start."""

    hashes: np.ndarray  # uint64
    positions: np.ndarray  # int64, increasing
    params: WinnowParams


_POS_BITS = 20  # windows are shorter than 2**20 k-grams
_POS_MASK = np.uint64((1 << _POS_BITS) - 1)


def sliding_min(a: np.ndarray, window: int) -> np.ndarray:
    """out[i] = min(a[i : i + window]) in O(n log window) vectorised passes.

    After the doubling passes out[i] = min(a[i : i + span]) for the largest power
    of two span <= window; two overlapping spans then cover each window.
    """
    out = a
    span = 1
    while span * 2 <= window:
        out = np.minimum(out[:-span], out[span:])
        span *= 2
    m = a.shape[0] - window + 1
    return np.minimum(out[:m], out[window - span : window - span + m])


def select(hashes: np.ndarray, window: int) -> np.ndarray:
    """Positions chosen by winnowing: the rightmost minimum of each window, deduplicated.

    Each hash is packed with its reversed position in the low 20 bits
    (key = hash_high_44_bits | (n - 1 - j) mod 2**20), so the minimum key of a
    window is its minimum hash and, on ties, its rightmost position.
    >>> select(np.array([5, 3, 9, 3, 7], dtype=np.uint64) << np.uint64(32), 3).tolist()
    [1, 3]
    """
    n = hashes.shape[0]
    if window >= 1 << _POS_BITS:
        raise ParameterError(f"winnowing window must be below {1 << _POS_BITS}, got {window}")
    if n == 0:
        return np.empty(0, dtype=np.int64)
    window = min(window, n)
    rev = (np.arange(n - 1, -1, -1, dtype=np.uint64)) & _POS_MASK
    keys = (np.asarray(hashes, dtype=np.uint64) & ~_POS_MASK) | rev
    low = (sliding_min(keys, window) & _POS_MASK).astype(np.int64)
    i = np.arange(low.shape[0], dtype=np.int64)
    # j = n - 1 - low (mod 2**20), and the one such j inside [i, i + window).
    picks = i + ((n - 1 - low - i) & int(_POS_MASK))
    keep = np.ones(picks.shape[0], dtype=bool)
    keep[1:] = picks[1:] != picks[:-1]
    return picks[keep]


def winnow(units: np.ndarray, params: WinnowParams = WinnowParams()) -> Winnowed:
    """Winnow a unit sequence: hash its k-grams, then keep one per window."""
    h = kgram_hashes(units, params.k, params.seed)
    pos = select(h, params.window)
    return Winnowed(hashes=h[pos], positions=pos, params=params)
