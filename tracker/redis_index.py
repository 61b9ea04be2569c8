"""`RedisIndex`: the candidate index on Redis, shared by every worker of the tracker.

It answers exactly the question `fingerprint.index.MemoryIndex` answers (same
candidates, same channels) but keeps the postings in Redis, laid out for memory:

* winnow, pinyin and LSH band keys: one small sorted set per bucket,
  ``{prefix}{w|p|b}:{bucket}``, where the bucket is the top bits of the 64-bit
  key. A posting is one entry: score = the next 23 bits of the key (a small
  integer), member = the document number (also an integer). Redis stores both
  as packed integers in the set's listpack, about 10 bytes per posting; the
  bucket count is sized from `capacity` so a bucket keeps well under the
  128 entries that listpack encoding allows. A page's key is looked up with
  ZRANGEBYSCORE on its bucket (score == its residual); 64 - 23 - bucket bits
  of the key are not stored, so two keys agreeing on the stored 40-odd bits
  are taken as equal (about 1 chance in 10**5 per page at a million originals).
  A document with two keys in one bucket gets members "doc" and "doc:1", since
  a member appears once per set.
* Simhash: the k+1 pigeonhole blocks of the value, one sorted set per block
  value, ``{prefix}s{i}:{block}``: member = document, score = the other 48 bits;
  a query reads its k+1 sets and keeps the values within k bits.
* ``{prefix}d:{doc}``: what removal needs (the buckets of each posting and the
  Simhash), packed; removal reads it and deletes exactly those entries, it never
  scans. ``{prefix}n`` counts documents; ``{prefix}meta`` holds the layout.

Writes go out as raw pipelines (no transaction): a document's record is swapped
with SET ... GET (so a re-added document loses its old postings first and the
count stays exact with several writers), then every posting is one ZADD, sent
in one buffer per batch with replies switched off (CLIENT REPLY OFF), which is
what makes bulk indexing fast; the count update after them turns the replies
back on, so a write refused by Redis (out of memory) is still reported.
A page query is one round trip of ZRANGEBYSCORE/ZRANGE commands.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np
import redis

from fingerprint.engine import EngineConfig
from fingerprint.index import IndexKeys, IndexParams
from fingerprint.lsh import LSHParams
from fingerprint.simhash import hamming

_U64 = np.uint64
RESIDUAL_BITS = 23  # fits Redis' 24-bit signed listpack integer: 5 bytes with its back-length
FILL = 64  # average postings per bucket at `capacity` (Poisson tails stay under 128)
MAX_BUCKET_BITS = 24  # a record stores bucket numbers in 3 bytes
BATCH = 500  # documents per round trip in add_many
CHANNELS = (("winnow", b"w"), ("pinyin", b"p"), ("minhash", b"b"))
# Postings per original per channel with no sampling, for a chapter of about 6,000 syllables;
# only used to size buckets when an index is created.
_PER_DOC = {"winnow": 1330, "pinyin": 360}
_HEADER = np.dtype([("sim", "<u8"), ("has_sim", "u1"), ("n", "<u2", (3,))])


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


def bucket_bits(capacity: int, per_doc: float) -> int:
    """Bucket bits so that `capacity` documents leave about FILL postings per bucket."""
    return int(min(MAX_BUCKET_BITS, max(4, math.ceil(math.log2(max(1.0, capacity * per_doc / FILL))))))


def _members(doc: int, buckets: np.ndarray) -> list[bytes]:
    """Set members for a document's postings in `buckets` (in order): "doc", then "doc:1",
    "doc:2" for its further postings in the same bucket, so none overwrites another."""
    base = b"%d" % doc
    if buckets.shape[0] < 2 or np.unique(buckets).shape[0] == buckets.shape[0]:
        return [base] * buckets.shape[0]
    seen: dict[int, int] = {}
    out = []
    for b in buckets.tolist():
        j = seen.get(b, 0)
        seen[b] = j + 1
        out.append(base if j == 0 else b"%d:%d" % (doc, j))
    return out


def _doc_of(member: bytes) -> int:
    return int(member.partition(b":")[0])


def _cmd(*args: bytes) -> bytes:
    """One command in the Redis protocol (RESP)."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%b\r\n" % (len(a), a) for a in args)


def _zadd(key: bytes, score: int, member: bytes) -> bytes:
    s = b"%d" % score
    return b"*4\r\n$4\r\nZADD\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (
        len(key), key, len(s), s, len(member), member)


_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_SCORE_DIGITS = len(str((1 << RESIDUAL_BITS) - 1))


