"""Which of the originals the index proposed are worth aligning: a whole-text score, cheap.

The candidate index counts shared keys; a long chapter shares more of anything with
any page. Before the sentence alignment (align.py), the proposed originals are ranked by
a weighted Dice coefficient of the two texts' concepts, names and numbers, so only the
best few are aligned. Both vectors are computed once per text (`doc_vector`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .bags import TextBags
from .lexicon import lexicon

SENSES = 3  # senses of a Chinese word counted (the first ones are the usual translations)
NAME_WEIGHT = 1.5  # Chinese name keys are every repeated pair of syllables: a hint, not proof
NUMBER_WEIGHT = 5.0
FLOOR = 3.0  # a concept weighs its dictionary weight above this: the commonest words tell little apart


@dataclass(frozen=True)
class DocVector:
    language: str
    concepts: frozenset[int]
    names: frozenset[int]
    numbers: frozenset[int]
    weight: float  # what it could match at most


def _w(idf: float) -> float:
    return max(0.0, float(idf) - FLOOR)


_WEIGHTS: list = []


def _weights():
    """Every concept's weight above the floor, as an array (computed once)."""
    if not _WEIGHTS:
        _WEIGHTS.append(np.maximum(lexicon().idf.astype(np.float64) - FLOOR, 0.0))
    return _WEIGHTS[0]


def doc_vector(bags: TextBags) -> DocVector:
    idf = lexicon().idf
    if bags.language == "zh":
        # A Chinese word is one word whichever of its senses the translator chose: it weighs
        # its best sense once, not the sum of its senses (which would favour long pages).
        words = {tuple(u.tolist()[:SENSES]) for sent in bags.units for u in sent}
        concepts = {c for w in words for c in w}
        base = sum(max(_w(idf[c]) for c in w) for w in words if w)
    else:
        concepts = {c for s in bags.concepts for c in s}
        base = float(sum(_w(idf[c]) for c in concepts))
    counts: Counter[int] = Counter()
    for s in bags.names:
        counts.update(s)
    least = 2 if bags.language == "zh" else 1  # Chinese pairs of syllables repeat when they are a name
    names = frozenset(k for k, n in counts.items() if n >= least)
    numbers = frozenset(k for s in bags.numbers for k in s)
    weight = base + NAME_WEIGHT * len(names) + NUMBER_WEIGHT * len(numbers)
    return DocVector(bags.language, frozenset(concepts), names, numbers, weight)


def _shared(a: DocVector, b: DocVector) -> float:
    en, zh = (a, b) if a.language == "en" else (b, a)
    common = en.concepts & zh.concepts
    shared = float(_weights()[np.fromiter(common, dtype=np.int64, count=len(common))].sum()) if common else 0.0
    return shared + NAME_WEIGHT * len(en.names & zh.names) + NUMBER_WEIGHT * len(a.numbers & b.numbers)


def score(page: DocVector, original: DocVector) -> float:
    """How worth aligning `original` is for `page`: the Dice coefficient for a Chinese original;
    for an English original, what the page shares with it over its weight to the power 3/4
    (a Chinese page's words carry several senses each, so the sum in Dice's denominator
    would favour long English originals). Measured in bench/translation.py."""
    if original.language == "en":
        return _shared(page, original) / (original.weight ** 0.75) if original.weight > 0 else 0.0
    return dice(page, original)


def dice(a: DocVector, b: DocVector) -> float:
    """Weighted Dice coefficient of two texts in different languages (0..1)."""
    den = (a.weight + b.weight) / 2
    return _shared(a, b) / den if den > 0 else 0.0
