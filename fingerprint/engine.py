"""The engine: one configuration, one way to fingerprint a text, one way to judge a pair.

`prepare` runs the stages every text goes through (normalise -> sounds ->
channels); `judge` decides whether a page copies an original and with what
evidence. `simtool` and the tracker both call these, with the same
`EngineConfig`, so a result offline equals a result online.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import numpy as np

from fingerprint.coverage import join_substituted, measure, sentence_starts
from fingerprint.errors import ParameterError
from fingerprint.evidence import Run, SortedHashes, align, covered
from fingerprint.hashing import kgram_hashes
from fingerprint.initials import InitialsFingerprint, InitialsParams, shared_share
from fingerprint.initials import fingerprint as initials_fingerprint
from fingerprint.minhash import MinHash, MinHashParams, minhash
from fingerprint.models import Match, Span
from fingerprint.normalize import NormalizedText, normalize
from fingerprint.pinyin import Sounds, to_sounds
from fingerprint.simhash import Simhash, text_simhash
from fingerprint.winnowing import Winnowed, WinnowParams, select

CHANNELS = ("simhash", "minhash", "pinyin", "winnow", "translation")


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
    min_copied: int = 40  # units copied in all, at least
    min_containment: float = 0.015  # share of the original found in the page
    min_page_share: float = 0.3  # or share of the page copied from the original
    min_long_run: int = 150  # or one copied passage at least this long, whatever its share
    # verdict of a copy, from the share of the original the page carries (containment) and the
    # share of the page that is the original's (page_share), both on the alignment of the two:
    #   duplicate: containment >= whole_share and page_share >= whole_share (the page is the chapter)
    #   contains:  containment >= whole_share (the whole chapter, and other material)
    #   part:      containment >= part_share (a large share of the chapter)
    #   excerpt:   less
    whole_share: float = 0.8
    part_share: float = 0.25
    # The channels a deployment indexes and scores (a subset saves their preparation on every text).
    # Verification always aligns the winnowing units: a pair is judged on its copied passages.
    channels: tuple[str, ...] = ("simhash", "minhash", "pinyin", "winnow", "translation")

    def __post_init__(self):
        if self.winnow_units not in ("syllables", "characters"):
            raise ParameterError(f"winnow_units must be syllables or characters, got {self.winnow_units!r}")
        if self.min_run < self.winnow.k:
            raise ParameterError(f"min_run ({self.min_run}) must be at least the k-gram length ({self.winnow.k})")
        bad = [c for c in self.channels if c not in CHANNELS]
        if bad or not self.channels:
            raise ParameterError(f"unknown channel(s) {', '.join(map(repr, bad)) or '(none)'}; "
                                 f"use some of {', '.join(CHANNELS)}")
        object.__setattr__(self, "channels", tuple(c for c in CHANNELS if c in self.channels))
        if not 0.0 < self.part_share < self.whole_share <= 1.0:
            raise ParameterError(f"need 0 < part_share < whole_share <= 1, got {self.part_share} and {self.whole_share}")
        for name in ("min_containment", "min_page_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ParameterError(f"{name} must be between 0 and 1, got {v}")

    def to_dict(self) -> dict[str, Any]:
        """All parameters, for storing next to fingerprints."""
        return asdict(self)


class Prepared:
    """A text and its fingerprints, each computed the first time something asks for it.

    `prepare` only normalises; a channel's preparation (sounds, k-grams, MinHash, Simhash,
    pinyin initials) runs when that channel is used, once. `simtool fingerprint --channels
    minhash` and a deployment that indexes a subset of the channels pay for what they use;
    every channel gives the same values as when all are computed.
    """

    def __init__(self, key: str, text: str, normalized: NormalizedText, config: EngineConfig = EngineConfig(),
                 meta: dict[str, Any] | None = None):
        self.key = key
        self.text = text
        self.normalized = normalized
        self.config = config
        self.meta: dict[str, Any] = dict(meta or {})

    @cached_property
    def sounds(self) -> Sounds:
        return to_sounds(self.normalized)

    @cached_property
    def _unit_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(units, raw start, raw end) of the units winnowing and verification use."""
        if self.config.winnow_units == "syllables":
            return self.sounds.units, self.sounds.start, self.sounds.end
        nt = self.normalized
        return nt.tokens, nt.tok_start, nt.tok_end

    @property
    def unit_values(self) -> np.ndarray:
        return self._unit_arrays[0]

    @property
    def unit_start(self) -> np.ndarray:
        """Raw offset where each unit starts."""
        return self._unit_arrays[1]

    @property
    def unit_end(self) -> np.ndarray:
        return self._unit_arrays[2]

    @cached_property
    def kgrams(self) -> np.ndarray:
        """The k-gram hash at every unit position (syllables or characters)."""
        return kgram_hashes(self.unit_values, self.config.winnow.k, self.config.winnow.seed)

    @cached_property
    def winnowed(self) -> Winnowed:
        pos = select(self.kgrams, self.config.winnow.window)
        return Winnowed(hashes=self.kgrams[pos], positions=pos, params=self.config.winnow)

    @cached_property
    def minhash(self) -> MinHash:
        nt, c = self.normalized, self.config
        return minhash(kgram_hashes(nt.tokens, min(c.minhash_ngram, max(1, len(nt)))), c.minhash)

    @cached_property
    def simhash(self) -> Simhash:
        return text_simhash(self.normalized, bits=self.config.simhash_bits, ngram=self.config.simhash_ngram)

    @cached_property
    def initials(self) -> InitialsFingerprint:
        return initials_fingerprint(self.sounds.initials, self.config.initials)

    @cached_property
    def sorted_kgrams(self) -> SortedHashes:
        """The k-gram hashes sorted once, for verifying this text against many originals."""
        return SortedHashes.of(self.kgrams)

    @cached_property
    def sentence_starts(self) -> np.ndarray:
        """First unit of each sentence, for coverage (fingerprint.coverage)."""
        return sentence_starts(self.text, self.unit_start)

    @property
    def units(self) -> int:
        return int(self.unit_start.shape[0])

    @cached_property
    def language(self) -> str:
        """"zh", "en" or "" (fingerprint.translation.language)."""
        from fingerprint.translation.language import language_of

        return language_of(self.normalized)

    @cached_property
    def bags(self):
        """The sentences as bags of concepts, for the translation channel (fingerprint.translation)."""
        from fingerprint.translation.bags import text_bags

        return text_bags(self.text, self.language)

    @cached_property
    def reading(self):
        """The whole text's concepts and names with their counts (fingerprint.translation.quick):
        what its translation keys and its ranking need, without its sentences."""
        from fingerprint.translation.quick import read

        return read(self.text, self.language)

    @cached_property
    def doc_vector(self):
        """The whole text's concepts and names, for ranking translation candidates."""
        from fingerprint.translation.rank import doc_vector

        return doc_vector(self.reading)

    def translation_keys(self, role: str = "post") -> np.ndarray:
        """The translation channel's keys: "post" for an original, "query" for a page; none
        for a text in neither language."""
        if self.language not in ("zh", "en"):
            return np.empty(0, dtype=np.uint64)
        from fingerprint.translation.index_keys import translation_keys

        if role == "post":  # an original: from its segmented sentences (translation.quick.from_sentences)
            from fingerprint.translation.quick import from_sentences

            return translation_keys(from_sentences(self.bags), role)
        return translation_keys(self.reading, role)

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw character offsets of units [start, end)."""
        return int(self.unit_start[start]), int(self.unit_end[end - 1])

    def compute(self, channels: tuple[str, ...] = CHANNELS) -> Prepared:
        """Compute the given channels now (all by default), e.g. before timing or sharing the object."""
        for name in channels:
            if name == "translation":
                if self.language in ("zh", "en"):
                    _ = self.reading
                continue
            getattr(self, {"winnow": "winnowed", "pinyin": "initials"}.get(name, name))
        return self


def prepare(key: str, text: str, config: EngineConfig = EngineConfig(), meta: dict | None = None) -> Prepared:
    """Normalise a text; its channels' fingerprints follow when asked for (see Prepared)."""
    return Prepared(key, text, normalize(text), config, meta)


