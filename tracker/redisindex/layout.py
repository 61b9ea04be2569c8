"""Where the index's postings live in Redis and how a posting is packed.

Posting keys, spread over the cluster's hash slots (no hash tag):
``{prefix}{w|p|b|t}:{bucket}`` for winnow, pinyin, LSH band and translation keys and
``{prefix}s{i}:{bucket}`` for Simhash table i; the bucket is the top `bits` bits of the
64-bit key (of block i of the Simhash), sized from `capacity` so that a bucket holds
about FILLS[channel] postings. Postings whose id is 2**24 or more go under the same name plus
``.{id >> 24 in 2 hex digits}`` (a *segment*): a record keeps only the low 3 bytes of
the id, and documents below 16,777,216 never need a segment.

A winnow/pinyin/band/translation record is the `resid` bytes of the key under the bucket bits, then
the 3 id bytes, little-endian. Two keys that agree on the stored bits count as equal;
`residual_bytes` picks the fewest bytes that keep the false candidates this causes below
about 1 in 100 queries at `capacity`. A Simhash record (table i) is the value rotated so
that block i sits on top, without the top bucket bits, then the 3 id bytes.

Keys are scrambled first (`mix64`, a bijection). Example: bits 17, resid 1, a winnow key
scrambled to 0xF00D_1234_5678_9ABC, of document 70,000 (0x011170): bucket
0xF00D... >> 47 = 0x1e01a, residual (key >> 39) & 0xFF = 0x24; the APPEND goes to
``fpt:w:1e01a`` with the 4-byte record 24 70 11 01.
"""
from __future__ import annotations

import math

import numpy as np

from fingerprint.hashing import mix64

from .wire import slots_of

_U64 = np.uint64
ID_BYTES = 3  # id bytes in a record; the byte above them names the segment key
SEGMENT_SHIFT = 8 * ID_BYTES
# Average postings per bucket at `capacity`. A bucket costs a key (about 80 bytes in Redis)
# and a query reads whole buckets: winnow and pinyin records are small (4 bytes at scale),
# band records larger (6) and Simhash ones larger still (10), with fewer keys per chapter.
FILLS = {"winnow": 512, "pinyin": 512, "minhash": 256, "simhash": 128, "translation": 512}
FILL = FILLS["winnow"]
MAX_BUCKET_BITS = 28
MAX_FALSE = 0.01  # false candidates per query allowed by the residual bytes, at capacity
# v1: 4-byte ids, 3 residual bytes, no segments, state under the plain prefix;
# v2: no translation channel (its meta names no bits or residual bytes for it)
LAYOUT = b"packed-v3"
OLD_LAYOUTS = (b"packed-v2",)  # read only to say that the index must be rebuilt
CHANNELS = (("winnow", b"w"), ("pinyin", b"p"), ("minhash", b"b"), ("translation", b"t"))
# Postings per original per channel with no sampling, for a chapter of about 6,000 syllables;
# only used to size buckets when an index is created. Translation: the keys a Chinese chapter
# posts (fingerprint.translation.index_keys), measured on chapters of the shared corpus's novels.
PER_DOC = {"winnow": 1330, "pinyin": 360, "translation": 52}


def bucket_bits(capacity: int, per_doc: float, most: int = MAX_BUCKET_BITS, fill: int = FILL) -> int:
    """Bucket bits so that `capacity` documents leave about `fill` postings per bucket."""
    return int(min(most, max(4, math.ceil(math.log2(max(1.0, capacity * per_doc / fill))))))


def residual_bytes(capacity: int, per_doc: float, bits: int, hits: int) -> int:
    """The fewest key bytes stored under the bucket bits that keep false candidates rare.

    A query key meets a stored posting of another key with the same stored bits about
    fill / 2**(8 * r) times. Where one shared key proposes a document (LSH bands, or
    min_hits 1) each such meeting is a false candidate; where `hits` are needed, it takes
    that many meetings on one document: about meetings**hits / (hits! * capacity**(hits - 1))
    (two: meetings**2 / (2 * capacity)).
    Example: 1M chapters, 41.6 winnow keys each, 17 bits: fill 317, r = 1 gives 51
    meetings a query, 0.0013 false candidates at 2 hits: 1 byte. LSH bands (25 a chapter,
    16 bits, fill 381): r = 2 gives 0.15 a query, r = 3 gives 0.0006: 3 bytes."""
    fill = capacity * per_doc / 2 ** bits
    h = max(1, hits)
    for r in range(1, 6):
        meetings = per_doc * fill / 2 ** (8 * r)
        false = meetings ** h / (math.factorial(h) * max(1, capacity) ** (h - 1))
        if false <= MAX_FALSE:
            return r
    return 5


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_digits(values: np.ndarray, width: int) -> np.ndarray:
    """Lower-case hex digits of non-negative `values`, zero-padded to `width` (uint8[n, width])."""
    out = np.empty((values.shape[0], width), dtype=np.uint8)
    v = values.astype(np.int64, copy=True)
    for j in range(width - 1, -1, -1):
        out[:, j] = _HEX[v & 15]
        v >>= 4
    return out


