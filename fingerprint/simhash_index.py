"""Find every fingerprint within k bits of a query without scanning them all (Manku et al. 2007).

Pigeonhole: split the `bits` bits into b >= k+1 blocks. Two fingerprints that
differ in at most k bits differ in at most k blocks, so they agree exactly on
at least b-k blocks. One table per choice of b-k blocks (C(b, k) tables), keyed
by those blocks' bits, finds every candidate with a few binary searches; the
candidates are then checked with a popcount.

Worked example, 8 bits, k=1, b=2 blocks of 4 bits (2 tables, one per block):

    stored 0b1011_0110, query 0b1011_0100  -> high blocks equal (0b1011): candidate
    0b0110 ^ 0b0100 = 0b0010 -> 1 bit differs <= k: a result

Each table is a pair of numpy arrays: the keys sorted, and the positions of the
fingerprints they belong to (Manku's permuted sorted tables, with the key's
blocks gathered into a small integer instead of permuting the whole value).
Adds go to a pending tail that queries scan directly; the tail is merged into
the tables when it grows past about sqrt(n), so a stream of add/query pairs
(Single-Pass clustering) stays fast, and a bulk `add_many` sorts once.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.simhash import Simhash, popcount

_MIN_PENDING = 2048
_QUERY_CHUNK = 4096


def _blocks(bits: int, b: int) -> list[tuple[int, int]]:
    """Split bits into b contiguous (shift, width) blocks, widths differing by at most one."""
    base, extra = divmod(bits, b)
    out, shift = [], 0
    for i in range(b):
        w = base + (1 if i < extra else 0)
        out.append((shift, w))
        shift += w
    return out


def table_count(b: int, k: int) -> int:
    """Tables needed with b blocks for distance k: every choice of the b-k blocks that must match."""
    return math.comb(b, k)


def _resolve_blocks(bits: int, k: int, tables: int | None) -> int:
    if tables is None:
        return k + 1
    if not isinstance(tables, (int, np.integer)) or tables < 1:
        raise ParameterError(f"tables must be a positive integer or None, got {tables!r}")
    for b in range(k + 1, bits + 1):
        c = math.comb(b, k)
        if c == tables:
            return b
        if c > tables and k > 0:
            break
    valid = sorted({math.comb(b, k) for b in range(k + 1, min(bits, k + 7) + 1)})
    raise ParameterError(
        f"{tables} tables cannot cover distance {k} exactly; use one of {valid} (C(blocks, {k})) or None for {k + 1}"
    )


def _pos_dtype(n: int):
    """Positions fit in int32 below 2**31 fingerprints: half the memory of int64."""
    return np.int32 if n < 2**31 else np.int64


class _Table:
    """The fingerprints sorted by the bits of some blocks."""

    def __init__(self, blocks: Sequence[tuple[int, int]]):
        self.blocks = list(blocks)
        width = sum(w for _, w in blocks)
        self.dtype = np.uint16 if width <= 16 else np.uint32 if width <= 32 else np.uint64
        self.keys = np.empty(0, dtype=self.dtype)
        self.order = np.empty(0, dtype=np.int32)
        self.offsets: np.ndarray | None = np.zeros((1 << 16) + 1, dtype=np.int64) if self.dtype == np.uint16 else None
        # Adjacent blocks are merged so a key usually costs one shift and one mask.
        merged: list[list[int]] = []
        for s, w in self.blocks:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1][1] += w
            else:
                merged.append([s, w])
        self._parts = [(np.uint64(s), np.uint64((1 << w) - 1), np.uint64(w)) for s, w in merged]
        self._scalar_parts = [(s, (1 << w) - 1, w) for s, w in merged]

    def key(self, values: np.ndarray) -> np.ndarray:
        key = None
        for s, mask, w in self._parts:
            part = (values >> s) & mask
            key = part if key is None else (key << w) | part
        return key.astype(self.dtype)

    def key_scalar(self, value: int) -> int:
        key = 0
        for s, mask, w in self._scalar_parts:
            key = (key << w) | ((value >> s) & mask)
        return key

    def bucket(self, value: int) -> tuple[int, int]:
        """[lo, hi) of the entries whose key equals the key of `value`."""
        kq = self.key_scalar(value)
        if self.offsets is not None:
            return int(self.offsets[kq]), int(self.offsets[kq + 1])
        kq = self.dtype(kq)  # a Python int would make numpy convert the whole key array
        return int(self.keys.searchsorted(kq, "left")), int(self.keys.searchsorted(kq, "right"))

    def _update_offsets(self) -> None:
        # For keys of <= 16 bits, bucket starts (65,537 of them, 512 KiB) replace two binary searches.
        if self.dtype == np.uint16:
            self.offsets = np.zeros((1 << 16) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.keys, minlength=1 << 16), out=self.offsets[1:])

    def rebuild(self, values: np.ndarray) -> None:
        keys = self.key(values)
        n = values.shape[0]
        if self.dtype == np.uint32 and n < 2**31:
            # Key and position in one uint64: a plain sort is then stable, and much faster
            # than numpy's stable sort (timsort) on 32-bit keys.
            both = (keys.astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
            both.sort()
            self.keys = (both >> np.uint64(32)).astype(np.uint32)
            self.order = (both & np.uint64(0xFFFFFFFF)).astype(np.int32)
            return
        order = np.argsort(keys, kind="stable")  # radix sort for 16-bit keys
        self.keys = keys[order]
        self.order = order.astype(_pos_dtype(n), copy=False)
        self._update_offsets()

    def merge(self, values: np.ndarray, start: int) -> None:
        """Insert positions start.. of `values`; equal keys stay in position order."""
        new = self.key(values[start:])
        o = np.argsort(new, kind="stable")
        at = np.searchsorted(self.keys, new[o], side="right")
        self.keys = np.insert(self.keys, at, new[o])
        self.order = np.insert(self.order.astype(_pos_dtype(values.shape[0]), copy=False), at, o + start)
        self._update_offsets()

    def nbytes(self) -> int:
        return self.keys.nbytes + self.order.nbytes + (self.offsets.nbytes if self.offsets is not None else 0)


class _Ids:
    """Ids by position: an int64 array while every id is an int, a list otherwise."""

    def __init__(self) -> None:
        self.arr: np.ndarray | None = np.empty(0, dtype=np.int64)
        self.lst: list | None = None
        self.n = 0

    def extend(self, ids) -> None:
        if len(ids) == 0:
            return
        if self.arr is not None:
            a = ids if isinstance(ids, np.ndarray) else np.asarray(ids)
            if a.ndim == 1 and a.dtype.kind in "iu" and not (a.dtype.kind == "u" and int(a.max()) >= 2**63):
                if self.n + a.shape[0] > self.arr.shape[0]:
                    grown = np.empty(max(16, self.n + a.shape[0], 2 * self.arr.shape[0]), dtype=np.int64)
                    grown[: self.n] = self.arr[: self.n]
                    self.arr = grown
                self.arr[self.n : self.n + a.shape[0]] = a
                self.n += a.shape[0]
                return
            self.lst = self.arr[: self.n].tolist()
            self.arr = None
        self.lst.extend(ids.tolist() if isinstance(ids, np.ndarray) else ids)
        self.n = len(self.lst)

    def take(self, pos: np.ndarray) -> list:
        if self.arr is not None:
            return self.arr[pos].tolist()
        return [self.lst[p] for p in pos.tolist()]

    def nbytes(self) -> int:
        return self.arr.nbytes if self.arr is not None else 8 * len(self.lst)


class SimhashIndex:
    """All stored fingerprints within `k` bits of a query, via C(b, k) block tables.

    `tables=None` uses k+1 blocks and k+1 tables (the least memory); a larger count
    from C(b, k), e.g. 10 for k=3 (5 blocks), makes keys longer and buckets smaller.
    Ids need not be unique; results come sorted by distance, then insertion order.
    """

    def __init__(self, bits: int = 64, k: int = 3, tables: int | None = None):
        if not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 64:
            raise ParameterError(f"the index holds fingerprints of 1..64 bits, got bits={bits!r}")
        if not isinstance(k, (int, np.integer)) or not 0 <= k < bits:
            raise ParameterError(f"k (the largest distance found) must be between 0 and bits-1={bits - 1}, got {k!r}")
        self.bits, self.k = int(bits), int(k)
        self.blocks = _resolve_blocks(self.bits, self.k, tables)
        parts = _blocks(self.bits, self.blocks)
        combos = combinations(range(self.blocks), self.blocks - self.k)
        self._tables = [_Table([parts[i] for i in combo]) for combo in combos]
        self._values = np.empty(0, dtype=np.uint64)
        self._n = 0
        self._indexed = 0
        self._ids = _Ids()
        self._params: tuple | None = None  # (hash, features) of the Simhash values added

    # -- adding ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    @property
    def tables(self) -> int:
        return len(self._tables)

    @property
    def values(self) -> np.ndarray:
        """The stored fingerprints in insertion order (a read-only view)."""
        v = self._values[: self._n]
        v.flags.writeable = False
        return v

    def _check_params(self, fp: Simhash) -> None:
        if fp.bits != self.bits:
            raise IncompatibleFingerprints("a simhash with this index", f"{fp.bits} bits", f"{self.bits} bits")
        p = (fp.hash, fp.features)
        if self._params is None:
            self._params = p
        elif p != self._params:
            raise IncompatibleFingerprints("a simhash with this index", p, self._params)

    def _as_array(self, values) -> np.ndarray:
        if isinstance(values, np.ndarray):
            if values.ndim != 1 or (values.size and values.dtype.kind not in "ui"):
                raise ParameterError("values must be a 1-D array of unsigned integers (fingerprints)")
            if values.dtype.kind == "i" and values.size and values.min() < 0:
                raise ParameterError("fingerprints are unsigned; got negative values")
            arr = values.astype(np.uint64, copy=False)
        else:
            vals = []
            for v in values:
                if isinstance(v, Simhash):
                    self._check_params(v)
                    v = v.value
                if not isinstance(v, (int, np.integer)) or v < 0 or v >= 1 << 64:
                    raise ParameterError(f"{v!r} is not an unsigned fingerprint; pass ints or Simhash values")
                vals.append(int(v))
            arr = np.array(vals, dtype=np.uint64)
        if self.bits < 64 and arr.size and int(arr.max()) >> self.bits:
            raise ParameterError(
                f"a fingerprint has more than {self.bits} bits; build the index with the bits they were made with"
            )
        return arr

    def add_many(self, ids, values) -> None:
        """Add fingerprints in bulk (numpy uint64 array, ints or Simhash values) with their ids."""
        arr = self._as_array(values)
        n_ids = len(ids)
        if n_ids != arr.shape[0]:
            raise ParameterError(f"got {n_ids} ids for {arr.shape[0]} fingerprints; pass one id per fingerprint")
        need = self._n + arr.shape[0]
        if need > self._values.shape[0]:
            grown = np.empty(max(64, need, 2 * self._values.shape[0]), dtype=np.uint64)
            grown[: self._n] = self._values[: self._n]
            self._values = grown
        self._values[self._n : need] = arr
        self._ids.extend(ids if isinstance(ids, np.ndarray) else list(ids))
        self._n = need

    def add(self, id, value: int | Simhash) -> None:
        """Add one fingerprint; the tables are updated lazily, before a query needs them."""
        self.add_many([id], [value])

    def _pending_limit(self) -> int:
        return max(_MIN_PENDING, 2 * math.isqrt(self._indexed))

    def flush(self) -> None:
        """Merge pending additions into the sorted tables (queries do this when needed)."""
        if self._indexed == self._n:
            return
        values = self._values[: self._n]
        if self._n - self._indexed > self._indexed:
            for t in self._tables:
                t.rebuild(values)
        else:
            for t in self._tables:
                t.merge(values, self._indexed)
        self._indexed = self._n

    # -- querying -------------------------------------------------------------------------

    def _query_value(self, value) -> int:
        if isinstance(value, Simhash):
            self._check_params(value)
            value = value.value
        if not isinstance(value, (int, np.integer)) or value < 0 or int(value) >> self.bits:
            raise ParameterError(f"query {value!r} is not an unsigned {self.bits}-bit fingerprint")
        return int(value)

    def _pairs(self, value) -> list[tuple[int, int]]:
        """Sorted (distance, position) of the stored fingerprints within k bits."""
        q = self._query_value(value)
        if self._n - self._indexed > self._pending_limit():
            self.flush()
        qv = np.uint64(q)
        found = []
        for t in self._tables:
            lo, hi = t.bucket(q)
            if hi > lo:
                found.append(t.order[lo:hi])
        pairs: list[tuple[int, int]] = []
        if found:
            pos = np.concatenate(found) if len(found) > 1 else found[0]
            d = popcount(self._values[pos] ^ qv)
            keep = d <= self.k
            # A fingerprint found by several tables appears once.
            pairs = list(set(zip(d[keep].tolist(), pos[keep].tolist())))
        if self._indexed < self._n:  # the pending tail: a plain scan of a short slice
            d = popcount(self._values[self._indexed : self._n] ^ qv)
            hit = np.flatnonzero(d <= self.k)
            pairs.extend(zip(d[hit].tolist(), (hit + self._indexed).tolist()))
        pairs.sort()
        return pairs


    def query(self, value: int | Simhash) -> list[tuple[object, int]]:
        """[(id, distance)] of every stored fingerprint within k bits, nearest first, ties by insertion."""
        pairs = self._pairs(value)
        if not pairs:
            return []
        ids = self._ids.take(np.array([p for _, p in pairs], dtype=np.int64))
        return [(i, d) for i, (d, _) in zip(ids, pairs)]

    def query_many(self, values) -> list[list[tuple[object, int]]]:
        """`query` for many fingerprints at once, vectorised over the queries."""
        qs = self._as_array(values)
        self.flush()
        out: list[list[tuple[object, int]]] = []
        for lo in range(0, qs.shape[0], _QUERY_CHUNK):
            out.extend(self._query_chunk(qs[lo : lo + _QUERY_CHUNK]))
        return out

    def _query_chunk(self, qs: np.ndarray) -> list[list[tuple[object, int]]]:
        nq = qs.shape[0]
        qi_parts, pos_parts = [], []
        for t in self._tables:
            kq = t.key(qs)
            lo = np.searchsorted(t.keys, kq, "left")
            hi = np.searchsorted(t.keys, kq, "right")
            counts = hi - lo
            total = int(counts.sum())
            if total == 0:
                continue
            qi = np.repeat(np.arange(nq), counts)
            # Index of each candidate in t.order: lo of its query plus its rank within the run.
            starts = np.cumsum(counts) - counts
            idx = np.repeat(lo - starts, counts) + np.arange(total)
            qi_parts.append(qi)
            pos_parts.append(t.order[idx])
        results: list[list[tuple[object, int]]] = [[] for _ in range(nq)]
        if not qi_parts:
            return results
        qi = np.concatenate(qi_parts)
        pos = np.concatenate(pos_parts)
        d = popcount(self._values[pos] ^ qs[qi]).astype(np.int64)
        keep = d <= self.k
        qi, pos, d = qi[keep], pos[keep], d[keep]
        if len(self._tables) > 1 and pos.size:
            _, first = np.unique(qi * np.int64(self._n) + pos, return_index=True)
            qi, pos, d = qi[first], pos[first], d[first]
        o = np.lexsort((pos, d, qi))
        qi, pos, d = qi[o], pos[o], d[o]
        ids = self._ids.take(pos)
        bounds = np.searchsorted(qi, np.arange(nq + 1))
        dl = d.tolist()
        for j in range(nq):
            a, b = int(bounds[j]), int(bounds[j + 1])
            results[j] = list(zip(ids[a:b], dl[a:b]))
        return results

    def nbytes(self) -> int:
        """Memory held by the fingerprints, ids and tables, in bytes."""
        return self._values.nbytes + self._ids.nbytes() + sum(t.nbytes() for t in self._tables)

    def __repr__(self) -> str:
        return f"SimhashIndex(bits={self.bits}, k={self.k}, tables={self.tables}, size={self._n})"


def scan(values: np.ndarray, query: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: positions and distances of `values` within k bits of `query`, sorted like the index.

    The baseline the index is measured against: np.bitwise_count(values ^ q) <= k.
    """
    v = np.asarray(values, dtype=np.uint64)
    d = popcount(v ^ np.uint64(query))
    pos = np.flatnonzero(d <= k)
    o = np.lexsort((pos, d[pos]))
    return pos[o], d[pos][o].astype(np.int64)


