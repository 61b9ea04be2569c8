"""What a text posts in the candidate index's translation channel, and what a page asks for.

An original posts a small fixed budget of keys (at most 52, so the channel adds at most
half to the Redis index's bytes per chapter, and a long chapter is not proposed for every
page merely for being long): its MAX_CONCEPTS most telling concepts (at least KEY_IDF_MIN
in the dictionary, ranked by weight times the square root of their count; a Chinese
word's first senses, quick.SENSES) and the MAX_NAMES names it repeats most (a character's name
recurs through a chapter; chance pairs of syllables do not). A page asks for every such
concept and name it has. The index is a coarse filter (a few shared keys make a
candidate); the tracker ranks what it proposes by whole-text score (rank.py) and aligns
the best few.

Each key is tagged with the language of the text that *posts* it, so a Chinese chapter's keys meet
what an English page *asks for* (the same concepts, tagged "zh"), and never an English
page's own: English never meets English in this channel, nor Chinese Chinese.
"""
from __future__ import annotations

import numpy as np

from fingerprint.hashing import mix64
from fingerprint.translation.lexicon import lexicon
from fingerprint.translation.quick import Reading

KEY_IDF_MIN = 7.0
MAX_CONCEPTS = 46
MAX_NAMES = 6
_TAG = {"zh": np.uint64(0x7A68_5452_414E_5333), "en": np.uint64(0x656E_5452_414E_5333)}
_OTHER = {"zh": "en", "en": "zh"}


def concept_keys(reading: Reading, role: str = "post") -> list[int]:
    """The text's keys before tagging: concepts and names (see the module docstring)."""
    idf = lexicon().idf
    concepts = {c: n for c, n in reading.concepts.items() if idf[c] >= KEY_IDF_MIN}
    least = 2 if reading.language == "zh" else 1  # Chinese name keys are every pair of syllables
    names = sorted(((-n, k) for k, n in reading.names.items() if n >= least))
    if role == "post":
        chosen = sorted(concepts, key=lambda c: (-(concepts[c] ** 0.5) * float(idf[c]), c))[:MAX_CONCEPTS]
        return chosen + [k for _, k in names[:MAX_NAMES]]
    return sorted(concepts) + [k for _, k in names]


def translation_keys(reading: Reading, role: str = "post") -> np.ndarray:
    """uint64 keys of a text: `post` tags them with its own language (what an original posts),
    `query` with the other one (what a page asks the index for)."""
    if reading.language not in _TAG:
        return np.empty(0, dtype=np.uint64)
    lang = reading.language if role == "post" else _OTHER[reading.language]
    raw = concept_keys(reading, role)
    if not raw:
        return np.empty(0, dtype=np.uint64)
    return np.unique(mix64(np.asarray(raw, dtype=np.uint64) ^ _TAG[lang]))


__all__ = ["KEY_IDF_MIN", "MAX_CONCEPTS", "MAX_NAMES", "concept_keys", "translation_keys"]
