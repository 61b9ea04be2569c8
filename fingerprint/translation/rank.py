"""Which of the originals the index proposed are worth aligning: a whole-text score, cheap.

The candidate index counts shared keys; a long chapter shares more of anything with
any page. Before the sentence alignment (align.py), the proposed originals are ranked by
a weighted score of the two texts' shared concepts and names (`score`), so only the best
few are aligned. Both vectors come from the whole-text reading (quick.py), once per text.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fingerprint.translation.quick import Reading
from fingerprint.translation.weights import word_weights

NAME_WEIGHT = 1.5  # Chinese name keys are every repeated pair of syllables: a hint, not proof
NUMBER_WEIGHT = 5.0


@dataclass(frozen=True)
class DocVector:
    language: str
    concepts: frozenset[int]
    names: frozenset[int]
    numbers: frozenset[int]
    weight: float  # what it could match at most


def doc_vector(reading: Reading) -> DocVector:
    """A text's vector for ranking, from its whole-text reading (quick.read)."""
    w = word_weights()
    concepts = frozenset(reading.concepts)
    if reading.language == "zh":
        # a Chinese word is one word whichever of its senses the translator chose: it weighs its
        # best sense once (quick.read sums that), not the sum of its senses (favouring long pages)
        base = reading.word_weight
        least = 2  # Chinese pairs of syllables repeat when they are a name
    else:
        base = float(w[np.fromiter(concepts, dtype=np.int64, count=len(concepts))].sum()) if concepts else 0.0
        least = 1
    names = frozenset(k for k, n in reading.names.items() if n >= least)
    weight = base + NAME_WEIGHT * len(names)
    return DocVector(reading.language, concepts, names, frozenset(), weight)


def _shared(a: DocVector, b: DocVector) -> float:
    en, zh = (a, b) if a.language == "en" else (b, a)
    common = en.concepts & zh.concepts
    shared = float(word_weights()[np.fromiter(common, dtype=np.int64, count=len(common))].sum()) if common else 0.0
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
