"""Exact and semantic keys: one hash per text for exact duplicates and keyword-level duplicates.

The exact key is the XXH3-128 of the canonical text (fingerprint.normalize), so
copies that differ only in whitespace, punctuation, full-width letters,
traditional characters or site watermarks share it.

The semantic key (the "semantic fingerprint" of seed 000) keeps the n
heaviest TF-IDF keywords, sorts them by string (so the key does not depend on
their weights' order, only on which words they are), and hashes the list:
    keywords 天安门 北京 升旗 -> sorted 北京 升旗 天安门 -> xxh64("北京\\n升旗\\n天安门")
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import xxhash

from .errors import IncompatibleFingerprints, InputError, ParameterError
from .features import TfIdf, feature_words, term_frequencies, top_keywords
from .normalize import NormalizedText, normalize


def exact_key(text: str | NormalizedText) -> str:
    """32 hex digits: XXH3-128 of the canonical text.

    >>> exact_key("他們說：ＯＫ") == exact_key("他们 说 ok")
    True
    """
    if isinstance(text, str):
        text = normalize(text)
    elif not isinstance(text, NormalizedText):
        raise InputError(f"exact_key needs text (str) or a NormalizedText, got {type(text).__name__}")
    return xxhash.xxh3_128_hexdigest(text.canonical.encode("utf-8"))


@dataclass(frozen=True)
class SemanticKey:
    """A top-n keyword signature with the parameters that made it."""

    value: int  # xxh64 of the sorted keywords joined by newlines
    keywords: tuple[str, ...]  # sorted by string
    n: int
    weighting: str  # "tfidf" with a fitted model, "tf" without
    synonyms: bool  # whether a synonym map was applied first

    def params(self) -> tuple:
        return (self.n, self.weighting, self.synonyms)

    def hex(self) -> str:
        return format(self.value, "016x")

    def same(self, other: SemanticKey) -> bool:
        """True when both texts have the same keywords (refuses keys made with other parameters)."""
        if self.params() != other.params():
            raise IncompatibleFingerprints("semantic keys", self.params(), other.params())
        return self.value == other.value


def keywords_key(keywords: Iterable[str]) -> int:
    """xxh64 of the keywords sorted by string and joined with newlines."""
    return xxhash.xxh64_intdigest("\n".join(sorted(keywords)).encode("utf-8"))


def semantic_key(
    text: str | NormalizedText,
    model: TfIdf | None = None,
    *,
    n: int = 8,
    synonyms: Mapping[str, str] | None = None,
    stopwords: Iterable[str] | None = None,
    min_len: int = 2,
) -> SemanticKey:
    """The semantic fingerprint: the top-n keywords (TF-IDF with `model`, else TF), re-sorted and hashed.

    Words shorter than `min_len` characters are left out (single characters carry little meaning);
    `stopwords=None` uses the built-in Chinese list.
    """
    if not isinstance(n, int) or n < 1:
        raise ParameterError(f"n (keywords per key) must be a positive integer, got {n!r}; 8 is usual")
    terms = feature_words(text, stopwords=stopwords, synonyms=synonyms, min_len=min_len)
    weights = model.weights(terms) if model is not None else term_frequencies(terms, relative=True)
    kws = tuple(sorted(top_keywords(weights, n))) if weights else ()
    return SemanticKey(keywords_key(kws), kws, n, "tfidf" if model is not None else "tf", bool(synonyms))
