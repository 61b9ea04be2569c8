"""What a text posts in the candidate index's translation channel, and what a page asks for.

An original posts a small fixed budget of keys (at most 52, so the channel adds at most
half to the Redis index's bytes per chapter, and a long chapter is not proposed for every
page merely for being long): its MAX_CONCEPTS most telling concepts (at least KEY_IDF_MIN
in the dictionary, ranked by weight times the square root of their count; a Chinese
word's first SENSES senses) and the MAX_NAMES names it repeats most (a character's name
recurs through a chapter; chance pairs of syllables do not). A page asks for every such
concept and name it has. The index is a coarse filter (a few shared keys make a
candidate); the tracker ranks what it proposes by whole-text score (rank.py) and aligns
the best few.

Each key is tagged with the language of the text that *posts* it, so a Chinese chapter's keys meet
what an English page *asks for* (the same concepts, tagged "zh"), and never an English
page's own: English never meets English in this channel, nor Chinese Chinese.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..hashing import mix64
from .bags import TextBags
from .lexicon import lexicon

KEY_IDF_MIN = 7.0
SENSES = 3
MAX_CONCEPTS = 46
MAX_NAMES = 6
_TAG = {"zh": np.uint64(0x7A68_5452_414E_5333), "en": np.uint64(0x656E_5452_414E_5333)}
_OTHER = {"zh": "en", "en": "zh"}


def _concept_counts(bags: TextBags) -> Counter[int]:
    idf = lexicon().idf
    counts: Counter[int] = Counter()
    if bags.language == "zh":
        for sent in bags.units:
            for u in sent:
                counts.update(c for c in u.tolist()[:SENSES] if idf[c] >= KEY_IDF_MIN)
    else:
        for s in bags.concepts:
            counts.update(c for c in s if idf[c] >= KEY_IDF_MIN)
    return counts


def _names(bags: TextBags, most: int | None) -> list[int]:
    counts: Counter[int] = Counter()
    for s in bags.names:
        counts.update(s)
    least = 2 if bags.language == "zh" else 1  # English name keys come from names only
    return [k for k, n in counts.most_common(most) if n >= least]


def concept_keys(bags: TextBags, role: str = "post") -> list[int]:
    """The text's keys before tagging: concepts and names."""
    idf = lexicon().idf
    counts = _concept_counts(bags)
    if role == "post":
        concepts = sorted(counts, key=lambda c: (-(counts[c] ** 0.5) * float(idf[c]), c))[:MAX_CONCEPTS]
        names = _names(bags, MAX_NAMES)
    else:
        concepts, names = sorted(counts), _names(bags, None)
    return concepts + names


def query_keys(text: str, language: str) -> np.ndarray:
    """What a page asks the index for, read straight from its text (quick.py): every rare
    concept and name it has, tagged with the other language."""
    if language not in _TAG:
        return np.empty(0, dtype=np.uint64)
    from .quick import query_keys as read

    idf = lexicon().idf
    concepts, names = read(text, language)
    raw = [c for c in concepts if idf[c] >= KEY_IDF_MIN] + list(names)
    if not raw:
        return np.empty(0, dtype=np.uint64)
    return np.unique(mix64(np.asarray(raw, dtype=np.uint64) ^ _TAG[_OTHER[language]]))


def translation_keys(bags: TextBags, role: str = "post") -> np.ndarray:
    """uint64 keys of a text: `post` tags them with its own language (what an original posts),
    `query` with the other one (what a page asks the index for)."""
    if bags.language not in _TAG:
        return np.empty(0, dtype=np.uint64)
    lang = bags.language if role == "post" else _OTHER[bags.language]
    raw = concept_keys(bags, role)
    if not raw:
        return np.empty(0, dtype=np.uint64)
    return np.unique(mix64(np.asarray(raw, dtype=np.uint64) ^ _TAG[lang]))


__all__ = ["KEY_IDF_MIN", "MAX_CONCEPTS", "MAX_NAMES", "concept_keys", "query_keys", "translation_keys"]