@dataclass
class Judgement:
    """How much of an original a page copies, per channel and as evidence spans."""

    match: Match
    runs: list[Run]
    is_copy: bool


def channel_scores(page: Prepared, original: Prepared, channels: tuple[str, ...] = CHANNELS) -> dict[str, float]:
    """The whole-text channels' scores for a pair (winnowing evidence is separate); only the
    given channels are computed."""
    scores: dict[str, float] = {}
    if "simhash" in channels:
        d = page.simhash.distance(original.simhash)
        scores.update(simhash_distance=d, simhash=1.0 - d / page.simhash.bits)
    if "minhash" in channels:
        scores.update(minhash_jaccard=page.minhash.jaccard(original.minhash),
                      minhash_containment=original.minhash.containment(page.minhash))
    if "pinyin" in channels:
        scores["pinyin"] = shared_share(original.initials, page.initials)
    return scores


def across_languages(page: Prepared, original: Prepared, config: EngineConfig = EngineConfig()) -> bool:
    """True when the pair is one Chinese and one English text and the translation channel is on."""
    return ("translation" in config.channels and page.language != original.language
            and {page.language, original.language} == {"zh", "en"})


def judge(page: Prepared, original: Prepared, config: EngineConfig = EngineConfig()) -> Judgement:
    """Decide whether `page` copies `original`, with scores and copied passages; a page in the
    other language (Chinese and English) is judged on its sentence alignment (judge_translation)."""
    if across_languages(page, original, config):
        return judge_translation(page, original, config)
    k = config.winnow.k
    # Anchors: shared k-gram runs, joined across text substituted in place (fingerprint.coverage).
    raw = align(original.kgrams, page.sorted_kgrams, k, min_run=k, max_gap=k)
    runs = join_substituted(raw, max_gap=4 * k, min_run=config.min_run, slack=k // 2)
    o_cov = covered(runs, "original")
    p_cov = covered(runs, "page")
    containment = o_cov / original.units if original.units else 0.0
    page_share = p_cov / page.units if page.units else 0.0
    scores = channel_scores(page, original, config.channels)
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
    if is_copy:  # what the page carries, shuffled and reworded passages included
        cov = measure(runs, _units(original, config), _units(page, config), config.winnow.seed,
                      original.sentence_starts, page.sentence_starts)
        containment, page_share = cov.containment, cov.page_share
        o_cov, p_cov = cov.original_units, cov.page_units
    total = original.units + page.units
    similarity = (o_cov + p_cov) / total if total else 0.0
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
        verdict=verdict_for(containment, page_share, is_copy, config),
    )
    return Judgement(match=match, runs=runs, is_copy=is_copy)