def _digits(values: np.ndarray, width: int, base: int) -> np.ndarray:
    """ASCII digits of non-negative `values`, zero-padded to `width` (uint8[n, width])."""
    out = np.empty((values.shape[0], width), dtype=np.uint8)
    v = values.astype(np.int64, copy=True)
    for j in range(width - 1, -1, -1):
        out[:, j] = _DIGITS[v % base]
        v //= base
    return out


def _zadd_rows(key_head: bytes, hex_width: int, buckets: np.ndarray, scores: np.ndarray,
               docs: np.ndarray) -> bytes:
    """ZADD {key_head}{bucket} {score} {doc} for every row, built as one buffer with numpy
    (the key's bucket in `hex_width` hex digits, the score zero-padded, the doc as is)."""
    out = []
    widths = np.char.str_len(docs.astype("U20"))
    for w in np.unique(widths).tolist():
        sel = widths == w
        n = int(sel.sum())
        parts = [b"*4\r\n$4\r\nZADD\r\n$%d\r\n%b" % (len(key_head) + hex_width, key_head), hex_width,
                 b"\r\n$%d\r\n" % _SCORE_DIGITS, _SCORE_DIGITS, b"\r\n$%d\r\n" % w, w, b"\r\n"]
        template = b"".join(p if isinstance(p, bytes) else b"0" * p for p in parts)
        rows = np.tile(np.frombuffer(template, dtype=np.uint8), (n, 1))
        at = len(parts[0])
        rows[:, at: at + hex_width] = _digits(buckets[sel], hex_width, 16)
        at += hex_width + len(parts[2])
        rows[:, at: at + _SCORE_DIGITS] = _digits(scores[sel], _SCORE_DIGITS, 10)
        at += _SCORE_DIGITS + len(parts[4])
        rows[:, at: at + w] = _digits(docs[sel], w, 10)
        out.append(rows.tobytes())
    return b"".join(out)


def _pack3(a: np.ndarray) -> bytes:
    return a.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()


def _unpack3(b: bytes, n: int) -> np.ndarray:
    out = np.zeros((n, 4), dtype=np.uint8)
    out[:, :3] = np.frombuffer(b, dtype=np.uint8, count=3 * n).reshape(n, 3)
    return out.view("<u4").ravel().astype(np.int64)


