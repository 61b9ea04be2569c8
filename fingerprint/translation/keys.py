"""What a text posts in the candidate index's translation channel, and what a page asks for.

Keys are the text's rare concepts (dictionary weight of at least KEY_IDF_MIN), the
name keys it repeats (a character's name recurs through a chapter; chance pairs of
syllables do not), at most MAX_NAMES of them, and its numbers. Each key is tagged
with the language of the text that *posts* it, so a Chinese chapter's keys meet the
keys an English page *asks for* (the same concepts, tagged "zh"), and never an
English page's own: English never meets English in this channel, nor Chinese Chinese.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..hashing import mix64
from .bags import NAME_BASE, NUMBER_BASE, TextBags
from .lexicon import lexicon

KEY_IDF_MIN = 8.0
MAX_NAMES = 96
MAX_CONCEPTS = 1024
_TAG = {"zh": np.uint64(0x7A68_5452_414E_5331), "en": np.uint64(0x656E_5452_414E_5331)}
_OTHER = {"zh": "en", "en": "zh"}


def concept_keys(bags: TextBags) -> list[int]:
    """The text's keys before tagging: rare concepts, repeated names, numbers."""
    idf = lexicon().idf
    concepts: Counter[int] = Counter()
    for s in bags.concepts:
        concepts.update(c for c in s if idf[c] >= KEY_IDF_MIN)
    names: Counter[int] = Counter()
    for s in bags.names:
        names.update(s)
    least = 2 if bags.language == "zh" else 1  # English name keys come from names only
    keys = [c for c, _ in concepts.most_common(MAX_CONCEPTS)]
    keys += [k for k, n in names.most_common(MAX_NAMES) if n >= least]
    keys += sorted({k for s in bags.numbers for k in s})
    return keys


def translation_keys(bags: TextBags, role: str = "post") -> np.ndarray:
    """uint64 keys of a text: `post` tags them with its own language (what an original posts),
    `query` with the other one (what a page asks the index for)."""
    if bags.language not in _TAG:
        return np.empty(0, dtype=np.uint64)
    lang = bags.language if role == "post" else _OTHER[bags.language]
    raw = np.asarray(concept_keys(bags), dtype=np.uint64)
    if not raw.shape[0]:
        return raw
    return np.unique(mix64(raw ^ _TAG[lang]))


__all__ = ["KEY_IDF_MIN", "NAME_BASE", "NUMBER_BASE", "concept_keys", "translation_keys"]
