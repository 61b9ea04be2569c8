"""Every concept's weight for ranking and reading: its dictionary weight above FLOOR.

The whole-text reading (quick.py) sums them per Chinese word, and the ranking
of candidate originals (rank.py) sums them over shared concepts.
"""
from __future__ import annotations

import numpy as np

from fingerprint.translation.lexicon import lexicon

__all__ = ["FLOOR", "word_weights"]

FLOOR = 3.0  # a concept weighs its dictionary weight above this: the commonest words tell little apart

_WEIGHTS: list = []


def word_weights() -> np.ndarray:
    """Every concept's weight above FLOOR, as an array (computed once)."""
    if not _WEIGHTS:
        _WEIGHTS.append(np.maximum(lexicon().idf.astype(np.float64) - FLOOR, 0.0))
    return _WEIGHTS[0]
