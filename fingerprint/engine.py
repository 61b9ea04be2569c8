"""The engine: one configuration, one way to fingerprint a text, one way to judge a pair.

`prepare` runs the stages every text goes through (normalise -> sounds ->
channels); `judge` decides whether a page copies an original and with what
evidence. `simtool` and the tracker both call these, with the same
`EngineConfig`, so a result offline equals a result online.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .errors import ParameterError
from .evidence import Run, SortedHashes, align, covered
from .hashing import kgram_hashes
from .initials import InitialsFingerprint, InitialsParams
from .initials import fingerprint as initials_fingerprint
from .initials import shared_share
from .minhash import MinHash, MinHashParams, minhash
from .models import Match, Span
from .normalize import NormalizedText, normalize
from .pinyin import Sounds, to_sounds
from .simhash import Simhash, text_simhash
from .winnowing import WinnowParams, Winnowed, select

CHANNELS = ("simhash", "minhash", "pinyin", "winnow")


@dataclass(frozen=True)
class EngineConfig:
    """Every parameter that changes a fingerprint or a verdict, with its default."""

    # winnow: k-grams of sound units (toneless syllables), so homophones match;
    # "characters" uses the canonical characters and words instead (for comparison)
    winnow: WinnowParams = WinnowParams(k=8, window=8)
    winnow_units: str = "syllables"
    minhash: MinHashParams = MinHashParams()
    minhash_ngram: int = 3  # token n-grams as MinHash shingles
    lsh_threshold: float = 0.5
    simhash_bits: int = 64
    simhash_ngram: int = 2
    simhash_distance: int = 3  # near-duplicate when Hamming distance <= this
    initials: InitialsParams = InitialsParams()
    # verdict
    min_run: int = 20  # units: shorter shared runs are stock phrases
    min_copied: int = 60  # units copied in all, at least
    min_containment: float = 0.05  # share of the original found in the page
    min_page_share: float = 0.3  # or share of the page copied from the original
    min_long_run: int = 150  # or one copied passage at least this long, whatever its share

    def __post_init__(self):
        if self.winnow_units not in ("syllables", "characters"):
            raise ParameterError(f"winnow_units must be syllables or characters, got {self.winnow_units!r}")
        if self.min_run < self.winnow.k:
            raise ParameterError(f"min_run ({self.min_run}) must be at least the k-gram length ({self.winnow.k})")
        for name in ("min_containment", "min_page_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ParameterError(f"{name} must be between 0 and 1, got {v}")

    def to_dict(self) -> dict[str, Any]:
        """All parameters, for storing next to fingerprints."""
        return asdict(self)


@dataclass
class Prepared:
    """A text with everything the channels need, computed once."""

    key: str
    text: str
    normalized: NormalizedText
    sounds: Sounds
    kgrams: np.ndarray  # k-gram hash at every unit position (syllables or characters)
    unit_start: np.ndarray  # raw offset where each winnowed unit starts
    unit_end: np.ndarray
    winnowed: Winnowed
    minhash: MinHash
    simhash: Simhash
    initials: InitialsFingerprint
    meta: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def sorted_kgrams(self) -> SortedHashes:
        """The k-gram hashes sorted once, for verifying this text against many originals."""
        return SortedHashes.of(self.kgrams)

    @property
    def units(self) -> int:
        return int(self.unit_start.shape[0])

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw character offsets of units [start, end)."""
        return int(self.unit_start[start]), int(self.unit_end[end - 1])


def prepare(key: str, text: str, config: EngineConfig = EngineConfig(), meta: dict | None = None) -> Prepared:
    """Normalise a text and compute every channel's fingerprint."""
    nt = normalize(text)
    sounds = to_sounds(nt)
    if config.winnow_units == "syllables":
        units, start, end = sounds.units, sounds.start, sounds.end
    else:
        units, start, end = nt.tokens, nt.tok_start, nt.tok_end
    kg = kgram_hashes(units, config.winnow.k, config.winnow.seed)
    pos = select(kg, config.winnow.window)
    shingles = kgram_hashes(nt.tokens, min(config.minhash_ngram, max(1, len(nt))))
    return Prepared(
        key=key,
        text=text,
        normalized=nt,
        sounds=sounds,
        kgrams=kg,
        unit_start=start,
        unit_end=end,
        winnowed=Winnowed(hashes=kg[pos], positions=pos, params=config.winnow),
        minhash=minhash(shingles, config.minhash),
        simhash=text_simhash(nt, bits=config.simhash_bits, ngram=config.simhash_ngram),
        initials=initials_fingerprint(sounds.initials, config.initials),
        meta=dict(meta or {}),
    )


@dataclass
class Judgement:
    """How much of an original a page copies, per channel and as evidence spans."""

    match: Match
    runs: list[Run]
    is_copy: bool


def channel_scores(page: Prepared, original: Prepared) -> dict[str, float]:
    """The whole-text channels' scores for a pair (winnowing evidence is separate)."""
    d = page.simhash.distance(original.simhash)
    return {
        "simhash_distance": d,
        "simhash": 1.0 - d / page.simhash.bits,
        "minhash_jaccard": page.minhash.jaccard(original.minhash),
        "minhash_containment": original.minhash.containment(page.minhash),
        "pinyin": shared_share(original.initials, page.initials),
    }


def judge(page: Prepared, original: Prepared, config: EngineConfig = EngineConfig()) -> Judgement:
    """Decide whether `page` copies `original`, with scores and copied passages."""
    k = config.winnow.k
    runs = align(original.kgrams, page.sorted_kgrams, k, min_run=config.min_run, max_gap=k)
    o_cov = covered(runs, "original")
    p_cov = covered(runs, "page")
    containment = o_cov / original.units if original.units else 0.0
    page_share = p_cov / page.units if page.units else 0.0
    total = original.units + page.units
    similarity = (o_cov + p_cov) / total if total else 0.0
    scores = channel_scores(page, original)
    scores["winnow"] = containment
    scores["winnow_page"] = page_share
    longest = max((r.o_end - r.o_start for r in runs), default=0)
    scores["longest_run"] = longest
    copied = max(o_cov, p_cov)
    is_copy = copied >= config.min_copied and (
        containment >= config.min_containment
        or page_share >= config.min_page_share
        or longest >= config.min_long_run
    )
    spans = []
    for r in runs:
        ps, pe = page.raw_span(r.p_start, r.p_end)
        os_, oe = original.raw_span(r.o_start, r.o_end)
        spans.append(Span(page_start=ps, page_end=pe, original_start=os_, original_end=oe))
    match = Match(
        page=page.key,
        original=original.key,
        similarity=round(similarity, 4),
        containment=round(containment, 4),
        page_share=round(page_share, 4),
        scores={name: v if isinstance(v, int) else round(v, 4) for name, v in scores.items()},
        spans=spans,
        verdict=verdict(containment, page_share, is_copy),
    )
    return Judgement(match=match, runs=runs, is_copy=is_copy)


def verdict(containment: float, page_share: float, is_copy: bool) -> str:
    """A word for the relation: duplicate, contains (page holds all of it and more),
    part (page is part of it), excerpt, or different."""
    if not is_copy:
        return "different"
    if containment >= 0.9 and page_share >= 0.9:
        return "duplicate"
    if containment >= 0.9:
        return "contains"
    if page_share >= 0.9:
        return "part"
    return "excerpt"
