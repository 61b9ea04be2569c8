"""A Bloom filter: "seen before?" in a fixed number of bits, with no false negatives.

Sizing for capacity n and false-positive rate p:
    m = ceil(-n ln p / (ln 2)^2) bits,  k = round(m / n * ln 2) hash functions.
For n = 1,000,000 and p = 0.001: m = 14,377,588 bits (1.7 MiB) and k = 10.

Positions come from one XXH3-128 hash by double hashing (Kirsch and Mitzenmacher 2006):
    h1 = low 64 bits, h2 = high 64 bits | 1,  position_i = (h1 + i * h2) mod m.
Worked example with m = 10 bits and k = 3: h1 = 7, h2 = 3 -> positions 7, 0, 3, and the
bit array becomes 0b0010001001 (bits 0, 3 and 7 set, bit 0 lowest).
Bit i lives in byte i >> 3 at bit i & 7 of the packed array.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterable

import numpy as np
import xxhash

from fingerprint.errors import InputError, ParameterError

_MAGIC = b"FPBF"
_VERSION = 1
_HEADER = struct.Struct("<4sBxxxQIQdQ")  # magic, version, m, k, capacity, error rate, seed
_U64 = np.uint64


def bloom_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """(m bits, k hashes) for `capacity` items at false-positive rate `error_rate`.

    >>> bloom_size(1_000_000, 0.001)
    (14377588, 10)
    """
    if not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ParameterError(f"capacity must be a positive whole number of items, got {capacity!r}")
    if not 0.0 < error_rate < 1.0:
        raise ParameterError(f"error_rate must be between 0 and 1 (e.g. 0.001), got {error_rate!r}")
    m = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    k = max(1, round(m / capacity * math.log(2)))
    return m, k


def _encode(item) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return int(item).to_bytes(16, "little", signed=True)
    raise InputError(
        f"a Bloom filter holds str, bytes or int items, got {type(item).__name__}; convert it to a key string"
    )


def bloom_positions(items: Iterable, m: int, k: int, seed: int = 0) -> np.ndarray:
    """An (items, k) array of the bit positions (h1 + i * h2) mod m of each item, by repeated
    addition: what a filter of m bits and k hashes sets and tests, wherever its bits are kept."""
    digest = xxhash.xxh3_128_digest
    raw = b"".join([digest(_encode(it), seed) for it in items])
    both = np.frombuffer(raw, dtype=">u8").reshape(-1, 2).astype(_U64)  # big-endian: high, low
    h1, h2 = both[:, 1], both[:, 0] | _U64(1)  # h1 the low 64 bits, h2 the high ones made odd
    mm = _U64(m)
    pos = np.empty((h1.shape[0], k), dtype=_U64)
    cur = h1 % mm
    step = h2 % mm
    for i in range(k):
        pos[:, i] = cur
        cur = cur + step  # both < m < 2**63, so no overflow
        cur[cur >= mm] -= mm
    return pos


class BloomFilter:
    """A Bloom filter sized for `capacity` items at `error_rate` false positives."""

    def __init__(self, capacity: int = 1_000_000, error_rate: float = 0.001, *, seed: int = 0):
        self.m, self.k = bloom_size(capacity, error_rate)
        self.capacity, self.error_rate, self.seed = int(capacity), float(error_rate), int(seed)
        self.bits = np.zeros((self.m + 7) // 8, dtype=np.uint8)

    def _positions(self, items: Iterable) -> np.ndarray:
        return bloom_positions(items, self.m, self.k, self.seed)

    def add_many(self, items: Iterable) -> None:
        pos = self._positions(items).ravel()
        np.bitwise_or.at(self.bits, (pos >> _U64(3)).astype(np.intp), (1 << (pos & _U64(7))).astype(np.uint8))

    def add(self, item) -> None:
        self.add_many([item])

    def contains_many(self, items: Iterable) -> np.ndarray:
        """A boolean per item: possibly seen (True) or certainly not (False)."""
        pos = self._positions(items)
        if pos.size == 0:
            return np.zeros(pos.shape[0], dtype=bool)
        hit = (self.bits[(pos >> _U64(3)).astype(np.intp)] >> (pos & _U64(7)).astype(np.uint8)) & 1
        return hit.all(axis=1)

    def __contains__(self, item) -> bool:
        return bool(self.contains_many([item])[0])

    def to_bytes(self) -> bytes:
        """The parameters and the packed bits, for saving and for `from_bytes`."""
        head = _HEADER.pack(_MAGIC, _VERSION, self.m, self.k, self.capacity, self.error_rate, self.seed & (2**64 - 1))
        return head + self.bits.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> BloomFilter:
        """Rebuild a filter from `to_bytes` output."""
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise InputError("not a Bloom filter: the data does not start with FPBF; pass bytes made by to_bytes()")
        magic, version, m, k, capacity, error_rate, seed = _HEADER.unpack_from(data)
        if version != _VERSION:
            raise InputError(
                f"Bloom filter format version {version} is not supported (expected {_VERSION}); rebuild the filter"
            )
        out = cls(capacity, error_rate, seed=seed)
        if (out.m, out.k) != (m, k):
            raise InputError(
                f"Bloom filter header says m={m}, k={k} but capacity {capacity} and error rate {error_rate} give "
                f"m={out.m}, k={out.k}; the data is damaged, rebuild the filter"
            )
        body = data[_HEADER.size :]
        if len(body) != out.bits.shape[0]:
            raise InputError(
                f"Bloom filter data has {len(body)} bytes of bits, expected {out.bits.shape[0]}; the data is truncated"
            )
        out.bits = np.frombuffer(body, dtype=np.uint8).copy()
        return out

    def __repr__(self) -> str:
        return f"BloomFilter(capacity={self.capacity}, error_rate={self.error_rate}, m={self.m}, k={self.k})"
