"""The candidate index: what is indexed per original, the interface, and the in-memory backend.

`IndexKeys` are the small parts of an original's fingerprints that go into an
index: a sample of its winnowed syllable hashes, a sample of its pinyin-window
codes, its Simhash, its MinHash LSH band keys, and its translation keys (the
rare concepts, names and numbers it posts, tagged with its language; a page
asks for its own concepts tagged with the other language, so a Chinese chapter
meets the English page that translates it, and English never meets English).
Any backend (this module's `MemoryIndex`, the tracker's Redis index) stores
them and answers the same question: which originals should this page be
verified against, and which channels proposed each?

Sampling keeps an index small: a winnowed hash is posted only when
mix64(hash) % sample == 0, so a chapter of 6,000 syllables posts about 40 of its
1,300 winnowed hashes, and a copied passage of 600 syllables still shares
about 4 of them with the page. The page's keys are sampled the same way.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from fingerprint.engine import EngineConfig, Prepared
from fingerprint.hashing import distinct, mix64
from fingerprint.lsh import LSHParams, band_keys
from fingerprint.postings import Postings
from fingerprint.simhash import hamming
from fingerprint.simhash_index import SimhashIndex

_U64 = np.uint64


def _no_keys() -> np.ndarray:
    return np.empty(0, dtype=_U64)


@dataclass(frozen=True)
class IndexParams:
    """How originals are indexed (stored with the index; pages are sampled alike)."""

    winnow_sample: int = 1  # post 1 in this many winnowed hashes (1 = all)
    pinyin_sample: int = 1  # post 1 in this many pinyin-window codes
    min_hits: int = 2  # shared sampled hashes (per channel) that make a candidate
    max_df: int = 64  # hashes posted by more originals than this are ignored
    # Shared translation keys that make a candidate: an original posts only ~60 (its rarest
    # concepts and names), and the tracker ranks the candidates by whole-text score before
    # aligning the best few (fingerprint.track.TRANSLATION_VERIFY).
    translation_min_hits: int = 3
    # At most this many translation candidates, those sharing the most keys (ties: the lower
    # number): a large index proposes many originals for any page in the other language, and
    # each proposed one is loaded and ranked before the best few are aligned.
    translation_most: int = 128


@dataclass
class IndexKeys:
    """What an index holds for one original (or asks for one page)."""

    winnow: np.ndarray  # uint64, distinct, sampled
    pinyin: np.ndarray  # uint64, distinct, sampled
    simhash: int  # 64-bit value (0 with bits == 0 when the Simhash is wider than 64 bits)
    simhash_bits: int
    bands: np.ndarray  # uint64 LSH band keys, one per band
    empty: bool = False  # no text: nothing to index or look up
    # uint64 translation keys an original posts (tagged with its own language) and a page asks
    # for (tagged with the other one); none where the channel is off or the language unknown
    translation: np.ndarray = field(default_factory=_no_keys)
    translation_query: np.ndarray = field(default_factory=_no_keys)

    def __post_init__(self):
        self.winnow = np.asarray(self.winnow, dtype=_U64)
        self.pinyin = np.asarray(self.pinyin, dtype=_U64)
        self.bands = np.asarray(self.bands, dtype=_U64)
        self.translation = np.asarray(self.translation, dtype=_U64)
        self.translation_query = np.asarray(self.translation_query, dtype=_U64)


def sample(values: np.ndarray, n: int) -> np.ndarray:
    """Distinct values kept by sampling 1 in n by a scrambled copy of each value
    (pinyin codes are packed digits, so the raw value modulo n would not be random)."""
    v = distinct(np.asarray(values, dtype=_U64))
    return v if n <= 1 else v[mix64(v) % _U64(n) == 0]


def index_keys(p: Prepared, config: EngineConfig, params: IndexParams, role: str = "both") -> IndexKeys:
    """The keys of a prepared text under `config` and `params`. `role` "original" leaves out
    what only a page asks for (the translation query), "page" what only an original posts
    (its translation keys, which need its sentences); "both" computes both."""
    if role not in ("both", "original", "page"):
        raise ValueError(f"role must be both, original or page, not {role!r}")
    on = config.channels
    none = np.empty(0, dtype=_U64)
    bands = none
    if "minhash" in on and p.minhash.size:
        b, r = LSHParams(config.lsh_threshold, config.minhash).bands_rows
        bands = band_keys(p.minhash, b, r)
    sim_ok = "simhash" in on and p.simhash.bits <= 64  # a channel left out has no keys (Simhash: 0 bits)
    translation = "translation" in on and not empty_text(p)
    return IndexKeys(
        winnow=sample(p.winnowed.hashes, params.winnow_sample) if "winnow" in on else none,
        pinyin=sample(p.initials.codes, params.pinyin_sample) if "pinyin" in on else none,
        simhash=p.simhash.value if sim_ok else 0,
        simhash_bits=p.simhash.bits if sim_ok else 0,
        bands=bands,
        empty=empty_text(p),
        translation=p.translation_keys("post") if translation and role != "page" else none,
        translation_query=p.translation_keys("query") if translation and role != "original" else none,
    )


def best_hits(docs: np.ndarray, hits: np.ndarray, least: int, most: int = 0) -> np.ndarray:
    """The documents with at least `least` hits; with `most`, only the `most` with the most hits
    (ties: the lower document number). Every backend proposes through this, so they agree."""
    docs, hits = np.asarray(docs, dtype=np.int64), np.asarray(hits)
    keep = hits >= least
    docs, hits = docs[keep], hits[keep]
    if most and docs.shape[0] > most:
        order = np.lexsort((docs, -hits.astype(np.int64)))[:most]
        docs = docs[order]
    return docs


def empty_text(p: Prepared) -> bool:
    """True when the text has no token (nothing to index or look up)."""
    return p.normalized.tokens.shape[0] == 0


class CandidateIndex(Protocol):
    """A store of originals' IndexKeys that proposes candidates for a page."""

    params: IndexParams

    def add(self, doc: int, keys: IndexKeys) -> None:
        """Index original number `doc` (replacing what it had)."""

    def add_many(self, items: Iterable[tuple[int, IndexKeys]]) -> None:
        """Index many originals at once (backends batch the writes)."""

    def remove(self, doc: int) -> None:
        """Forget original number `doc`."""

    def candidates(self, keys: IndexKeys) -> dict[int, set[str]]:
        """Originals to verify for a page, with the channels ("winnow", "pinyin",
        "simhash", "minhash", "translation") that proposed each."""

    def clear(self) -> None:
        """Forget everything."""

    def __len__(self) -> int:
        """How many originals are indexed."""


