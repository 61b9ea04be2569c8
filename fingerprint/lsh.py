"""LSH banding for MinHash signatures: bands chosen from a target threshold.

A signature of b*r values is cut into b bands of r rows; two sets become
candidates when any band is equal, which happens with probability
1 - (1 - J**r)**b: an S-curve that is steepest near (1/b)**(1/r).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.hashing import mix64
from fingerprint.minhash import MinHash, MinHashParams


def candidate_probability(j: float | np.ndarray, bands: int, rows: int):
    """Probability that two sets with Jaccard `j` share at least one band."""
    return 1.0 - (1.0 - np.asarray(j, dtype=float) ** rows) ** bands


@lru_cache(maxsize=64)
def optimal_bands(threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5) -> tuple[int, int]:
    """Pick (bands, rows) with bands * rows <= num_perm minimising weighted false positive
    and false negative areas around `threshold` (the method of datasketch's MinHashLSH).

    >>> optimal_bands(0.5, 128)
    (25, 5)
    """
    if not 0.0 < threshold < 1.0:
        raise ParameterError(f"LSH threshold must be between 0 and 1 (exclusive), got {threshold}")
    if abs(fp_weight + fn_weight - 1.0) > 1e-9:
        raise ParameterError("fp_weight and fn_weight must add up to 1")
    lo = np.linspace(0.0, threshold, 200)
    hi = np.linspace(threshold, 1.0, 200)
    best, best_err = (1, 1), float("inf")
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = np.trapezoid(candidate_probability(lo, b, r), lo)
            fn = np.trapezoid(1.0 - candidate_probability(hi, b, r), hi)
            err = fp_weight * fp + fn_weight * fn
            if err < best_err:
                best, best_err = (b, r), err
    return best


def band_keys(sig: MinHash, bands: int, rows: int) -> np.ndarray:
    """One 64-bit key per band: band i's r values hashed together with i (uint64[bands])."""
    v = sig.values[: bands * rows].astype(np.uint64).reshape(bands, rows)
    acc = np.arange(bands, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        for j in range(rows):
            acc = mix64(acc ^ v[:, j])
    return acc


@dataclass(frozen=True)
class LSHParams:
    threshold: float = 0.5
    minhash: MinHashParams = MinHashParams()

    @property
    def bands_rows(self) -> tuple[int, int]:
        return optimal_bands(self.threshold, self.minhash.num_perm)


class MinHashLSH:
    """An in-memory LSH index: band key -> keys of the sets that have it."""

    def __init__(self, params: LSHParams = LSHParams()):
        self.params = params
        self.bands, self.rows = params.bands_rows
        self._tables: list[dict[int, list[Hashable]]] = [defaultdict(list) for _ in range(self.bands)]
        self._keys: dict[Hashable, np.ndarray] = {}

    def _check(self, sig: MinHash) -> None:
        if sig.params != self.params.minhash:
            raise IncompatibleFingerprints("a MinHash signature and this LSH index", sig.params, self.params.minhash)

    def insert(self, key: Hashable, sig: MinHash) -> None:
        self._check(sig)
        if key in self._keys:
            self.remove(key)
        bk = band_keys(sig, self.bands, self.rows)
        self._keys[key] = bk
        for table, k in zip(self._tables, bk.tolist()):
            table[k].append(key)

    def remove(self, key: Hashable) -> None:
        bk = self._keys.pop(key, None)
        if bk is None:
            return
        for table, k in zip(self._tables, bk.tolist()):
            bucket = table[k]
            bucket.remove(key)
            if not bucket:
                del table[k]

    def query(self, sig: MinHash) -> set[Hashable]:
        """Keys that share at least one band with `sig`."""
        self._check(sig)
        if sig.size == 0:
            return set()
        out: set[Hashable] = set()
        for table, k in zip(self._tables, band_keys(sig, self.bands, self.rows).tolist()):
            out.update(table.get(k, ()))
        return out

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[Hashable]:
        return self._keys.keys()
