"""k-shingle sets and their exact Jaccard and containment: the brute-force baseline.

A shingle is a run of k consecutive units (CJK characters and whole words of a
normalised text, or segmented words); each is hashed to 64 bits and a text is
the set of its shingle hashes. Example with character 2-shingles:
    "天地玄黄" -> {天地, 地玄, 玄黄};  "天地玄" -> {天地, 地玄}
    Jaccard = 2 / 3, containment of the second in the first = 2 / 2 = 1.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from fingerprint.errors import IncompatibleFingerprints, InputError, ParameterError
from fingerprint.hashing import kgram_hashes
from fingerprint.normalize import NormalizedText, normalize


@dataclass(frozen=True)
class ShingleSet:
    """The sorted, distinct shingle hashes of a text, with how they were made."""

    hashes: np.ndarray  # sorted unique uint64
    k: int
    unit: str  # "char" (tokens of a NormalizedText) or "word"

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    def params(self) -> tuple[int, str]:
        return (self.k, self.unit)


def _check_k(k: int) -> None:
    if not isinstance(k, int) or k < 1:
        raise ParameterError(f"shingle length k must be a positive integer, got {k!r}")


def char_shingles(text: str | NormalizedText, k: int = 5) -> ShingleSet:
    """k-shingles of a normalised text's tokens (CJK characters and whole words)."""
    _check_k(k)
    if isinstance(text, str):
        text = normalize(text)
    elif not isinstance(text, NormalizedText):
        raise InputError(f"char_shingles needs text (str) or a NormalizedText, got {type(text).__name__}")
    return ShingleSet(np.unique(kgram_hashes(text.tokens, k)), k, "char")


def word_shingles(words: Sequence[str], k: int = 3) -> ShingleSet:
    """k-shingles of a word list (e.g. fingerprint.features.words(text))."""
    _check_k(k)
    if isinstance(words, str):
        raise ParameterError("word_shingles takes a list of words; split the text with fingerprint.features.words()")
    units = np.array([xxhash.xxh64_intdigest(w.encode("utf-8")) for w in words], dtype=np.uint64)
    return ShingleSet(np.unique(kgram_hashes(units, k)), k, "word")


def _common(a: ShingleSet, b: ShingleSet) -> int:
    if a.params() != b.params():
        raise IncompatibleFingerprints("shingle sets", a.params(), b.params())
    return int(np.intersect1d(a.hashes, b.hashes, assume_unique=True).shape[0])


def jaccard(a: ShingleSet, b: ShingleSet) -> float:
    """|A & B| / |A | B|; 1.0 for two empty sets (identical texts)."""
    inter = _common(a, b)
    union = len(a) + len(b) - inter
    return 1.0 if union == 0 else inter / union


def containment(a: ShingleSet, b: ShingleSet) -> float:
    """|A & B| / |A|: the share of A's shingles found in B (1.0 when A is empty)."""
    inter = _common(a, b)
    return 1.0 if len(a) == 0 else inter / len(a)
