"""Find which registered originals each page copies.

Originals are indexed five ways (see `fingerprint.index`): winnowed syllable
k-grams and pinyin-initial window codes (both find excerpts, split and merged
chapters), Simhash tables (near-duplicates of the whole text), MinHash LSH
bands (similar sets of n-grams) and the translation channel's concepts and names
(pages in the other language, fingerprint.translation). A page is verified only
against the originals the index proposes, never against every original.

`Tracker` works with any `CandidateIndex`: the in-memory one here, or the
tracker's Redis index; it keeps the prepared originals it verifies against.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field

from fingerprint.engine import EngineConfig, Prepared, judge, prepare
from fingerprint.errors import InputError
from fingerprint.index import CandidateIndex, IndexParams, MemoryIndex, index_keys
from fingerprint.models import Document, Match

# Originals proposed by the translation channel alone that are aligned with a page: at most this
# many, the best first, and only those scoring at least TRANSLATION_WITHIN of the best (a whole
# translation stands out and is aligned alone; a passage inside other text has close rivals).
TRANSLATION_VERIFY = 8
TRANSLATION_WITHIN = 0.85


@dataclass
class TrackStats:
    originals: int = 0
    pages: int = 0
    candidates: int = 0  # (page, original) pairs verified
    matches: int = 0
    empty: list[str] = field(default_factory=list)  # keys with no text left after normalisation


class Tracker:
    """Registered originals, an index over them, and the matching of pages."""

    def __init__(self, config: EngineConfig = EngineConfig(), index: CandidateIndex | None = None,
                 params: IndexParams | None = None, originals: MutableMapping[int, Prepared] | None = None):
        self.config = config
        self.index = index if index is not None else MemoryIndex(config, params or IndexParams())
        # doc number -> prepared original; the tracker service passes a mapping that loads from its store
        self.originals: MutableMapping[int, Prepared] = originals if originals is not None else {}
        self._by_key: dict[str, int] = {}
        self._next = 0
        self.stats = TrackStats()

    def prepare(self, doc: Document) -> Prepared:
        return prepare(doc.key, doc.text, self.config, doc.meta)

    def add(self, doc: Document | Prepared, number: int | None = None) -> Prepared | None:
        """Register an original; returns None (and counts it) when no text is left to index."""
        p = doc if isinstance(doc, Prepared) else self.prepare(doc)
        if p.key in self._by_key:
            raise InputError(f"two originals have the key {p.key!r}; give every original a unique name")
        if p.units == 0:
            self.stats.empty.append(p.key)
            return None
        i = self._next if number is None else number
        self._next = max(self._next, i + 1)
        self.originals[i] = p
        self._by_key[p.key] = i
        self.index.add(i, index_keys(p, self.config, self.index.params, role="original"))
        self.stats.originals += 1
        return p

    def candidates(self, page: Prepared) -> dict[int, set[str]]:
        """Originals worth verifying, with the channels that proposed each."""
        return self.index.candidates(index_keys(page, self.config, self.index.params, role="page"))

    def _worth_verifying(self, page: Prepared, cands: dict[int, set[str]]) -> dict[int, set[str]]:
        """All candidates, except that of those only the translation channel proposed, only the
        TRANSLATION_VERIFY best by whole-text score (fingerprint.translation.rank) are aligned."""
        only = [d for d, ch in cands.items() if ch == {"translation"}]
        if len(only) <= TRANSLATION_VERIFY:
            return cands
        from fingerprint.translation.rank import score

        scored = []
        for d in only:
            o = self.originals.get(d)
            if o is not None and o.language in ("zh", "en") and o.language != page.language:
                scored.append((-score(page.doc_vector, o.doc_vector), d))
        scored.sort()
        best = -scored[0][0] if scored else 0.0
        keep = {d for s, d in scored[:TRANSLATION_VERIFY] if -s >= TRANSLATION_WITHIN * best}
        return {d: ch for d, ch in cands.items() if ch != {"translation"} or d in keep}

    def match(self, page: Document | Prepared) -> list[Match]:
        """The originals a page copies, most contained first."""
        p = page if isinstance(page, Prepared) else self.prepare(page)
        self.stats.pages += 1
        if p.units == 0:
            self.stats.empty.append(p.key)
            return []
        found = []
        for d, channels in self._worth_verifying(p, self.candidates(p)).items():
            original = self.originals.get(d)
            if original is None:  # removed since it was indexed
                continue
            self.stats.candidates += 1
            j = judge(p, original, self.config)
            if j.is_copy:
                j.match.scores["candidate_channels"] = len(channels)
                found.append(j.match)
        found.sort(key=lambda m: (-m.containment, -m.page_share, m.original))
        self.stats.matches += len(found)
        return found


def track(
    originals: Iterable[Document], pages: Iterable[Document], config: EngineConfig = EngineConfig(),
    params: IndexParams | None = None,
) -> list[Match]:
    """Every (page, original) pair where the page copies the original."""
    return list(iter_track(Tracker(config, params=params), originals, pages))


def iter_track(tracker: Tracker, originals: Iterable[Document], pages: Iterable[Document]) -> Iterator[Match]:
    for doc in originals:
        tracker.add(doc)
    for page in pages:
        yield from tracker.match(page)