def judge_translation(page: Prepared, original: Prepared, config: EngineConfig = EngineConfig()) -> Judgement:
    """Judge a page written in the other language: the share of the original's sentences the
    page's sentences align with (fingerprint.translation.align), and the aligned sentence pairs
    as evidence spans, original sentence beside the page's."""
    from fingerprint.translation.align import align_texts

    a = align_texts(original.bags, page.bags)
    ob, pb = original.bags, page.bags
    spans = [Span(page_start=int(pb.starts[p0]), page_end=int(pb.ends[p1 - 1]),
                  original_start=int(ob.starts[o0]), original_end=int(ob.ends[o1 - 1]))
             for o0, o1, p0, p1 in a.pairs] if a.is_copy else []
    scores: dict[str, float] = {
        "translation": round(a.containment, 4),
        "translation_page": round(a.page_share, 4),
        "aligned_sentences": a.original_aligned,
        "chapter_sentences": a.original_sentences,
        "page_sentences_aligned": a.page_aligned,
        "page_sentences": a.page_sentences,
        "anchor_pairs": len(a.anchors),
        "alignment_score": round(a.score, 3),
    }
    containment, page_share = (a.containment, a.page_share) if a.is_copy else (0.0, 0.0)
    total = ob.total + pb.total
    similarity = (containment * ob.total + page_share * pb.total) / total if total else 0.0
    match = Match(page=page.key, original=original.key, similarity=round(similarity, 4),
                  containment=round(containment, 4), page_share=round(page_share, 4), scores=scores,
                  spans=spans, verdict=verdict_for(containment, page_share, a.is_copy, config))
    return Judgement(match=match, runs=[], is_copy=a.is_copy)


VERDICTS = ("duplicate", "contains", "part", "excerpt", "different")


def _units(p: Prepared, config: EngineConfig) -> np.ndarray:
    return p.unit_values


def verdict_for(containment: float, page_share: float, is_copy: bool, config: EngineConfig = EngineConfig()) -> str:
    """A word for the relation (see EngineConfig.whole_share): duplicate (the page is the
    chapter, in any order or disguise), contains (the whole chapter and other material), part
    (a large share of it), excerpt (a small share), or different (not a copy)."""
    if not is_copy:
        return "different"
    if containment >= config.whole_share:
        return "duplicate" if page_share >= config.whole_share else "contains"
    return "part" if containment >= config.part_share else "excerpt"


def verdict_reason(containment: float, page_share: float, verdict: str, config: EngineConfig = EngineConfig()) -> str:
    """Why a match has its verdict, in words, with the thresholds (for reports and evidence)."""
    c, p = f"{containment:.0%} of the chapter", f"{page_share:.0%} of the page"
    whole, part = f"{config.whole_share:.0%}", f"{config.part_share:.0%}"
    return {
        "duplicate": f"duplicate: the page carries {c} and the chapter is {p} (both at least {whole})",
        "contains": f"contains: the page carries {c} (at least {whole}); the chapter is only {p}",
        "part": f"part: the page carries {c} (at least {part}, under {whole})",
        "excerpt": f"excerpt: the page carries {c} (under {part})",
    }.get(verdict, f"{verdict}: {c}, {p}")
