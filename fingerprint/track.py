"""Find which registered originals each page copies.

Originals are indexed four ways: winnowed sound k-grams and pinyin-initial
window codes (both find excerpts, split and merged chapters), Simhash tables
(near-duplicates of the whole text) and MinHash LSH bands (similar sets of
n-grams). A page is verified only against the originals these indexes
propose, never against every original.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .engine import EngineConfig, Prepared, judge, prepare
from .errors import InputError
from .lsh import LSHParams, MinHashLSH
from .models import Document, Match
from .postings import Postings
from .simhash_index import SimhashIndex


@dataclass
class TrackStats:
    originals: int = 0
    pages: int = 0
    candidates: int = 0  # (page, original) pairs verified
    matches: int = 0
    empty: list[str] = field(default_factory=list)  # keys with no text left after normalisation


class Tracker:
    """An in-memory registry of originals that pages are matched against."""

    def __init__(self, config: EngineConfig = EngineConfig()):
        self.config = config
        self.originals: list[Prepared] = []
        self._by_key: dict[str, int] = {}
        self._winnow = Postings()
        self._initials = Postings()
        self._simhash = SimhashIndex(bits=config.simhash_bits, k=config.simhash_distance)
        self._lsh = MinHashLSH(LSHParams(config.lsh_threshold, config.minhash))
        self.stats = TrackStats()

    def prepare(self, doc: Document) -> Prepared:
        return prepare(doc.key, doc.text, self.config, doc.meta)

    def add(self, doc: Document | Prepared) -> Prepared | None:
        """Register an original; returns None (and counts it) when no text is left to index."""
        p = doc if isinstance(doc, Prepared) else self.prepare(doc)
        if p.key in self._by_key:
            raise InputError(f"two originals have the key {p.key!r}; give every original a unique name")
        if p.units == 0:
            self.stats.empty.append(p.key)
            return None
        i = len(self.originals)
        self.originals.append(p)
        self._by_key[p.key] = i
        self._winnow.add(i, p.winnowed.hashes)
        self._initials.add(i, p.initials.codes)
        if p.simhash.bits <= 64:
            self._simhash.add(i, p.simhash.value)
        self._lsh.insert(i, p.minhash)
        self.stats.originals += 1
        return p

    def candidates(self, page: Prepared) -> dict[int, set[str]]:
        """Originals worth verifying, with the channels that proposed each."""
        out: dict[int, set[str]] = {}
        cfg = self.config
        docs, hits = self._winnow.hits(page.winnowed.hashes, max_df=cfg.max_df)
        for d in docs[hits >= cfg.min_hits].tolist():
            out.setdefault(d, set()).add("winnow")
        docs, hits = self._initials.hits(page.initials.codes, max_df=cfg.max_df)
        for d in docs[hits >= cfg.min_hits].tolist():
            out.setdefault(d, set()).add("pinyin")
        if page.simhash.bits <= 64 and page.units:
            for d, _dist in self._simhash.query(page.simhash.value):
                out.setdefault(d, set()).add("simhash")
        for d in self._lsh.query(page.minhash):
            out.setdefault(d, set()).add("minhash")
        return out

    def match(self, page: Document | Prepared) -> list[Match]:
        """The originals a page copies, most contained first."""
        p = page if isinstance(page, Prepared) else self.prepare(page)
        self.stats.pages += 1
        if p.units == 0:
            self.stats.empty.append(p.key)
            return []
        found = []
        for d, channels in self.candidates(p).items():
            self.stats.candidates += 1
            j = judge(p, self.originals[d], self.config)
            if j.is_copy:
                j.match.scores["candidate_channels"] = len(channels)
                found.append(j.match)
        found.sort(key=lambda m: (-m.containment, -m.page_share, m.original))
        self.stats.matches += len(found)
        return found


def track(
    originals: Iterable[Document], pages: Iterable[Document], config: EngineConfig = EngineConfig()
) -> list[Match]:
    """Every (page, original) pair where the page copies the original."""
    return list(iter_track(Tracker(config), originals, pages))


def iter_track(tracker: Tracker, originals: Iterable[Document], pages: Iterable[Document]) -> Iterator[Match]:
    for doc in originals:
        tracker.add(doc)
    for page in pages:
        yield from tracker.match(page)
