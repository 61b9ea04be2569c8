"""`RedisIndex`: the candidate index on Redis, shared by every worker of the tracker.

It answers exactly the question `fingerprint.index.MemoryIndex` answers (same
candidates, same channels) but keeps the postings in Redis, laid out for memory
and for few commands:

* winnow, pinyin and LSH band keys: one append-only string per bucket,
  ``{prefix}{w|p|b}:{bucket}``, where the bucket is the top bits of the 64-bit
  key (sized from `capacity` so a bucket holds about FILL postings). A posting
  is a fixed record: the next RESIDUAL_BYTES bytes of the key, then a 4-byte
  posting id, little-endian. A batch groups its postings by bucket and writes
  each bucket with one APPEND. The key bits below the stored ones are dropped,
  so two keys agreeing on the stored bits (bucket + residual) count as equal.
* Simhash: the k+1 pigeonhole blocks of the value; table i keeps, under the top
  bits of block i, ``{prefix}s{i}:{bucket}``, 12-byte records (the whole value,
  then the posting id); a query reads its k+1 buckets and keeps values within k bits.
* Removal never scans and never rewrites postings: postings are not deleted,
  they die. A document's first posting id is its own number (below 2**31). Its
  state is a field of ``{prefix}D:{doc >> 8}`` (a small hash, one per 256
  numbers): "" = indexed under its own number, "<id>" = indexed under an alias
  id (>= 2**31, given when a number is indexed again), "-" = removed.
  ``{prefix}A:{id >> 8}`` maps live alias ids to documents; a dead alias is
  deleted from it. ``{prefix}F`` is a 65,536-bit filter: bit (doc & 0xFFFF) is
  set once a document's own number has died (removed or re-indexed). A query
  trusts postings whose id is a number with a clear filter bit and looks up the
  others in a second round trip, which only happens when changed documents are
  among the hits. Dead postings take memory until `clear()` and a rebuild.
* ``{prefix}n`` counts documents, ``{prefix}ids`` hands out alias ids and
  ``{prefix}meta`` holds the layout.

Writes go out as raw pipelines (no transaction): one round trip marks the new
documents (HSETNX on their state; a number already known takes the slow path
of a WATCH/MULTI transaction that gives it an alias), then one buffer carries
every APPEND with replies switched off (CLIENT REPLY OFF); the count update
after them turns replies back on, so a write refused by Redis is still
reported. A query is one MGET (plus the rare lookup above).
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np
import redis

from fingerprint.engine import EngineConfig
from fingerprint.hashing import distinct
from fingerprint.index import IndexKeys, IndexParams
from fingerprint.lsh import LSHParams
from fingerprint.simhash import popcount

_U64 = np.uint64
RESIDUAL_BYTES = 3  # key bits stored per posting under the bucket bits (24)
REC = RESIDUAL_BYTES + 4  # bytes per winnow/pinyin/band posting
SIM_REC = 12  # bytes per Simhash posting: the value, then the id
FILL = 256  # average postings per bucket at `capacity`
MAX_BUCKET_BITS = 28
ALIAS_BASE = 1 << 31  # posting ids from here on are aliases; document numbers stay below
FILTER_MASK = 0xFFFF  # bits of the changed-documents filter
BATCH = 20_000  # documents per round trip pair in add_many
CHANNELS = (("winnow", b"w"), ("pinyin", b"p"), ("minhash", b"b"))
# Postings per original per channel with no sampling, for a chapter of about 6,000 syllables;
# only used to size buckets when an index is created.
_PER_DOC = {"winnow": 1330, "pinyin": 360}
_LAYOUT = b"packed-v1"


class IndexUnavailable(RuntimeError):
    """Redis cannot be reached, or refused a command; the message says how to fix it."""


class IndexMismatch(ValueError):
    """The prefix already holds an index built with other parameters."""


def redis_url(client: redis.Redis) -> str:
    """The address a client talks to, for messages."""
    kw = client.connection_pool.connection_kwargs
    if kw.get("path"):
        return f"unix://{kw['path']}?db={kw.get('db', 0)}"
    return f"redis://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


def _unavailable(url: str, e: Exception) -> IndexUnavailable:
    return IndexUnavailable(
        f"cannot reach Redis at {url}: {e}; start it or unset FPT_REDIS_URL to use the in-process index"
    )


def connect(url: str, timeout: float = 2.0) -> redis.Redis:
    """A client for `url`, checked with a PING that gives up after `timeout` seconds."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=max(timeout, 10.0))
        client.ping()
    except (redis.RedisError, OSError, ValueError) as e:
        raise _unavailable(url, e) from e
    return client