def segment_tail(seg: int) -> bytes:
    """The key suffix of segment `seg` (ids seg << 24 ...): none for segment 0."""
    return b"" if seg == 0 else b".%02x" % seg


def appends(head: bytes, width: int, buckets: np.ndarray, recs: np.ndarray,
            tail: bytes = b"") -> list[tuple[np.ndarray, np.ndarray]]:
    """APPEND {head}{bucket in `width` hex digits}{tail} {the records of that bucket} for every
    bucket in `buckets` (one per record of `recs`, uint8[n, size]), built with numpy: buckets
    with the same number of records make commands of the same length. Returns
    [(commands uint8[m, length], slot of each)]."""
    if not buckets.shape[0]:
        return []
    order = bucket_order(buckets)
    b, recs = buckets[order], recs[order]
    size = recs.shape[1]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    counts = np.diff(np.r_[starts, b.shape[0]])
    out = []
    klen = len(head) + width + len(tail)
    for k in np.unique(counts).tolist():
        sel = starts[counts == k]
        pre = b"*3\r\n$6\r\nAPPEND\r\n$%d\r\n%b" % (klen, head)
        mid = tail + b"\r\n$%d\r\n" % (k * size)
        rows = np.empty((sel.shape[0], len(pre) + width + len(mid) + k * size + 2), dtype=np.uint8)
        rows[:, : len(pre)] = np.frombuffer(pre, dtype=np.uint8)
        at = len(pre)
        digits = hex_digits(b[sel], width)
        rows[:, at: at + width] = digits
        at += width
        rows[:, at: at + len(mid)] = np.frombuffer(mid, dtype=np.uint8)
        at += len(mid)
        rows[:, at: at + k * size] = recs[sel[:, None] + np.arange(k)].reshape(sel.shape[0], k * size)
        rows[:, -2:] = np.frombuffer(b"\r\n", dtype=np.uint8)
        out.append((rows, slots_of(head, digits, tail)))
    return out


def bucket_order(buckets: np.ndarray) -> np.ndarray:
    """The order that groups equal buckets (at most 32 bits): two stable radix passes on
    16-bit halves, several times faster than a comparison sort of a million buckets."""
    lo = np.argsort((buckets & 0xFFFF).astype(np.uint16), kind="stable")
    if not (buckets >> 16).any():
        return lo
    return lo[np.argsort((buckets[lo] >> 16).astype(np.uint16), kind="stable")]


def records(resid: np.ndarray, ids: np.ndarray, rbytes: int) -> np.ndarray:
    """Records (uint8[n, rbytes + 3]): the low `rbytes` bytes of each residual, then the low 3 id bytes."""
    out = np.empty((ids.shape[0], rbytes + ID_BYTES), dtype=np.uint8)
    out[:, :rbytes] = resid.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :rbytes]
    out[:, rbytes:] = ids.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :ID_BYTES]
    return out


