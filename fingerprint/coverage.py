"""How much of an original a page carries, on an alignment that tolerates disguise.

Exact k-gram overlap under-counts every disguise: a renamed character or a synonym
removes the k-grams around it, sentences in another order leave runs shorter than a
copied passage must be, and what was reworded between two copied passages is not
counted at all. The coverage here is measured in two passes over the unit sequences
(toneless syllables by default, see fingerprint.engine):

1. Anchors. The long shared runs of k-grams (fingerprint.evidence.align), joined
   across a gap when the gap has about the same length on both sides: a name, a
   word or a phrase substituted in place. They decide whether the page is a copy
   at all, and are the copied passages shown as evidence.
2. Coverage, only for a copy. Shorter shared runs of finer k-grams (FINE_K units),
   joined the same way, each at least MIN_FINE units long: a shuffled sentence,
   or a stretch between two substitutions. A phrase every chapter of a novel
   shares ("且听下回分解") is shorter than that, and an unrelated page never gets
   here (it has no anchors).

The covered units of each side, counted once, give `containment` (share of the
original carried by the page) and `page_share` (share of the page that is the
original's). Every step is linear in the two texts (sorting aside): hashes are
matched by binary search, runs are chained along diagonals in one pass.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fingerprint.evidence import Run, SortedHashes, align, covered
from fingerprint.hashing import kgram_hashes

__all__ = ["FINE_K", "MIN_FINE", "SENTENCE_SHARE", "Coverage", "fine_runs", "join_substituted", "measure",
           "sentence_starts"]

FINE_K = 3  # units per fine k-gram (pass 2)
MIN_FINE = 6  # units a fine run must cover to count (a short sentence; longer than stock phrases)
SENTENCE_SHARE = 0.5  # a sentence covered at least this much is carried whole
_SENTENCE_END_CHARS = np.array([ord(c) for c in "。！？!?；;…\n"], dtype=np.uint32)


@dataclass(frozen=True)
class Coverage:
    containment: float
    page_share: float
    original_units: int  # covered units of the original
    page_units: int  # covered units of the page


def join_substituted(runs: list[Run], *, max_gap: int, min_run: int, slack: int) -> list[Run]:
    """Join consecutive runs (in original order) across a gap of at most `max_gap` units on both
    sides whose two lengths differ by at most `slack` units or a third of the longer: text
    substituted in place. Overlaps (negative gaps, from repeated phrases) join as well. Runs
    shorter than `min_run` units after joining are dropped."""
    out: list[Run] = []
    for r in runs:
        if out:
            last = out[-1]
            go, gp = r.o_start - last.o_end, r.p_start - last.p_end
            if (-max_gap <= go <= max_gap and -max_gap <= gp <= max_gap and r.o_start >= last.o_start
                    and abs(max(go, 0) - max(gp, 0)) <= max(slack, max(go, gp, 0) // 3)):
                out[-1] = Run(last.o_start, max(last.o_end, r.o_end), min(last.p_start, r.p_start),
                              max(last.p_end, r.p_end))
                continue
        out.append(r)
    return [r for r in out if r.o_end - r.o_start >= min_run]


def fine_runs(original_units: np.ndarray, page_units: np.ndarray, seed: int) -> list[Run]:
    """Pass 2: shared runs of FINE_K-unit k-grams, joined across substitutions, each at least MIN_FINE units."""
    o = kgram_hashes(original_units, FINE_K, seed)
    p = kgram_hashes(page_units, FINE_K, seed)
    raw = align(o, SortedHashes.of(p), FINE_K, min_run=1, max_gap=0)
    return join_substituted(raw, max_gap=3 * FINE_K, min_run=MIN_FINE, slack=2)


def sentence_starts(text: str, unit_start: np.ndarray) -> np.ndarray:
    """Index of the first unit of every sentence of `text` (ends: 。！？!?；; … and line breaks): the
    first unit at or after the end of each run of those characters (found on all code points at once,
    as a regular expression would find each run, [。！？!?；;…\n]+, at a hundredth of the cost)."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    is_end = cps == _SENTENCE_END_CHARS[0]
    for c in _SENTENCE_END_CHARS[1:]:
        is_end |= cps == c
    ends = np.flatnonzero(is_end & ~np.append(is_end[1:], False)) + 1
    starts = np.searchsorted(unit_start, ends) if ends.shape[0] else np.empty(0, np.int64)
    return np.unique(np.concatenate([np.zeros(1, np.int64), starts[starts < unit_start.shape[0]]]))


def _count(runs: list[Run], side: str, n: int, starts: np.ndarray | None) -> int:
    """Covered units of one side; a sentence at least SENTENCE_SHARE covered counts whole (the
    rest of it was disguised in place: a name, a word, an emoji too many)."""
    if starts is None or n == 0:
        return covered(runs, side)
    mask = np.zeros(n + 1, dtype=np.int32)
    for r in runs:
        a, b = (r.o_start, r.o_end) if side == "original" else (r.p_start, r.p_end)
        mask[max(0, a)] += 1
        mask[min(n, b)] -= 1
    cov = (np.cumsum(mask[:n]) > 0).astype(np.int64)
    per = np.add.reduceat(cov, starts)
    size = np.diff(np.append(starts, n))
    return int(np.where(per >= SENTENCE_SHARE * size, size, per).sum())


def measure(anchors: list[Run], original_units: np.ndarray, page_units: np.ndarray, seed: int,
            original_sentences: np.ndarray | None = None, page_sentences: np.ndarray | None = None) -> Coverage:
    """Coverage of a pair the anchors say is a copy: anchors and fine runs, each unit counted once,
    sentences mostly covered counted whole (when their starts are given, see sentence_starts)."""
    runs = anchors + fine_runs(original_units, page_units, seed)
    n_o, n_p = original_units.shape[0], page_units.shape[0]
    o_cov = _count(runs, "original", n_o, original_sentences)
    p_cov = _count(runs, "page", n_p, page_sentences)
    return Coverage(containment=min(1.0, o_cov / n_o) if n_o else 0.0,
                    page_share=min(1.0, p_cov / n_p) if n_p else 0.0, original_units=o_cov, page_units=p_cov)
