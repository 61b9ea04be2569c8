"""Copied passages between two unit sequences, from their shared k-grams.

The k-grams of the original that also occur in the page are chained along
diagonals (original position i, page position j, then i + 1, j + 1, ...); a
chain of c k-grams is a copied run of c + k - 1 units. Runs broken by a single
changed unit are joined again when the gap is small on both sides, and runs
shorter than `min_run` units (stock phrases every chapter shares) are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Run:
    """Copied units [o_start, o_end) of the original and [p_start, p_end) of the page."""

    o_start: int
    o_end: int
    p_start: int
    p_end: int


@dataclass(frozen=True)
class SortedHashes:
    """A page's k-gram hashes sorted once, reused for every original it is checked against."""

    order: np.ndarray  # positions in hash order (stable: equal hashes by position)
    hashes: np.ndarray  # the sorted hashes
    has_repeats: bool

    @classmethod
    def of(cls, hashes: np.ndarray) -> SortedHashes:
        order = np.argsort(hashes, kind="stable")
        s = hashes[order]
        return cls(order=order, hashes=s, has_repeats=bool(s.shape[0] > 1 and np.any(s[1:] == s[:-1])))


def align(
    original: np.ndarray, page: np.ndarray | SortedHashes, k: int, *, min_run: int, max_gap: int
) -> list[Run]:
    """Copied runs, in original order, from the k-gram hashes at every position of both texts.

    `original` and `page` are k-gram hash arrays (hash i covers units i .. i + k - 1);
    the page may come already sorted.
    """
    sp = page if isinstance(page, SortedHashes) else SortedHashes.of(page)
    order, sorted_page = sp.order, sp.hashes
    if original.shape[0] == 0 or sorted_page.shape[0] == 0:
        return []
    idx = np.searchsorted(sorted_page, original)
    idx_c = np.minimum(idx, sorted_page.shape[0] - 1)
    found = sorted_page[idx_c] == original
    oi = np.flatnonzero(found)
    if oi.shape[0] == 0:
        return []
    pj = order[idx_c[found]]  # first occurrence in the page of each shared k-gram
    if sp.has_repeats:
        pj = _follow_diagonals(oi, pj, idx_c[found], sorted_page, order, original)
    brk = np.ones(oi.shape[0], dtype=bool)
    brk[1:] = (np.diff(oi) != 1) | (np.diff(pj) != 1)
    starts = np.flatnonzero(brk)
    ends = np.append(starts[1:], oi.shape[0]) - 1
    runs = [
        Run(int(oi[s]), int(oi[e]) + k, int(pj[s]), int(pj[e]) + k)
        for s, e in zip(starts.tolist(), ends.tolist())
    ]
    return _join(runs, max_gap=max_gap, min_run=min_run)


def _follow_diagonals(oi, pj, dup_left, sorted_page, order, original):
    """Where a k-gram occurs several times in the page, prefer the occurrence that
    continues the previous diagonal (j = previous j + 1), so repeated phrases do not
    cut a copied run in two."""
    dup_right = np.searchsorted(sorted_page, original[oi], side="right")
    multi = np.flatnonzero(dup_right - dup_left > 1)
    if multi.shape[0] == 0:
        return pj
    # The page's hash at each position (the sorted hashes put back in page order): whether the
    # occurrence that continues the diagonal exists is then one look-up, not a search.
    page_at = np.empty_like(sorted_page)
    page_at[order] = sorted_page
    at_page, want_hash = page_at.tolist(), original[oi].tolist()
    out, starts, n = pj.tolist(), oi.tolist(), len(at_page)
    for t in multi.tolist():
        if t > 0 and starts[t] == starts[t - 1] + 1:
            want = out[t - 1] + 1
            if want < n and at_page[want] == want_hash[t]:
                out[t] = want
    return np.asarray(out, dtype=pj.dtype)


def _join(runs: list[Run], *, max_gap: int, min_run: int) -> list[Run]:
    out: list[Run] = []
    for r in runs:
        if out:
            last = out[-1]
            go, gp = r.o_start - last.o_end, r.p_start - last.p_end
            if -max_gap <= go <= max_gap and -max_gap <= gp <= max_gap and r.o_start >= last.o_start:
                out[-1] = Run(last.o_start, max(last.o_end, r.o_end), min(last.p_start, r.p_start), max(last.p_end, r.p_end))
                continue
        out.append(r)
    return [r for r in out if r.o_end - r.o_start >= min_run]


def covered(runs: list[Run], side: str) -> int:
    """Units covered by the runs on one side ("original" or "page"), overlaps counted once."""
    spans = sorted((r.o_start, r.o_end) if side == "original" else (r.p_start, r.p_end) for r in runs)
    total, end = 0, -1
    for a, b in spans:
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total
