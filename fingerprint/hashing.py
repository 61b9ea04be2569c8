"""Hash functions: fast 64-bit string hashes, SDBM, and vectorised k-gram hashing.

Everything that turns text units into integers lives here, so that every
channel hashes the same way and a seed change is visible in one place.
"""
from __future__ import annotations

import numpy as np
import xxhash

from fingerprint.errors import ParameterError

MASK64 = (1 << 64) - 1
_U64 = np.uint64


def xxh64(text: str, seed: int = 0) -> int:
    """Hash a string to an unsigned 64-bit integer (xxHash64 of its UTF-8 bytes)."""
    return xxhash.xxh64_intdigest(text.encode("utf-8"), seed)


def xxh128(text: str, seed: int = 0) -> int:
    """Hash a string to an unsigned 128-bit integer (XXH3-128)."""
    return xxhash.xxh3_128_intdigest(text.encode("utf-8"), seed)


def sdbm(text: str, bits: int = 64) -> int:
    """The SDBM string hash (as used by Li, Mao and Chen 2013), wrapped to `bits` bits.

    hash = c + (hash << 6) + (hash << 16) - hash, for each byte c of the UTF-8 text.
    >>> sdbm("a", 64)
    97
    """
    mask = (1 << bits) - 1
    h = 0
    for c in text.encode("utf-8"):
        h = (c + (h << 6) + (h << 16) - h) & mask
    return h


def mix64(x: np.ndarray) -> np.ndarray:
    """Scramble uint64 values with the SplitMix64 finaliser (a bijection, vectorised).

    Used after polynomial k-gram hashing so that nearby inputs give unrelated outputs.
    """
    x = np.asarray(x, dtype=_U64).copy()
    with np.errstate(over="ignore"):
        x ^= x >> _U64(30)
        x *= _U64(0xBF58476D1CE4E5B9)
        x ^= x >> _U64(27)
        x *= _U64(0x94D049BB133111EB)
        x ^= x >> _U64(31)
    return x


def mix64_int(x: int) -> int:
    """The scalar form of `mix64`."""
    x &= MASK64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK64
    x ^= x >> 31
    return x


_KGRAM_BASE = _U64(0x100000001B3)  # FNV prime: odd, so multiplication is invertible mod 2**64


def kgram_hashes(units: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Hash every run of `k` consecutive units to a uint64 (n - k + 1 values; none if n < k).

    h_i = mix64(seed + sum_j mix64(u[i+j]) * B**(k-1-j)), all mod 2**64.
    Equal runs give equal hashes at any position, so hashes from two texts compare directly.
    """
    if k < 1:
        raise ParameterError(f"k-gram length must be at least 1, got {k}")
    u = np.asarray(units, dtype=_U64)
    n = u.shape[0] - k + 1
    if n <= 0:
        return np.empty(0, dtype=_U64)
    mixed = mix64(u)
    acc = np.full(n, _U64(seed & MASK64), dtype=_U64)
    with np.errstate(over="ignore"):
        for j in range(k):
            acc *= _KGRAM_BASE
            acc += mixed[j : j + n]
    return mix64(acc)


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct integers, in the input's integer type (uint64 for anything else).

    Sorting and comparing neighbours: numpy's hash-based np.unique is several times
    slower on 64-bit integers."""
    x = np.asarray(values)
    x = np.sort(x if x.dtype.kind in "iu" else x.astype(np.uint64))
    if x.shape[0] < 2:
        return x
    keep = np.empty(x.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]