class MemoryIndex:
    """The in-process backend: numpy postings, permuted Simhash tables, LSH buckets."""

    def __init__(self, config: EngineConfig = EngineConfig(), params: IndexParams = IndexParams()):
        self.config = config
        self.params = params
        self.clear()

    def clear(self) -> None:
        self._winnow = Postings()
        self._pinyin = Postings()
        self._translation = Postings()
        self._simhash = SimhashIndex(bits=self.config.simhash_bits if self.config.simhash_bits <= 64 else 64,
                                     k=self.config.simhash_distance)
        self._simhash_of: dict[int, int] = {}  # current value; the tables keep old ones
        self._bands: dict[int, set[int]] = {}
        self._doc_bands: dict[int, np.ndarray] = {}
        self._docs: set[int] = set()

    def add(self, doc: int, keys: IndexKeys) -> None:
        if doc in self._docs:
            self.remove(doc)
        if keys.empty:
            return
        self._docs.add(doc)
        self._winnow.add(doc, keys.winnow)
        self._pinyin.add(doc, keys.pinyin)
        self._translation.add(doc, keys.translation)
        if keys.simhash_bits:
            self._simhash.add(doc, keys.simhash)
            self._simhash_of[doc] = keys.simhash
        self._doc_bands[doc] = keys.bands
        for k in keys.bands.tolist():
            self._bands.setdefault(k, set()).add(doc)

    def add_many(self, items: Iterable[tuple[int, IndexKeys]]) -> None:
        for doc, keys in items:
            self.add(doc, keys)

    def remove(self, doc: int) -> None:
        if doc not in self._docs:
            return
        self._docs.discard(doc)
        self._simhash_of.pop(doc, None)
        self._winnow.remove(doc)
        self._pinyin.remove(doc)
        self._translation.remove(doc)
        for k in self._doc_bands.pop(doc, np.empty(0, dtype=_U64)).tolist():
            bucket = self._bands.get(k)
            if bucket is not None:
                bucket.discard(doc)
                if not bucket:
                    del self._bands[k]

    def candidates(self, keys: IndexKeys) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        if keys.empty:
            return out
        p = self.params
        for channel, postings, hashes, least in (
                ("winnow", self._winnow, keys.winnow, p.min_hits),
                ("pinyin", self._pinyin, keys.pinyin, p.min_hits),
                ("translation", self._translation, keys.translation_query, p.translation_min_hits)):
            docs, hits = postings.hits(hashes, max_df=p.max_df)
            most = p.translation_most if channel == "translation" else 0
            for d in best_hits(docs, hits, least, most).tolist():
                out.setdefault(d, set()).add(channel)
        if keys.simhash_bits and len(self._simhash):
            for d, dist in self._simhash.query(keys.simhash):
                # an old value of a re-added or removed original no longer counts
                if self._simhash_of.get(d) is not None and hamming(self._simhash_of[d], keys.simhash) == dist:
                    out.setdefault(d, set()).add("simhash")
        for k in keys.bands.tolist():
            for d in self._bands.get(k, ()):
                out.setdefault(d, set()).add("minhash")
        return out

    def __len__(self) -> int:
        return len(self._docs)