class RedisIndex:
    """A CandidateIndex on Redis, with the same answers as MemoryIndex.

    `capacity` is the number of originals the index is expected to hold; it sizes the
    buckets when the index is first written under `prefix` (later instances read the
    layout from Redis). Too small a capacity makes buckets outgrow Redis' compact
    encoding (more memory); too large leaves them sparse (more keys).
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
        self._meta_key = self.prefix + b"meta"
        self._count_key = self.prefix + b"n"
        self._signature = repr((params, self.bands, self.sim_bits, self.sim_k, RESIDUAL_BITS)).encode()
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
        self.bits = {ch: int(meta[b"bits:" + ch.encode()]) for ch, _ in CHANNELS}

    def _meta_fields(self) -> list[bytes]:
        out = [b"signature", self._signature]
        for ch, _ in CHANNELS:
            out += [b"bits:" + ch.encode(), b"%d" % self.bits[ch]]
        return out

    def _split(self, ch: str, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bucket, residual) of each key: its top bits and the RESIDUAL_BITS under them."""
        b = self.bits[ch]
        k = np.asarray(keys, dtype=_U64)
        bucket = (k >> _U64(64 - b)).astype(np.int64)
        resid = ((k >> _U64(64 - b - RESIDUAL_BITS)) & _U64((1 << RESIDUAL_BITS) - 1)).astype(np.int64)
        return bucket, resid

    def _hex_width(self, tag: bytes) -> int:
        return (self.bits[dict((t, c) for c, t in CHANNELS)[tag]] + 3) // 4

    def _bucket_key(self, tag: bytes, bucket: int) -> bytes:
        return b"%s%s:%0*x" % (self.prefix, tag, self._hex_width(tag), bucket)

    def _sim_key(self, i: int, value: int) -> tuple[bytes, int]:
        """(set key, score) of a Simhash value in block table i: the block picks the set,
        the other bits are the score."""
        s, w = self.sim_blocks[i]
        block = (value >> s) & ((1 << w) - 1)
        rest = ((value >> (s + w)) << s) | (value & ((1 << s) - 1))
        return b"%ss%d:%x" % (self.prefix, i, block), rest

    def _sim_value(self, i: int, block_key_value: int, rest: int) -> int:
        s, w = self.sim_blocks[i]
        return ((rest >> s) << (s + w)) | (block_key_value << s) | (rest & ((1 << s) - 1))

    def _doc_key(self, doc: int) -> bytes:
        return b"%sd:%d" % (self.prefix, doc)

    # -- records ------------------------------------------------------------------------------

    def _channel_keys(self, keys: IndexKeys) -> list[np.ndarray]:
        return [keys.winnow, keys.pinyin, keys.bands]

    def _record(self, keys: IndexKeys) -> bytes:
        h = np.zeros(1, dtype=_HEADER)
        h["sim"] = keys.simhash if keys.simhash_bits else 0
        h["has_sim"] = 1 if keys.simhash_bits else 0
        parts = []
        for j, ((ch, _), arr) in enumerate(zip(CHANNELS, self._channel_keys(keys))):
            h["n"][0, j] = arr.shape[0]
            parts.append(_pack3(self._split(ch, arr)[0]))
        return h.tobytes() + b"".join(parts)

    def _postings_of_record(self, doc: int, rec: bytes) -> list[tuple[bytes, bytes]]:
        """(key, member) of every entry a stored record says a document has."""
        h = np.frombuffer(rec, dtype=_HEADER, count=1)[0]
        out = []
        off = _HEADER.itemsize
        for j, (ch, tag) in enumerate(CHANNELS):
            n = int(h["n"][j])
            buckets = _unpack3(rec[off: off + 3 * n], n)
            off += 3 * n
            for b, m in zip(buckets.tolist(), _members(doc, buckets)):
                out.append((self._bucket_key(tag, b), m))
        if h["has_sim"]:
            for i in range(len(self.sim_blocks)):
                out.append((self._sim_key(i, int(h["sim"]))[0], b"%d" % doc))
        return out

    def _add_commands(self, docs: list[int], keys: dict[int, IndexKeys]) -> list[bytes]:
        """The ZADDs of every posting of `docs`, built with numpy a channel at a time."""
        cmds = []
        for j, (ch, tag) in enumerate(CHANNELS):
            arrays = [self._channel_keys(keys[d])[j] for d in docs]
            counts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
            if not counts.sum():
                continue
            owner = np.repeat(np.array(docs, dtype=np.int64), counts)
            buckets, resid = self._split(ch, np.concatenate(arrays))
            # rank of each posting among its document's postings in the same bucket
            order = np.lexsort((buckets, owner))
            ob, oo = buckets[order], owner[order]
            new_run = np.ones(order.shape[0], dtype=bool)
            new_run[1:] = (ob[1:] != ob[:-1]) | (oo[1:] != oo[:-1])
            starts = np.flatnonzero(new_run)
            rank = np.empty(order.shape[0], dtype=np.int64)
            rank[order] = np.arange(order.shape[0]) - np.repeat(starts, np.diff(np.append(starts, order.shape[0])))
            first = rank == 0
            head = b"%s%s:" % (self.prefix, tag)
            cmds.append(_zadd_rows(head, self._hex_width(tag), buckets[first], resid[first], owner[first]))
            for i in np.flatnonzero(~first).tolist():
                b, d = int(buckets[i]), int(owner[i])
                cmds.append(_zadd(self._bucket_key(tag, b), int(resid[i]), b"%d:%d" % (d, int(rank[i]))))
        for d in docs:
            k = keys[d]
            if k.simhash_bits:
                for i in range(len(self.sim_blocks)):
                    key, rest = self._sim_key(i, k.simhash)
                    cmds.append(_zadd(key, rest, b"%d" % d))
        return cmds

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
            if not tail:
                return []
            return self._run(lambda: self._pipeline(tail))
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

    def _query_raw(self, cmds: list[bytes]) -> list:
        if not self._raw:
            pipe = self.client.pipeline(transaction=False)
            for c in cmds:
                self._replay(pipe, c)
            return pipe.execute()
        conn = self.client.connection_pool.get_connection()
        try:
            conn.send_packed_command([b"".join(cmds)], check_health=True)
            out = [conn.read_response() for _ in cmds]
        except BaseException:
            conn.disconnect()
            raise
        finally:
            self.client.connection_pool.release(conn)
        for r in out:
            if isinstance(r, redis.ResponseError):
                raise r
        return out

    # -- the CandidateIndex protocol -------------------------------------------------------------

    def add(self, doc: int, keys: IndexKeys) -> None:
        self.add_many([(doc, keys)])

    def add_many(self, items: Iterable[tuple[int, IndexKeys]]) -> None:
        """Index originals, `batch` per round trip pair (record swap, then postings)."""
        it = iter(items)
        while True:
            chunk = list(islice(it, self.batch))
            if not chunk:
                return
            self._add_chunk(chunk)

    def _add_chunk(self, chunk: list[tuple[int, IndexKeys]]) -> None:
        self._adopt_layout()
        last: dict[int, IndexKeys] = {}
        for doc, keys in chunk:  # a number given twice keeps its last keys, as with add() in turn
            last[int(doc)] = keys
        docs = list(last)
        records = [None if last[d].empty else self._record(last[d]) for d in docs]

        def swap():
            pipe = self.client.pipeline(transaction=False)
            for d, rec in zip(docs, records):
                if rec is None:
                    pipe.getdel(self._doc_key(d))
                else:
                    pipe.set(self._doc_key(d), rec, get=True)
            return pipe.execute()

        old = self._run(swap)
        packed: list[bytes] = []
        delta = 0
        adds = []
        for d, prev in zip(docs, old):
            if prev is not None:  # old postings go first: the new ones may reuse their entries
                for key, m in self._postings_of_record(d, prev):
                    packed.append(_cmd(b"ZREM", key, m))
                delta -= 1
            if not last[d].empty:
                adds.append(d)
                delta += 1
        packed += self._add_commands(adds, last)
        tail = [("INCRBY", self._count_key, delta)]
        if packed:
            tail.append(("HSET", self._meta_key, *self._meta_fields()))
        self._send(packed, tail)

    def remove(self, doc: int) -> None:
        doc = int(doc)
        self._adopt_layout()
        prev = self._run(lambda: self.client.getdel(self._doc_key(doc)))
        if prev is None:
            return
        packed = [_cmd(b"ZREM", k, m) for k, m in self._postings_of_record(doc, prev)]
        self._send(packed, [("DECR", self._count_key)])

    def candidates(self, keys: IndexKeys) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        if keys.empty:
            return out
        self._adopt_layout()
        cmds: list[bytes] = []
        plan: list[tuple[str, int]] = []  # (channel, how many commands)
        for (ch, tag), arr in zip(CHANNELS, self._channel_keys(keys)):
            u = np.unique(np.asarray(arr, dtype=_U64))
            buckets, resid = self._split(ch, u)
            for b, r in zip(buckets.tolist(), resid.tolist()):
                s = b"%d" % r
                cmds.append(_cmd(b"ZRANGEBYSCORE", self._bucket_key(tag, b), s, s))
            plan.append((ch, u.shape[0]))
        sim_keys = []
        if keys.simhash_bits:
            for i in range(len(self.sim_blocks)):
                k, _ = self._sim_key(i, keys.simhash)
                cmds.append(_cmd(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"))
                s, w = self.sim_blocks[i]
                sim_keys.append((i, (keys.simhash >> s) & ((1 << w) - 1)))
        if not cmds:
            return out
        replies = self._run(lambda: self._query_raw(cmds))
        p = self.params
        pos = 0
        for ch, n in plan:
            part, pos = replies[pos: pos + n], pos + n
            if ch == "minhash":
                for members in part:
                    for m in members:
                        out.setdefault(_doc_of(m), set()).add(ch)
                continue
            hits: dict[int, int] = {}
            for members in part:
                if not members:
                    continue
                docs = {_doc_of(m) for m in members}
                if len(docs) > p.max_df:
                    continue
                for d in docs:
                    hits[d] = hits.get(d, 0) + 1
            for d, c in hits.items():
                if c >= p.min_hits:
                    out.setdefault(d, set()).add(ch)
        for (i, block), reply in zip(sim_keys, replies[pos:]):
            for m, score in _pairs(reply):
                if hamming(self._sim_value(i, block, int(score)), keys.simhash) <= self.sim_k:
                    out.setdefault(_doc_of(m), set()).add("simhash")
        return out

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


def _pairs(reply) -> list[tuple[bytes, float]]:
    """ZRANGE ... WITHSCORES replies as (member, score) pairs, whichever form the client gives."""
    if not reply:
        return []
    if isinstance(reply[0], (list, tuple)):
        return [(m, s) for m, s in reply]
    return [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]


def _glob_escape(b: bytes) -> bytes:
    out = bytearray()
    for c in b:
        if c in b"*?[]\\":
            out.append(0x5C)
        out.append(c)
    return bytes(out)