def parse(replies, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(records uint8[m, size], records per reply) of GET replies."""
    lens = np.fromiter((len(r) // size if r else 0 for r in replies), dtype=np.int64, count=len(replies))
    buf = b"".join(r for r in replies if r)
    recs = np.frombuffer(buf, dtype=np.uint8)[: int(lens.sum()) * size].reshape(-1, size)
    return recs, lens


def matching(recs: np.ndarray, lens: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows whose first bytes equal the expected bytes of their reply, the reply of each).
    `expected` is uint8[replies, r]: compared byte column by byte column, so no record is
    turned into an integer unless it matches."""
    r = expected.shape[1]
    exp = np.repeat(expected, lens, axis=0)
    hit = recs[:, 0] == exp[:, 0]
    for j in range(1, r):
        hit &= recs[:, j] == exp[:, j]
    rows = np.flatnonzero(hit)
    return rows, np.searchsorted(np.cumsum(lens), rows, side="right")


def id3(cols: np.ndarray) -> np.ndarray:
    """The 3-byte little-endian ids of records' id columns (uint8[n, 3]) as int64."""
    c = cols.astype(np.int64)
    return c[:, 0] | (c[:, 1] << 8) | (c[:, 2] << 16)


def le_bytes(values: np.ndarray, n: int) -> np.ndarray:
    """The low n bytes of each uint64, little-endian (uint8[len, n])."""
    return np.asarray(values, dtype="<u8").view(np.uint8).reshape(-1, 8)[:, :n]


def le(cols: np.ndarray) -> np.ndarray:
    """Little-endian unsigned integers from byte columns (uint8[n, w], w <= 8) as uint64."""
    out = np.zeros((cols.shape[0], 8), dtype=np.uint8)
    out[:, : cols.shape[1]] = cols
    return out.view("<u8").ravel()


def rotl(values: np.ndarray, n: int) -> np.ndarray:
    """64-bit rotation left by n: rotl(0x8000_0000_0000_0001, 1) -> 0x3."""
    v = np.asarray(values, dtype=_U64)
    n %= 64
    if n == 0:
        return v.copy()
    return (v << _U64(n)) | (v >> _U64(64 - n))


class Layout:
    """Key names and record shapes of one index: prefix, bucket bits and residual bytes."""

    def __init__(self, prefix: bytes, bits: dict[str, int], resid: dict[str, int],
                 sim_blocks: list[tuple[int, int]]):
        self.prefix = prefix
        self.bits = bits
        self.resid = resid
        self.sim_blocks = sim_blocks
        tag = prefix + b"{index}"  # every document-state key in one hash slot, and under the prefix
        self.tag = tag
        self.meta = tag + b"meta"
        self.count = tag + b"n"
        self.ids = tag + b"ids"
        self.filter = tag + b"F"
        self.known = tag + b"K"
        self.segments = tag + b"S"
        self.old_meta = prefix + b"meta"  # the packed-v1 layout's

    def head(self, ch: str) -> bytes:
        tag = dict(CHANNELS)[ch]
        return b"%s%s:" % (self.prefix, tag)

    def sim_head(self, i: int) -> bytes:
        return b"%ss%d:" % (self.prefix, i)

    def width(self, ch: str) -> int:
        return (self.bits[ch] + 3) // 4

    def rec(self, ch: str) -> int:
        return self.resid[ch] + ID_BYTES

    def sim_bytes(self) -> int:
        """Bytes of a Simhash value kept in a record: all but the bucket bits (whole bytes)."""
        return (64 - self.bits["simhash"] + 7) // 8

    def split(self, ch: str, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bucket, residual) of each key: the top bits of the scrambled key and the `resid`
        bytes under them. Scrambled (a bijection) because pinyin-window codes are packed
        letter levels whose top 12 bits are always 0: unscrambled, they would fill a few buckets."""
        b, r = self.bits[ch], 8 * self.resid[ch]
        k = mix64(np.asarray(keys, dtype=_U64))
        bucket = (k >> _U64(64 - b)).astype(np.int64)
        shift = 64 - b - r
        resid = (k >> _U64(shift)) if shift >= 0 else (k << _U64(-shift))
        return bucket, resid & _U64((1 << r) - 1)

    def sim_turn(self, i: int) -> int:
        """The rotation that puts block i of a Simhash on top."""
        s, w = self.sim_blocks[i]
        return 64 - (s + w)

    def sim_bucket(self, i: int, values: np.ndarray) -> np.ndarray:
        """The bucket of each Simhash value in table i: the top bits of its block i."""
        return (rotl(values, self.sim_turn(i)) >> _U64(64 - self.bits["simhash"])).astype(np.int64)

    def state_key(self, doc: int) -> bytes:
        return b"%sD:%x" % (self.tag, doc >> 8)

    def alias_key(self, pid: int) -> bytes:
        return b"%sA:%x" % (self.tag, pid >> 8)


    def posting_patterns(self) -> list[bytes]:
        """SCAN patterns of the posting keys (and of nothing else under the prefix)."""
        p = glob_escape(self.prefix)
        return [p + b"[wpbt]:*", p + b"s[0-9]:*", p + b"s[0-9][0-9]:*"]

    def old_patterns(self) -> list[bytes]:
        """SCAN patterns of the packed-v1 layout's state keys."""
        p = glob_escape(self.prefix)
        return [p + b"D:*", p + b"A:*"]

    def old_keys(self) -> list[bytes]:
        return [self.prefix + k for k in (b"meta", b"n", b"ids", b"F")]


def glob_escape(b: bytes) -> bytes:
    out = bytearray()
    for c in b:
        if c in b"*?[]\\":
            out.append(0x5C)
        out.append(c)
    return bytes(out)


def runs(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value, count) of each run in a sorted array."""
    n = sorted_values.shape[0]
    if n == 0:
        return sorted_values, np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
    return sorted_values[starts], np.diff(np.append(starts, n))
