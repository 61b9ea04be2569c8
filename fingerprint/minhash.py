"""MinHash signatures (Broder 1997) with Jaccard and containment estimates.

Two ways to make a signature of `num_perm` values from a set of 64-bit shingle hashes:

- "oph" (default): one permutation hashing (Li, Owen, Zhang 2012) with optimal
  densification (Shrivastava 2017). Each shingle is hashed once and falls into
  one of `num_perm` bins; a bin keeps its smallest value and an empty bin
  borrows from a bin chosen by a fixed probe sequence. Same estimator quality
  as `num_perm` permutations, at the cost of one hash per shingle.
- "permutations": the classic scheme, `num_perm` independent hash functions
  (multiply-shift: ((a * x + b) mod 2**64) >> 32, a odd), each taking its minimum.

Signatures record their parameters; comparing signatures made differently raises.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.hashing import distinct, mix64

EMPTY = np.uint32(0xFFFFFFFF)
METHODS = ("oph", "permutations")
_U64 = np.uint64


@dataclass(frozen=True)
class MinHashParams:
    num_perm: int = 128
    seed: int = 1
    method: str = "oph"

    def __post_init__(self):
        if not 2 <= self.num_perm <= 4096:
            raise ParameterError(f"num_perm must be between 2 and 4096, got {self.num_perm}")
        if self.method not in METHODS:
            raise ParameterError(f"unknown MinHash method {self.method!r}; use one of {', '.join(METHODS)}")


@dataclass
class MinHash:
    """A MinHash signature with the set size it was made from (for containment)."""

    values: np.ndarray  # uint32[num_perm]
    size: int  # number of distinct shingles
    params: MinHashParams

    def _check(self, other: MinHash) -> None:
        if self.params != other.params:
            raise IncompatibleFingerprints("MinHash signatures", self.params, other.params)

    def jaccard(self, other: MinHash) -> float:
        """Estimated Jaccard similarity |A & B| / |A | B| (0.0 if either set is empty)."""
        self._check(other)
        if self.size == 0 or other.size == 0:
            return 0.0
        return float(np.count_nonzero(self.values == other.values)) / self.params.num_perm

    def containment(self, other: MinHash) -> float:
        """Estimated share of this set found in `other`: |A & B| / |A|.

        From J = |A & B| / |A | B| and the set sizes: |A & B| = J (|A| + |B|) / (1 + J).
        """
        j = self.jaccard(other)
        if j == 0.0:
            return 0.0
        inter = j * (self.size + other.size) / (1.0 + j)
        return min(1.0, inter / self.size)


@lru_cache(maxsize=16)
def _probes(num_perm: int, seed: int) -> np.ndarray:
    """For each bin, a fixed pseudo-random sequence of bins to borrow from when it is empty."""
    rounds = 4 * num_perm
    i = np.arange(num_perm, dtype=_U64)[:, None]
    a = np.arange(1, rounds + 1, dtype=_U64)[None, :]
    with np.errstate(over="ignore"):
        h = mix64(i * _U64(0x9E3779B97F4A7C15) + a * _U64(0xD1B54A32D192ED03) + _U64(seed))
    return (h % _U64(num_perm)).astype(np.int64)


@lru_cache(maxsize=16)
def _perm_coeffs(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64) * _U64(2) + _U64(1)
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    return a, b


def minhash(shingles: np.ndarray, params: MinHashParams = MinHashParams()) -> MinHash:
    """Make a signature from 64-bit shingle hashes (duplicates are fine)."""
    h = np.asarray(shingles, dtype=_U64)
    if h.shape[0] == 0:
        return MinHash(values=np.full(params.num_perm, EMPTY, dtype=np.uint32), size=0, params=params)
    if params.method == "oph":
        return _oph(h, params)
    return _permutations(h, params)


def _oph(h: np.ndarray, p: MinHashParams) -> MinHash:
    k = p.num_perm
    with np.errstate(over="ignore"):
        x = mix64(h ^ _U64(p.seed * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF))
    # Bin = high 32 bits scaled to [0, k) (no modulo bias); value = low 32 bits.
    # key = bin << 32 | value, so sorting keys sorts by bin, then value.
    bins = ((x >> _U64(32)) * _U64(k)) >> _U64(32)
    keys = distinct((bins << _U64(32)) | (x & _U64(0xFFFFFFFF)))
    first = np.searchsorted(keys, np.arange(k, dtype=_U64) << _U64(32))
    present = first < keys.shape[0]
    got = np.where(present, keys[np.minimum(first, keys.shape[0] - 1)], _U64(0))
    present &= (got >> _U64(32)) == np.arange(k, dtype=_U64)
    values = np.where(present, got & _U64(0xFFFFFFFF), _U64(EMPTY)).astype(np.uint32)
    if not present.all():
        values = _densify(values, present, p)
    return MinHash(values=values, size=int(keys.shape[0]), params=p)


def _densify(values: np.ndarray, present: np.ndarray, p: MinHashParams) -> np.ndarray:
    empty = np.flatnonzero(~present)
    probes = _probes(p.num_perm, p.seed)[empty]
    hit = present[probes]
    found = hit.any(axis=1)
    src = probes[np.arange(empty.shape[0]), np.argmax(hit, axis=1)]
    if not found.all():
        # Almost never: borrow from the next non-empty bin to the right, circularly.
        full = np.flatnonzero(present)
        for row in np.flatnonzero(~found):
            i = empty[row]
            j = np.searchsorted(full, i)
            src[row] = full[j % full.shape[0]]
    out = values.copy()
    out[empty] = values[src]
    return out


def _permutations(h: np.ndarray, p: MinHashParams) -> MinHash:
    a, b = _perm_coeffs(p.num_perm, p.seed)
    u = distinct(h)
    out = np.full(p.num_perm, np.iinfo(np.uint64).max, dtype=_U64)
    step = max(1, 1_000_000 // p.num_perm)
    with np.errstate(over="ignore"):
        for i in range(0, u.shape[0], step):
            chunk = u[i : i + step, None]
            np.minimum(out, ((chunk * a + b) >> _U64(32)).min(axis=0), out=out)
    return MinHash(values=out.astype(np.uint32), size=int(u.shape[0]), params=p)