def bucket_bits(capacity: int, per_doc: float, most: int = MAX_BUCKET_BITS) -> int:
    """Bucket bits so that `capacity` documents leave about FILL postings per bucket."""
    return int(min(most, max(4, math.ceil(math.log2(max(1.0, capacity * per_doc / FILL))))))


def _cmd(*args: bytes) -> bytes:
    """One command in the Redis protocol (RESP)."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%b\r\n" % (len(a), a) for a in args)


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _hex(values: np.ndarray, width: int) -> np.ndarray:
    """Lower-case hex digits of non-negative `values`, zero-padded to `width` (uint8[n, width])."""
    out = np.empty((values.shape[0], width), dtype=np.uint8)
    v = values.astype(np.int64, copy=True)
    for j in range(width - 1, -1, -1):
        out[:, j] = _HEX[v & 15]
        v >>= 4
    return out


def _appends(head: bytes, width: int, buckets: np.ndarray, recs: np.ndarray) -> list[bytes]:
    """APPEND {head}{bucket in `width` hex digits} {the records of that bucket, in order} for
    every bucket in `buckets` (one per record of `recs`, uint8[n, size]), built with numpy:
    buckets with the same number of records make commands of the same length."""
    if not buckets.shape[0]:
        return []
    order = np.argsort(buckets.astype(np.int32))  # buckets have at most 28 bits; any order in a bucket
    b, recs = buckets[order], recs[order]
    size = recs.shape[1]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    counts = np.diff(np.r_[starts, b.shape[0]])
    out = []
    klen = len(head) + width
    for k in np.unique(counts).tolist():
        sel = starts[counts == k]
        pre = b"*3\r\n$6\r\nAPPEND\r\n$%d\r\n%b" % (klen, head)
        mid = b"\r\n$%d\r\n" % (k * size)
        rows = np.empty((sel.shape[0], len(pre) + width + len(mid) + k * size + 2), dtype=np.uint8)
        rows[:, : len(pre)] = np.frombuffer(pre, dtype=np.uint8)
        at = len(pre)
        rows[:, at: at + width] = _hex(b[sel], width)
        at += width
        rows[:, at: at + len(mid)] = np.frombuffer(mid, dtype=np.uint8)
        at += len(mid)
        rows[:, at: at + k * size] = recs[sel[:, None] + np.arange(k)].reshape(sel.shape[0], k * size)
        rows[:, -2:] = np.frombuffer(b"\r\n", dtype=np.uint8)
        out.append(rows.tobytes())
    return out


def _records(resid: np.ndarray, ids: np.ndarray, rbytes: int) -> np.ndarray:
    """Records (uint8[n, rbytes + 4]): the low `rbytes` bytes of each residual, then the id."""
    out = np.empty((ids.shape[0], rbytes + 4), dtype=np.uint8)
    out[:, :rbytes] = resid.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :rbytes]
    out[:, rbytes:] = ids.astype("<u4").view(np.uint8).reshape(-1, 4)
    return out


def _parse(replies: Sequence, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(records uint8[m, size], index of the reply each came from) of MGET replies."""
    lens = np.fromiter((len(r) // size if r else 0 for r in replies), dtype=np.int64, count=len(replies))
    buf = b"".join(r for r in replies if r)
    recs = np.frombuffer(buf, dtype=np.uint8)[: lens.sum() * size].reshape(-1, size)
    return recs, np.repeat(np.arange(len(replies)), lens)


def _le(cols: np.ndarray) -> np.ndarray:
    """Little-endian unsigned integers from byte columns (uint8[n, w], w <= 8) as uint64."""
    out = np.zeros((cols.shape[0], 8), dtype=np.uint8)
    out[:, : cols.shape[1]] = cols
    return out.view("<u8").ravel()


class RedisIndex:
    """A CandidateIndex on Redis, with the same answers as MemoryIndex.

    `capacity` is the number of originals the index is expected to hold; it sizes the
    buckets when the index is first written under `prefix` (later instances read the
    layout from Redis). Too small a capacity makes buckets long (slower queries); too
    large leaves them short (more keys, more memory per posting, more commands per batch).
    Document numbers must be below 2**31.
    """

    def __init__(self, client: redis.Redis, config: EngineConfig = EngineConfig(),
                 params: IndexParams = IndexParams(), prefix: str = "fpt:", *,
                 capacity: int = 100_000, batch: int = BATCH):
        self.client = client
        self.config = config
        self.params = params
        self.prefix = prefix.encode() if isinstance(prefix, str) else bytes(prefix)
        self.batch = batch
        self.url = redis_url(client)
        self.bands, _ = LSHParams(config.lsh_threshold, config.minhash).bands_rows
        self.sim_bits = min(config.simhash_bits, 64)
        self.sim_k = config.simhash_distance
        nb = self.sim_k + 1
        base, extra = divmod(self.sim_bits, nb)
        self.sim_blocks, shift = [], 0
        for i in range(nb):
            w = base + (1 if i < extra else 0)
            self.sim_blocks.append((shift, w))
            shift += w
        per_doc = {"winnow": _PER_DOC["winnow"] / max(1, params.winnow_sample),
                   "pinyin": _PER_DOC["pinyin"] / max(1, params.pinyin_sample), "minhash": self.bands}
        self.bits = {ch: bucket_bits(capacity, per_doc[ch]) for ch, _ in CHANNELS}
        self.bits["simhash"] = bucket_bits(capacity, 1, most=min(w for _, w in self.sim_blocks))
        self._meta_key = self.prefix + b"meta"
        self._count_key = self.prefix + b"n"
        self._ids_key = self.prefix + b"ids"
        self._filter_key = self.prefix + b"F"
        self._signature = repr((params, self.bands, self.sim_bits, self.sim_k, _LAYOUT, RESIDUAL_BYTES)).encode()
        self._layout_read = False  # read from Redis on first use, so constructing never blocks
        conn_cls = client.connection_pool.connection_class
        # A socket connection can switch replies off for bulk writes; an in-process one
        # (fakeredis) takes the same commands through an ordinary pipeline.
        self._raw = "fakeredis" not in conn_cls.__module__

    # -- layout -----------------------------------------------------------------------------

    def _adopt_layout(self) -> None:
        if self._layout_read:
            return
        meta = self._run(lambda: self.client.hgetall(self._meta_key))
        self._layout_read = True
        if not meta:
            return
        if meta.get(b"signature") != self._signature:
            raise IndexMismatch(
                f"the index under prefix {self.prefix.decode(errors='replace')!r} at {self.url} was built with "
                f"{meta.get(b'signature', b'?').decode(errors='replace')}, not {self._signature.decode()}; "
                "use the same parameters, another prefix, or clear() that index first"
            )
        self.bits = {ch: int(meta[b"bits:" + ch.encode()]) for ch in self.bits}

    def _meta_fields(self) -> list[bytes]:
        out = [b"signature", self._signature]
        for ch, b in self.bits.items():
            out += [b"bits:" + ch.encode(), b"%d" % b]
        return out

    def _split(self, ch: str, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bucket, residual) of each key: its top bits and the RESIDUAL_BYTES bytes under them."""
        b = self.bits[ch]
        k = np.asarray(keys, dtype=_U64)
        bucket = (k >> _U64(64 - b)).astype(np.int64)
        resid = (k >> _U64(64 - b - 8 * RESIDUAL_BYTES)) & _U64((1 << (8 * RESIDUAL_BYTES)) - 1)
        return bucket, resid

    def _width(self, ch: str) -> int:
        return (self.bits[ch] + 3) // 4

    def _sim_bucket(self, i: int, values: np.ndarray) -> np.ndarray:
        """The bucket of each Simhash value in table i: the top bits of its block i."""
        s, w = self.sim_blocks[i]
        block = (np.asarray(values, dtype=_U64) >> _U64(s)) & _U64((1 << w) - 1)
        return (block >> _U64(w - self.bits["simhash"])).astype(np.int64)

    def _sim_head(self, i: int) -> bytes:
        return b"%ss%d:" % (self.prefix, i)

    def _state_key(self, doc: int) -> bytes:
        return b"%sD:%x" % (self.prefix, doc >> 8)

    def _alias_key(self, pid: int) -> bytes:
        return b"%sA:%x" % (self.prefix, pid >> 8)

    # -- Redis access ---------------------------------------------------------------------------

    def _run(self, fn):
        try:
            return fn()
        except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
            raise _unavailable(self.url, e) from e
        except redis.ResponseError as e:
            raise IndexUnavailable(
                f"Redis at {self.url} refused a command: {e}; check its memory limit (maxmemory) "
                f"and that nothing else writes keys under {self.prefix.decode(errors='replace')!r}"
            ) from e

    def _send(self, packed: list[bytes], tail: Sequence[tuple]) -> list:
        """Send `packed` commands (RESP bytes) whose replies are not needed, then the `tail`
        commands, and return the tail's replies. One round trip."""
        if not packed:
            return self._run(lambda: self._pipeline(tail)) if tail else []
        if not self._raw:
            return self._run(lambda: self._pipeline([("__raw__", p) for p in packed] + list(tail))[len(packed):])

        def go():
            conn = self.client.connection_pool.get_connection()
            try:
                buf = [_cmd(b"CLIENT", b"REPLY", b"OFF"), *packed, _cmd(b"CLIENT", b"REPLY", b"ON")]
                buf += [_cmd(*(a if isinstance(a, bytes) else str(a).encode() for a in c)) for c in tail]
                conn.send_packed_command([b"".join(buf)], check_health=True)
                ok = conn.read_response()
                if ok not in (b"OK", "OK"):
                    raise redis.ResponseError(f"unexpected reply to CLIENT REPLY ON: {ok!r}")
                out = []
                for _ in tail:
                    r = conn.read_response()
                    if isinstance(r, redis.ResponseError):
                        raise r
                    out.append(r)
                return out
            except BaseException:
                conn.disconnect()  # its reply stream is no longer in step
                raise
            finally:
                self.client.connection_pool.release(conn)

        return self._run(go)

    def _ask(self, packed: list[bytes]) -> list:
        """Send RESP-encoded commands in one round trip and return their replies."""
        if not packed:
            return []
        if not self._raw:
            return self._run(lambda: self._pipeline([("__raw__", p) for p in packed]))

        def go():
            conn = self.client.connection_pool.get_connection()
            try:
                conn.send_packed_command([b"".join(packed)], check_health=True)
                out = [conn.read_response() for _ in packed]
            except BaseException:
                conn.disconnect()
                raise
            finally:
                self.client.connection_pool.release(conn)
            for r in out:
                if isinstance(r, redis.ResponseError):
                    raise r
            return out

        return self._run(go)

    def _pipeline(self, cmds: Sequence[tuple]) -> list:
        pipe = self.client.pipeline(transaction=False)
        for c in cmds:
            if c[0] == "__raw__":
                self._replay(pipe, c[1])
            else:
                pipe.execute_command(*c)
        return pipe.execute()

    @staticmethod
    def _replay(pipe, packed: bytes) -> None:
        """Queue RESP-encoded commands on a pipeline (the in-process path)."""
        pos = 0
        while pos < len(packed):
            end = packed.index(b"\r\n", pos)
            n = int(packed[pos + 1: end])
            pos = end + 2
            args = []
            for _ in range(n):
                end = packed.index(b"\r\n", pos)
                size = int(packed[pos + 1: end])
                args.append(packed[end + 2: end + 2 + size])
                pos = end + 2 + size + 2
            pipe.execute_command(*args)

    # -- document state -------------------------------------------------------------------------

    def _reindex(self, doc: int) -> int:
        """Give a number that was indexed before a fresh alias id (its old postings die);
        returns the alias. One WATCH/MULTI transaction on its state, retried on conflict."""
        skey, field = self._state_key(doc), b"%d" % doc

        def body(pipe) -> int:
            old = pipe.hget(skey, field)
            pid = ALIAS_BASE + int(pipe.incr(self._ids_key)) - 1
            if pid >= 1 << 32:
                raise ValueError(f"the alias ids under {self.prefix!r} are used up; rebuild the index")
            pipe.multi()
            pipe.hset(skey, field, b"%d" % pid)
            pipe.hset(self._alias_key(pid), b"%d" % pid, field)
            if old not in (None, b"", b"-"):
                pipe.hdel(self._alias_key(int(old)), old)
            if old in (None, b"-"):
                pipe.incr(self._count_key)
            pipe.setbit(self._filter_key, doc & FILTER_MASK, 1)
            pipe.execute()
            return pid

        return self._watched(skey, body)

    def _watched(self, key: bytes, body):
        """Run body(pipe) in an optimistic transaction on `key`, again whenever another
        client changed the key in between (WATCH/MULTI/EXEC)."""

        def go():
            with self.client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(key)
                        return body(pipe)
                    except redis.WatchError:
                        continue

        return self._run(go)

    def remove(self, doc: int) -> None:
        doc = int(doc)
        self._adopt_layout()
        skey, field = self._state_key(doc), b"%d" % doc

        def body(pipe) -> None:
            old = pipe.hget(skey, field)
            if old in (None, b"-"):
                pipe.unwatch()
                return
            pipe.multi()
            pipe.hset(skey, field, b"-")
            if old != b"":
                pipe.hdel(self._alias_key(int(old)), old)
            pipe.setbit(self._filter_key, doc & FILTER_MASK, 1)
            pipe.decr(self._count_key)
            pipe.execute()

        self._watched(skey, body)

    def _live(self, pids: np.ndarray, filt: bytes | None) -> np.ndarray:
        """The document of each posting id, or -1 where the posting is dead."""
        docs = pids.astype(np.int64)
        if not pids.shape[0] or (filt is None and not (pids >= ALIAS_BASE).any()):
            return docs
        u = np.unique(pids).astype(np.int64)
        ask = u >= ALIAS_BASE
        if filt:
            bits = np.unpackbits(np.frombuffer(filt, dtype=np.uint8))
            j = u & FILTER_MASK
            ask |= (u < ALIAS_BASE) & (j < bits.shape[0]) & (bits[np.minimum(j, bits.shape[0] - 1)] == 1)
        asked = u[ask].tolist()
        if not asked:
            return docs

        def lookup():
            pipe = self.client.pipeline(transaction=False)
            for p in asked:
                if p >= ALIAS_BASE:
                    pipe.hget(self._alias_key(p), b"%d" % p)
                else:
                    pipe.hget(self._state_key(p), b"%d" % p)
            return pipe.execute()

        answer = {}
        for p, r in zip(asked, self._run(lookup)):
            if p >= ALIAS_BASE:
                answer[p] = int(r) if r is not None else -1
            else:
                answer[p] = p if r == b"" else -1
        table = np.array([answer.get(p, p) for p in u.tolist()], dtype=np.int64)
        return table[np.searchsorted(u, docs)]

    # -- the CandidateIndex protocol -------------------------------------------------------------

    def add(self, doc: int, keys: IndexKeys) -> None:
        self.add_many([(doc, keys)])

    def add_many(self, items: Iterable[tuple[int, IndexKeys]]) -> None:
        """Index originals, `batch` per round trip pair (states, then postings)."""
        it = iter(items)
        while chunk := list(islice(it, self.batch)):
            job = self._prepare_chunk(chunk)
            if job is not None:
                self._send(*job)

    def _prepare_chunk(self, chunk: list[tuple[int, IndexKeys]]) -> tuple[list[bytes], list[tuple]] | None:
        """Mark a batch's documents (one round trip) and build their postings' commands."""
        self._adopt_layout()
        last: dict[int, IndexKeys] = {}
        for doc, keys in chunk:  # a number given twice keeps its last keys, as with add() in turn
            doc = int(doc)
            if not 0 <= doc < ALIAS_BASE:
                raise ValueError(f"document numbers must be in [0, 2**31), got {doc}")
            last[doc] = keys
        docs = [d for d, k in last.items() if not k.empty]
        gone = [d for d, k in last.items() if k.empty]  # indexed empty: only what it had goes
        replies = self._ask([_cmd(b"HSETNX", self._state_key(d), b"%d" % d, b"") for d in docs]
                            + [_cmd(b"HGET", self._state_key(d), b"%d" % d) for d in gone])
        fresh = replies[: len(docs)]
        for d, state in zip(gone, replies[len(docs):]):
            if state not in (None, b"-"):
                self.remove(d)
        if not docs:
            return None
        pids = [d if new else self._reindex(d) for d, new in zip(docs, fresh)]
        packed = self._add_commands(pids, [last[d] for d in docs])
        return packed, [("INCRBY", self._count_key, sum(1 for new in fresh if new)),
                        ("HSET", self._meta_key, *self._meta_fields())]

    def _add_commands(self, pids: list[int], keys: list[IndexKeys]) -> list[bytes]:
        """The APPENDs of every posting of the documents, one per bucket, built with numpy."""
        cmds = []
        for ch, tag in CHANNELS:
            arrays = [getattr(k, "bands" if ch == "minhash" else ch) for k in keys]
            counts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
            if not counts.sum():
                continue
            owner = np.repeat(np.array(pids, dtype=np.int64), counts)
            buckets, resid = self._split(ch, np.concatenate(arrays))
            cmds += _appends(b"%s%s:" % (self.prefix, tag), self._width(ch), buckets,
                             _records(resid, owner, RESIDUAL_BYTES))
        with_sim = [(p, k.simhash) for p, k in zip(pids, keys) if k.simhash_bits]
        if with_sim:
            owner = np.array([p for p, _ in with_sim], dtype=np.int64)
            values = np.array([v for _, v in with_sim], dtype=_U64)
            recs = _records(values, owner, 8)
            for i in range(len(self.sim_blocks)):
                cmds += _appends(self._sim_head(i), self._width("simhash"), self._sim_bucket(i, values), recs)
        return cmds

    def candidates(self, keys: IndexKeys) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        if keys.empty:
            return out
        self._adopt_layout()
        names: list[bytes] = []
        plan = []  # (channel, residuals of its distinct keys)
        for ch, tag in CHANNELS:
            u = distinct(getattr(keys, "bands" if ch == "minhash" else ch))
            buckets, resid = self._split(ch, u)
            w = self._width(ch)
            names += [b"%s%s:%0*x" % (self.prefix, tag, w, b) for b in buckets.tolist()]
            plan.append((ch, resid))
        if keys.simhash_bits:
            v = np.array([keys.simhash], dtype=_U64)
            w = self._width("simhash")
            names += [b"%s%0*x" % (self._sim_head(i), w, int(self._sim_bucket(i, v)[0]))
                      for i in range(len(self.sim_blocks))]
        if not names:
            return out
        replies = self._run(lambda: self.client.mget(names + [self._filter_key]))
        filt = replies[-1]
        found = []  # (channel, query key index or -1, posting ids)
        pos = 0
        for ch, resid in plan:
            n = resid.shape[0]
            recs, qi = _parse(replies[pos: pos + n], REC)
            pos += n
            hit = _le(recs[:, :RESIDUAL_BYTES]) == resid[qi]
            found.append((ch, qi[hit], _le(recs[hit, RESIDUAL_BYTES:])))
        if keys.simhash_bits:
            recs, _ = _parse(replies[pos:-1], SIM_REC)
            near = popcount(_le(recs[:, :8]) ^ _U64(keys.simhash)) <= self.sim_k
            found.append(("simhash", None, _le(recs[near, 8:])))
        all_ids = np.concatenate([f[2] for f in found]) if found else np.empty(0, dtype=_U64)
        live = self._live(all_ids, filt)
        p = self.params
        at = 0
        for ch, qi, ids in found:
            docs = live[at: at + ids.shape[0]]
            at += ids.shape[0]
            ok = docs >= 0
            docs = docs[ok]
            if ch in ("winnow", "pinyin"):
                # distinct (query key, doc) pairs packed in one int64: key << 32 | doc
                pairs = distinct((qi[ok].astype(np.int64) << 32) | docs.astype(np.int64))
                q, d = pairs >> 32, pairs & 0xFFFFFFFF
                d = np.sort(d[np.bincount(q)[q] <= p.max_df])
                docs, counts = _runs(d)
                docs = docs[counts >= p.min_hits]
            else:
                docs = distinct(docs.astype(np.int64))
            for d in docs.tolist():
                out.setdefault(d, set()).add(ch)
        return out

    def compact(self, step: int = 1000) -> int:
        """Store every posting string at its exact size; returns the strings rewritten.

        APPEND makes Redis reserve as much room again as a string holds, so a bucket that
        grows takes up to twice its length. COPY writes an exact-size copy on the server
        (nothing crosses the network) and RENAME puts it in place, in one MULTI block per
        string, so a concurrent APPEND lands before or after, never in between. Run it after
        a bulk load or now and then; it keeps dead postings (only `clear()` drops those)."""
        self._adopt_layout()
        tmp = self.prefix + b"compact:" + os.urandom(6).hex().encode()

        def go():
            done = 0
            names = []
            for k in self.client.scan_iter(match=_glob_escape(self.prefix) + b"[wpbs]*:*", count=step):
                names.append(k)
                if len(names) >= step:
                    done += self._compact(names, tmp)
                    names = []
            return done + self._compact(names, tmp)

        return self._run(go)

    def _compact(self, names: list[bytes], tmp: bytes) -> int:
        packed = [_cmd(b"MULTI") + _cmd(b"COPY", k, tmp) + _cmd(b"RENAME", tmp, k) + _cmd(b"EXEC")
                  for k in names]
        if packed:
            self._send(packed, [("EXISTS", tmp)])
        return len(names)

    def clear(self) -> None:
        """Delete every key under the prefix (SCAN + UNLINK, 1,000 at a time)."""
        def go():
            pattern = _glob_escape(self.prefix) + b"*"
            batch = []
            for k in self.client.scan_iter(match=pattern, count=1000):
                batch.append(k)
                if len(batch) >= 1000:
                    self.client.unlink(*batch)
                    batch.clear()
            if batch:
                self.client.unlink(*batch)
        self._run(go)
        self._layout_read = False

    def __len__(self) -> int:
        v = self._run(lambda: self.client.get(self._count_key))
        return int(v or 0)

    def __repr__(self) -> str:
        return f"RedisIndex({self.url}, prefix={self.prefix.decode(errors='replace')!r}, bits={self.bits})"


def _glob_escape(b: bytes) -> bytes:
    out = bytearray()
    for c in b:
        if c in b"*?[]\\":
            out.append(0x5C)
        out.append(c)
    return bytes(out)


def _runs(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value, count) of each run in a sorted array."""
    n = sorted_values.shape[0]
    if n == 0:
        return sorted_values, np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_values[1:] != sorted_values[:-1])))
    return sorted_values[starts], np.diff(np.append(starts, n))
