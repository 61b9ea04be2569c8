"""Simhash (Charikar 2002): a short fingerprint whose Hamming distance tracks text similarity.

Each feature is hashed to `bits` bits; for every bit position the feature's
weight is added when the bit is 1 and subtracted when it is 0; the fingerprint
bit is 1 where the total is positive (Li, Mao and Chen 2013, section 3.2).

Worked example, 4 bits, two features:

    feature "a" hash 0b1010 weight 2  ->  per bit (high..low)  +2 -2 +2 -2
    feature "b" hash 0b0011 weight 1  ->                       -1 -1 +1 +1
                                   totals                      +1 -3 +3 -1
                                   fingerprint                  1  0  1  0  = 0b1010

Bit j of a feature hash feeds bit j of the fingerprint (bit 0 is the lowest).
With a hash table (the BUAA course's hashvalue.txt, as a +-1 matrix), column j
of the table feeds bit `bits - 1 - j`, so `format(value, "0{bits}b")` prints the
bits in the table's column order, as the course does.

A `Simhash` keeps the parameters that made it (bits, hash, features) and
refuses to be compared with one made differently.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from fingerprint.errors import IncompatibleFingerprints, InputError, ParameterError
from fingerprint.hashing import kgram_hashes, mix64, sdbm

MIN_BITS, MAX_BITS = 16, 128


@dataclass(frozen=True)
class Simhash:
    """A Simhash value with the parameters that made it."""

    value: int
    bits: int = 64
    hash: str = "xxh64"  # the feature hash: xxh64, xxh3_128, sdbm, table:<digest>, kgram-mix64
    features: str = "custom"  # how the features were made, e.g. "tokens:2gram,tf"

    def __post_init__(self) -> None:
        if not MIN_BITS <= self.bits <= MAX_BITS:
            raise ParameterError(f"simhash bits must be between {MIN_BITS} and {MAX_BITS}, got {self.bits}")
        if not 0 <= self.value < (1 << self.bits):
            raise ParameterError(
                f"simhash value {self.value:#x} does not fit in {self.bits} bits; pass the value made with these bits"
            )

    def distance(self, other: Simhash) -> int:
        """The Hamming distance to `other` (made with the same parameters)."""
        return hamming(self, other)

    def params(self) -> tuple[int, str, str]:
        return (self.bits, self.hash, self.features)

    def hex(self) -> str:
        """The value as fixed-width hex: 16 digits for 64 bits."""
        return format(self.value, f"0{(self.bits + 3) // 4}x")

    def binary(self) -> str:
        """The value as a string of 0/1, highest bit first."""
        return format(self.value, f"0{self.bits}b")

    def to_dict(self) -> dict:
        return {"value": self.hex(), "bits": self.bits, "hash": self.hash, "features": self.features}

    @classmethod
    def from_dict(cls, d: Mapping) -> Simhash:
        try:
            return cls(int(str(d["value"]), 16), int(d["bits"]), str(d["hash"]), str(d["features"]))
        except (KeyError, ValueError, TypeError) as e:
            raise InputError(
                f"not a simhash record ({e}); expected keys value (hex), bits, hash, features as written by to_dict()"
            ) from None


_bitwise_count = getattr(np, "bitwise_count", None)  # numpy >= 2.0


def popcount(x: np.ndarray) -> np.ndarray:
    """Count the 1 bits of each unsigned integer (np.bitwise_count where numpy has it).

    >>> popcount(np.array([0b1011 ^ 0b0010], dtype=np.uint64)).tolist()  # 0b1001
    [2]
    """
    if _bitwise_count is not None:
        return _bitwise_count(x)
    b = np.asarray(x, dtype=np.uint64)[..., None].view(np.uint8)  # pragma: no cover - numpy < 2
    return np.unpackbits(b, axis=-1).sum(axis=-1, dtype=np.uint8)  # pragma: no cover


def hamming(a: Simhash | int, b: Simhash | int) -> int:
    """The number of bits in which two fingerprints differ.

    0b1011 ^ 0b0010 = 0b1001 -> 2 bits differ:
    >>> hamming(0b1011, 0b0010)
    2

    Two `Simhash` values made with different bits, hash or features raise
    IncompatibleFingerprints; plain ints are compared as they are.
    """
    if isinstance(a, Simhash) and isinstance(b, Simhash):
        if a.params() != b.params():
            raise IncompatibleFingerprints("simhashes", a.params(), b.params())
        return (a.value ^ b.value).bit_count()
    if isinstance(a, Simhash) or isinstance(b, Simhash):
        raise ParameterError("compare a Simhash with a Simhash, or an int with an int; got one of each")
    if a < 0 or b < 0:
        raise ParameterError("simhash values are unsigned; pass non-negative ints")
    return (a ^ b).bit_count()


def _check_bits(bits: int) -> None:
    if not isinstance(bits, (int, np.integer)) or not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError(f"bits must be an integer between {MIN_BITS} and {MAX_BITS}, got {bits!r}; 64 is usual")


# Row v: the 8 bits of byte value v, lowest first.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float64)


def _bit_totals(hashes: np.ndarray, weights: np.ndarray, nbits: int) -> np.ndarray:
    """For each bit j < nbits: sum of weights where hash bit j is 1, minus the sum where it is 0.

    Per byte b of the hashes, the weight falling on each of the 256 byte values
    (one bincount) times the byte's bit table gives the weight on its 8 bits.
    Example: weights (2, 1) on bytes 0b01, 0b11 -> bit 0 gets 3, bit 1 gets 1.
    """
    h = np.ascontiguousarray(hashes, dtype="<u8")
    w = np.asarray(weights, dtype=np.float64)
    hb = h.view(np.uint8).reshape(-1, 8)
    ones = np.concatenate([np.bincount(hb[:, b], weights=w, minlength=256) @ _BYTE_BITS for b in range(8)])
    return (2.0 * ones - w.sum())[:nbits]


def _pack_sign(totals: np.ndarray) -> int:
    """Bit j of the result is 1 where totals[j] > 0."""
    value = 0
    for j in np.flatnonzero(totals > 0).tolist():
        value |= 1 << j
    return value


def _weights_for(n: int, weights) -> np.ndarray:
    if weights is None:
        return np.ones(n, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ParameterError(f"got {n} features but {w.size} weights; pass one weight per feature or none")
    if not np.isfinite(w).all():
        raise ParameterError("weights must be finite numbers; drop NaN or infinite weights")
    return w


def simhash_hashes(hashes: np.ndarray, weights=None, *, bits: int = 64, hash: str = "xxh64",
                   features: str = "custom") -> Simhash:
    """Simhash of features that are already hashed to uint64 (bits <= 64; low `bits` bits are used).

    Vectorised: the hashes are unpacked into a 0/1 matrix and multiplied by the weights.
    """
    _check_bits(bits)
    if bits > 64:
        raise ParameterError(
            f"simhash_hashes works on 64-bit hashes, so bits <= 64; got {bits}. Use simhash() for more bits"
        )
    h = np.asarray(hashes)
    if h.ndim != 1 or (h.size and h.dtype.kind not in "ui"):
        raise ParameterError("hashes must be a 1-D array of unsigned 64-bit integers")
    w = _weights_for(h.shape[0], weights)
    value = _pack_sign(_bit_totals(h.astype(np.uint64, copy=False), w, bits)) if h.size else 0
    return Simhash(value, bits, hash, features)


def _hash_strings(feats: Sequence[str], hashfunc: str, bits: int) -> tuple[list[np.ndarray], str]:
    """Hash the features into 64-bit lanes: one lane for bits <= 64, two (low, high) above."""
    if hashfunc == "sdbm":
        vals = [sdbm(f, bits) for f in feats]
        name = "sdbm"
    elif hashfunc in ("xxh64", "xxh3_128"):
        if bits <= 64 and hashfunc == "xxh64":
            enc = xxhash.xxh64_intdigest
            vals = [enc(f.encode("utf-8")) for f in feats]
            return [np.array(vals, dtype=np.uint64)], "xxh64"
        enc = xxhash.xxh3_128_intdigest
        vals = [enc(f.encode("utf-8")) for f in feats]
        name = "xxh3_128"
    else:
        raise ParameterError(f"unknown hashfunc {hashfunc!r}; use 'xxh64', 'xxh3_128', 'sdbm' or a +-1 numpy table")
    mask = (1 << 64) - 1
    lanes = [np.array([v & mask for v in vals], dtype=np.uint64)]
    if bits > 64:
        lanes.append(np.array([v >> 64 for v in vals], dtype=np.uint64))
    return lanes, name


def _check_table(table: np.ndarray, n: int, bits: int | None) -> tuple[np.ndarray, int]:
    t = np.asarray(table)
    if t.ndim != 2:
        raise ParameterError(f"a hash table must be a 2-D n x bits array of +-1, got shape {t.shape}")
    if bits is not None and bits != t.shape[1]:
        raise ParameterError(
            f"the hash table has {t.shape[1]} columns but bits={bits}; "
            f"pass bits={t.shape[1]} or a table with {bits} columns"
        )
    _check_bits(t.shape[1])
    if n > t.shape[0]:
        raise ParameterError(
            f"{n} features but the hash table has only {t.shape[0]} rows; use fewer features or a larger table"
        )
    if not np.isin(t, (-1, 1)).all():
        raise ParameterError(
            "hash table values must be -1 or +1; convert a 0/1 table with 2*t-1 (simtool.buaa.load_hash_table does)"
        )
    return t, t.shape[1]


def simhash(features, weights=None, *, bits: int | None = None, hashfunc="xxh64", label: str = "custom") -> Simhash:
    """Simhash of string features with optional weights (default: 1 per occurrence, so repeats add up).

    `features` is a sequence of strings, or a mapping {feature: weight} (then `weights` must be None).
    `bits` is 64 by default (or the width of a table). `hashfunc` is "xxh64" (xxh3-128 above 64 bits),
    "xxh3_128", "sdbm" (as in Li, Mao and Chen 2013) or a +-1 numpy table of n rows x bits columns,
    where feature i uses row i. `label` names the feature extraction and is kept in the result.

    >>> simhash(["a", "b"], bits=16, hashfunc="sdbm").hash
    'sdbm'
    """
    if isinstance(features, Mapping):
        if weights is not None:
            raise ParameterError("features is a mapping of weights already; do not pass weights too")
        feats = list(features.keys())
        weights = list(features.values())
    elif isinstance(features, str):
        raise ParameterError("features must be a list of strings, not one string; split the text into features first")
    else:
        feats = list(features)
    if any(not isinstance(f, str) for f in feats):
        raise ParameterError("every feature must be a string; hash other values yourself and use simhash_hashes()")
    w = _weights_for(len(feats), weights)

    if isinstance(hashfunc, np.ndarray):
        t, bits = _check_table(hashfunc, len(feats), bits)
        digest = xxhash.xxh64_hexdigest(np.ascontiguousarray(t, dtype=np.int8).tobytes())
        totals = w @ t[: len(feats)].astype(np.float64) if feats else np.zeros(bits)
        value = _pack_sign(totals[::-1])  # column j -> bit bits-1-j
        return Simhash(value, bits, f"table:{digest}", label)

    bits = 64 if bits is None else bits
    _check_bits(bits)
    if not isinstance(hashfunc, str):
        raise ParameterError("hashfunc must be 'xxh64', 'xxh3_128', 'sdbm' or a +-1 numpy table")
    lanes, name = _hash_strings(feats, hashfunc, bits)
    if not feats:
        return Simhash(0, bits, name, label)
    value = _pack_sign(_bit_totals(lanes[0], w, min(bits, 64)))
    if bits > 64:
        value |= _pack_sign(_bit_totals(lanes[1], w, bits - 64)) << 64
    return Simhash(value, bits, name, label)


_HIGH_SEED = np.uint64(0x9E3779B97F4A7C15)  # golden-ratio constant: a second, independent 64-bit lane


def text_simhash(normalized, *, bits: int = 64, ngram: int = 2) -> Simhash:
    """Simhash of a normalised text: token n-gram hashes, each weighted by its count (TF).

    This is the tracker's simhash channel. Tokens are CJK characters and whole
    words (see fingerprint.normalize). A text shorter than `ngram` tokens uses
    all its tokens as one gram; an empty text gives 0.
    """
    _check_bits(bits)
    if ngram < 1:
        raise ParameterError(f"ngram must be at least 1, got {ngram}")
    tokens = getattr(normalized, "tokens", None)
    if tokens is None:
        raise InputError("text_simhash needs a NormalizedText; call fingerprint.normalize.normalize(text) first")
    label = f"tokens:{ngram}gram,tf"
    n = len(tokens)
    if n == 0:
        return Simhash(0, bits, "kgram-mix64", label)
    grams = kgram_hashes(tokens, min(ngram, n))
    uniq, counts = np.unique(grams, return_counts=True)
    w = counts.astype(np.float64)
    value = _pack_sign(_bit_totals(uniq, w, min(bits, 64)))
    if bits > 64:
        with np.errstate(over="ignore"):
            high = mix64(uniq + _HIGH_SEED)
        value |= _pack_sign(_bit_totals(high, w, bits - 64)) << 64
    return Simhash(value, bits, "kgram-mix64", label)


