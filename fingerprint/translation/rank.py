"""Which of the originals the index proposed are worth aligning: a whole-text score, cheap.

The candidate index counts shared keys; a long chapter shares more of anything with
any page. Before the sentence alignment (align.py), the proposed originals are ranked by
a weighted Dice coefficient of the two texts' concepts, names and numbers, so only the
best few are aligned. Both vectors are computed once per text (`doc_vector`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .bags import TextBags
from .lexicon import lexicon

SENSES = 3  # senses of a Chinese word counted (the first ones are the usual translations)
NAME_WEIGHT = 10.0
NUMBER_WEIGHT = 5.0


@dataclass(frozen=True)
class DocVector:
    language: str
    concepts: frozenset[int]
    names: frozenset[int]
    numbers: frozenset[int]
    weight: float  # what it could match at most


def doc_vector(bags: TextBags) -> DocVector:
    idf = lexicon().idf
    if bags.language == "zh":
        concepts = {c for sent in bags.units for u in sent for c in u.tolist()[:SENSES]}
    else:
        concepts = {c for s in bags.concepts for c in s}
    counts: Counter[int] = Counter()
    for s in bags.names:
        counts.update(s)
    least = 2 if bags.language == "zh" else 1  # Chinese pairs of syllables repeat when they are a name
    names = frozenset(k for k, n in counts.items() if n >= least)
    numbers = frozenset(k for s in bags.numbers for k in s)
    weight = float(sum(idf[c] for c in concepts)) + NAME_WEIGHT * len(names) + NUMBER_WEIGHT * len(numbers)
    return DocVector(bags.language, frozenset(concepts), names, numbers, weight)


def dice(a: DocVector, b: DocVector) -> float:
    """Weighted Dice coefficient of two texts in different languages (0..1)."""
    idf = lexicon().idf
    small, big = (a, b) if len(a.concepts) <= len(b.concepts) else (b, a)
    shared = sum(float(idf[c]) for c in small.concepts if c in big.concepts)
    en, zh = (a, b) if a.language == "en" else (b, a)
    shared += NAME_WEIGHT * len(en.names & zh.names) + NUMBER_WEIGHT * len(a.numbers & b.numbers)
    den = (a.weight + b.weight) / 2
    return shared / den if den > 0 else 0.0
