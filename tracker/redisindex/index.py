"""`RedisIndex`: the candidate index on Redis (one instance or a cluster), shared by every
worker of the tracker.

It answers exactly the question `fingerprint.index.MemoryIndex` answers (same
candidates, same channels) but keeps the postings in Redis (layout.py), the document
state in one hash slot (state.py), and talks to every node with raw pipelines (wire.py).

Writing a batch takes two round trips: the first marks the documents known (a
BITFIELD on the state; a number already known takes the slow path of a WATCH/MULTI
transaction that gives it an alias), the second sends every node its APPENDs, one per
bucket, and the state node the count. A query is one round trip to every node (GETs of
its buckets, the changed-documents filter and the segment map), plus a rare second one.
"""
from __future__ import annotations

import os
from binascii import crc_hqx
from collections.abc import Iterable
from itertools import islice

import numpy as np
import redis

from fingerprint.engine import EngineConfig
from fingerprint.hashing import distinct
from fingerprint.index import IndexKeys, IndexParams, best_hits
from fingerprint.lsh import LSHParams
from fingerprint.simhash import popcount

from ..redis_client import RedisUnavailable, client_url, explain
from .layout import (
    CHANNELS,
    FILLS,
    ID_BYTES,
    LAYOUT,
    OLD_LAYOUTS,
    PER_DOC,
    SEGMENT_SHIFT,
    Layout,
    appends,
    bucket_bits,
    glob_escape,
    id3,
    le,
    le_bytes,
    matching,
    parse,
    records,
    residual_bytes,
    rotl,
    runs,
    segment_tail,
)
from .state import ALIAS_BASE, DocState, segments_of
from .wire import SLOTS, Batch, Nodes, cmd, split_rows

_U64 = np.uint64
BATCH = 100_000  # documents per round trip pair in add_many
# The IndexKeys array each posting channel writes (an original's) and reads (a page's):
# the translation channel posts an original's own-language keys and looks up the page's
# keys tagged with the other language.
POSTED = {"winnow": "winnow", "pinyin": "pinyin", "minhash": "bands", "translation": "translation"}
ASKED = {"winnow": "winnow", "pinyin": "pinyin", "minhash": "bands", "translation": "translation_query"}


#: Redis cannot be reached, or refused a command; the message says why and how to fix it.
IndexUnavailable = RedisUnavailable


class IndexMismatch(ValueError):
    """The prefix already holds an index built with other parameters or an older layout."""


class RedisIndex:
    """A CandidateIndex on Redis, with the same answers as MemoryIndex.

    `client` is a redis.Redis or a redis.cluster.RedisCluster (tracker.redis_client.connect
    gives the right one for a URL). `capacity` is the number of originals the index is
    expected to hold; it sizes the buckets when the index is first written under `prefix`
    (later instances read the layout from Redis). Too small a capacity makes buckets long
    (slower queries); too large leaves them short (more keys, more memory per posting).
    Document numbers must be below 2**31.
    """

    def __init__(self, client, config: EngineConfig = EngineConfig(), params: IndexParams = IndexParams(),
                 prefix: str = "fpt:", *, capacity: int = 100_000, batch: int = BATCH):
        self.client = client
        self.config = config
        self.params = params
        self.prefix = prefix.encode() if isinstance(prefix, str) else bytes(prefix)
        if b"{" in self.prefix or b"}" in self.prefix:
            raise ValueError(f"the Redis key prefix {self.prefix.decode(errors='replace')!r} must not contain "
                             "{ or }: the index puts its own hash tags in key names (set FPT_REDIS_PREFIX)")
        self.batch = batch
        self.url = client_url(client)
        self.nodes = Nodes(client)
        self.bands, _ = LSHParams(config.lsh_threshold, config.minhash).bands_rows
        self.sim_bits = min(config.simhash_bits, 64)
        self.sim_k = config.simhash_distance
        nb = self.sim_k + 1
        base, extra = divmod(self.sim_bits, nb)
        blocks, shift = [], 0
        for i in range(nb):
            w = base + (1 if i < extra else 0)
            blocks.append((shift, w))
            shift += w
        per_doc = {"winnow": PER_DOC["winnow"] / max(1, params.winnow_sample),
                   "pinyin": PER_DOC["pinyin"] / max(1, params.pinyin_sample), "minhash": self.bands,
                   "translation": PER_DOC["translation"]}
        # Shared keys that make a candidate, for the residual bytes' false-candidate estimate.
        # Translation: 1, not translation_min_hits: a page shares a few concept keys with many
        # originals by chance, so one false meeting can complete such a near candidate.
        least = {"winnow": params.min_hits, "pinyin": params.min_hits, "minhash": 1, "translation": 1}
        bits = {ch: bucket_bits(capacity, per_doc[ch], fill=FILLS[ch]) for ch, _ in CHANNELS}
        resid = {ch: residual_bytes(capacity, per_doc[ch], bits[ch], least[ch]) for ch, _ in CHANNELS}
        bits["simhash"] = bucket_bits(capacity, 1, most=min(w for _, w in blocks), fill=FILLS["simhash"])
        self._sized = (dict(bits), dict(resid))  # from `capacity`; an existing index's layout wins
        self.layout = Layout(self.prefix, bits, resid, blocks)
        self.state = DocState(self.nodes, self.layout)
        self._signature = repr((params, self.bands, self.sim_bits, self.sim_k, LAYOUT)).encode()
        self._layout_read = False  # read from Redis on first use, so constructing never blocks
        self._segments = {0}

    @property
    def bits(self) -> dict[str, int]:
        return self.layout.bits

    # -- errors ---------------------------------------------------------------------------------

    def _run(self, fn, *, again: bool = False):
        """fn(), with Redis' errors turned into IndexUnavailable. On a cluster a node that
        cannot be reached makes the slot map be read again (a replica may have taken over);
        with `again` (reads only: an APPEND sent twice would count twice) fn is then retried once."""
        for _attempt in range(2 if again and self.nodes.cluster else 1):
            try:
                return fn()
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                error = e
                if self.nodes.cluster:
                    try:
                        self.nodes.refresh()
                    except (redis.RedisError, redis.exceptions.RedisClusterException, OSError):
                        break
            except (redis.RedisError, redis.exceptions.RedisClusterException) as e:
                error = e
                break
        raise IndexUnavailable(explain(error, self.url, cluster=self.nodes.cluster)) from error

    # -- layout -----------------------------------------------------------------------------

    def _adopt_layout(self) -> None:
        if self._layout_read:
            return
        L = self.layout

        def read():
            s, o = self.nodes.node_of_key(L.meta), self.nodes.node_of_key(L.old_meta)
            asks = {s: [cmd(b"HGETALL", L.meta), cmd(b"GET", L.segments)]}
            asks.setdefault(o, []).append(cmd(b"EXISTS", L.old_meta))
            got = self.nodes.replies(asks)
            meta = got[s][0]
            if not isinstance(meta, dict):  # RESP2: a flat list of fields and values
                meta = dict(zip(meta[::2], meta[1::2]))
            return meta, got[s][1], got[o][-1]

        meta, segs, old = self._run(read)
        if not meta and old:
            raise IndexMismatch(
                f"the index under prefix {self.prefix.decode(errors='replace')!r} at {self.url} was written by an "
                "older version of fptrack (packed-v1 layout); rebuild it with `fptrack reindex`")
        self._layout_read = True
        self._segments = segments_of(segs)
        if not meta:
            return
        older = [v.decode() for v in OLD_LAYOUTS if meta.get(b"signature", b"").endswith(b"%r)" % v)]
        if older:
            raise IndexMismatch(
                f"the index under prefix {self.prefix.decode(errors='replace')!r} at {self.url} was written by an "
                f"older version of fptrack ({older[0]} layout, before the translation channel); rebuild it with "
                "`fptrack reindex`")
        if meta.get(b"signature") != self._signature:
            raise IndexMismatch(
                f"the index under prefix {self.prefix.decode(errors='replace')!r} at {self.url} was built with "
                f"{meta.get(b'signature', b'?').decode(errors='replace')}, not {self._signature.decode()}; "
                "use the same parameters, another prefix, or clear() that index first (fptrack reindex)"
            )
        for ch in L.bits:
            L.bits[ch] = int(meta[b"bits:" + ch.encode()])
        for ch in L.resid:
            L.resid[ch] = int(meta[b"resid:" + ch.encode()])

    def _meta_fields(self) -> list[bytes]:
        out = [b"signature", self._signature]
        for ch, b in self.layout.bits.items():
            out += [b"bits:" + ch.encode(), b"%d" % b]
        for ch, r in self.layout.resid.items():
            out += [b"resid:" + ch.encode(), b"%d" % r]
        return out

    # -- writing ----------------------------------------------------------------------------

    def add(self, doc: int, keys: IndexKeys) -> None:
        self.add_many([(doc, keys)])

    def add_many(self, items: Iterable[tuple[int, IndexKeys]]) -> None:
        """Index originals, `batch` per round trip pair (states, then postings)."""
        it = iter(items)
        while chunk := list(islice(it, self.batch)):
            self._run(lambda: self._add_chunk(chunk))

    def _add_chunk(self, chunk: list[tuple[int, IndexKeys]]) -> None:
        self._adopt_layout()
        last: dict[int, IndexKeys] = {}
        for doc, keys in chunk:  # a number given twice keeps its last keys, as with add() in turn
            doc = int(doc)
            if not 0 <= doc < ALIAS_BASE:
                raise ValueError(f"document numbers must be in [0, 2**31), got {doc}")
            last[doc] = keys
        docs = [d for d, k in last.items() if not k.empty]
        gone = [d for d, k in last.items() if k.empty]  # indexed empty: only what it had goes
        fresh, known = self.state.mark(docs, gone)
        for d, was in zip(gone, known):
            if was:
                self.state.remove(d)
        if not docs:
            return
        pids = [d if new else self.state.reindex(d) for d, new in zip(docs, fresh)]
        batches: dict[int, Batch] = {}
        self._postings(pids, [last[d] for d in docs], batches)
        L = self.layout
        batches.setdefault(self.state.node, Batch()).add(
            [cmd(b"INCRBY", L.count, b"%d" % sum(fresh)), cmd(b"HSET", L.meta, *self._meta_fields())])
        self.nodes.lines(batches)
        self._segments |= {p >> SEGMENT_SHIFT for p in pids}

    def _postings(self, pids: list[int], keys: list[IndexKeys], batches: dict[int, Batch]) -> None:
        """The APPENDs of every posting of the documents, one per bucket and segment, in
        the batch of the node that serves the bucket."""
        L = self.layout
        pid_arr = np.array(pids, dtype=np.int64)
        for ch, _ in CHANNELS:
            arrays = [getattr(k, POSTED[ch]) for k in keys]
            counts = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
            if not counts.sum():
                continue
            owner = np.repeat(pid_arr, counts)
            buckets, resid = L.split(ch, np.concatenate(arrays))
            recs = records(resid, owner, L.resid[ch])
            self._append(L.head(ch), L.width(ch), buckets, recs, owner, batches)
        with_sim = [(p, k.simhash) for p, k in zip(pids, keys) if k.simhash_bits]
        if with_sim:
            owner = np.array([p for p, _ in with_sim], dtype=np.int64)
            values = np.array([v for _, v in with_sim], dtype=_U64)
            nb = L.sim_bytes()
            for i in range(len(L.sim_blocks)):
                turned = rotl(values, L.sim_turn(i))
                self._append(L.sim_head(i), L.width("simhash"), L.sim_bucket(i, values),
                             records(turned, owner, nb), owner, batches)

    def _append(self, head, width, buckets, recs, owner, batches) -> None:
        segs = owner >> SEGMENT_SHIFT
        for seg in (np.unique(segs).tolist() if segs.shape[0] and segs.max() > 0 else [0]):
            sel = segs == seg
            b, r = (buckets, recs) if sel.all() else (buckets[sel], recs[sel])
            for rows, slots in appends(head, width, b, r, segment_tail(seg)):
                split_rows(rows, self.nodes.node_of(slots), batches)

    def remove(self, doc: int) -> None:
        self._adopt_layout()
        self._run(lambda: self.state.remove(int(doc)))

    # -- querying -----------------------------------------------------------------------------

    def candidates(self, keys: IndexKeys) -> dict[int, set[str]]:
        if keys.empty:
            return {}
        self._adopt_layout()
        return self._run(lambda: self._candidates(keys, {}), again=True)

    def _query_keys(self, keys: IndexKeys, segs: list[int]):
        """The bucket names to read, and how to read each channel's replies. (Formatted one by
        one: for the hundred keys of a page that beats numpy's per-call overhead.)"""
        L = self.layout
        names: list[bytes] = []
        plan = []  # (channel, residuals of its distinct keys or None, replies from, to)
        for ch, _ in CHANNELS:
            u = distinct(getattr(keys, ASKED[ch]))
            buckets, resid = L.split(ch, u)
            head, w = L.head(ch), L.width(ch)
            at = len(names)
            for seg in segs:
                tail = segment_tail(seg)
                names += [b"%s%0*x%s" % (head, w, b, tail) for b in buckets.tolist()]
            plan.append((ch, resid, at, len(names)))
        if keys.simhash_bits:
            v = np.array([keys.simhash], dtype=_U64)
            w = L.width("simhash")
            at = len(names)
            for seg in segs:
                tail = segment_tail(seg)
                names += [b"%s%0*x%s" % (L.sim_head(i), w, int(L.sim_bucket(i, v)[0]), tail)
                          for i in range(len(L.sim_blocks))]
            plan.append(("simhash", None, at, len(names)))
        return names, plan

    def _read(self, names: list[bytes], with_state: bool) -> tuple[list, bytes | None, bytes | None]:
        """Read every bucket in `names` (and the filter and segment map) in one round trip:
        one MGET on a single instance, GETs grouped per node on a cluster (whose MGET takes
        keys of one slot only), all nodes at once."""
        L = self.layout
        extra = [L.filter, L.segments] if with_state else []
        if not self.nodes.cluster:
            every = names + extra
            mget = b"*%d\r\n$4\r\nMGET\r\n" % (len(every) + 1) + b"".join(
                [b"$%d\r\n%b\r\n" % (len(k), k) for k in every])
            got = self.nodes.replies({0: [mget]})[0][0]
            return (got[: len(names)], got[-2], got[-1]) if with_state else (got, None, None)
        # posting names hold no braces (the prefix may not): the slot is the CRC of the whole name
        slots = np.fromiter((crc_hqx(n, 0) for n in names), dtype=np.int64, count=len(names)) & (SLOTS - 1)
        nodes = self.nodes.node_of(slots).tolist()
        per: dict[int, list[bytes]] = {}
        where = []
        for n, name in zip(nodes, names):
            lst = per.setdefault(n, [])
            where.append((n, len(lst)))
            lst.append(b"*2\r\n$3\r\nGET\r\n$%d\r\n%b\r\n" % (len(name), name))
        if with_state:
            s = self.state.node
            per.setdefault(s, []).extend([cmd(b"GET", k) for k in extra])
        got = self.nodes.replies(per)
        replies = [got[n][j] for n, j in where]
        if with_state:
            return replies, got[s][-2], got[s][-1]
        return replies, None, None

    def _candidates(self, keys: IndexKeys, out: dict[int, set[str]]) -> dict[int, set[str]]:
        segs = sorted(self._segments)
        names, plan = self._query_keys(keys, segs)
        if not names:
            return out
        replies, filt, seg_map = self._read(names, with_state=True)
        now = segments_of(seg_map)
        if now - self._segments:  # postings in segments this process did not know of yet: read again
            self._segments |= now
            segs = sorted(self._segments)
            names, plan = self._query_keys(keys, segs)
            replies, _, _ = self._read(names, with_state=False)
        L = self.layout
        found = []  # (channel, query key index or None, posting ids)
        nseg = len(segs)
        segs_arr = np.array(segs, dtype=np.int64)
        for ch, resid, at, to in plan:
            part = replies[at:to]
            n = (to - at) // nseg  # keys per segment
            if ch == "simhash":
                nb = L.sim_bytes()
                recs, lens = parse(part, nb + ID_BYTES)
                table = np.repeat(np.arange(to - at), lens)
                # table i's records hold the value turned with block i on top, minus the bucket bits
                q = np.array([keys.simhash], dtype=_U64)
                turned = np.array([int(rotl(q, L.sim_turn(i))[0]) for i in range(n)], dtype=_U64)
                mask = _U64((1 << (8 * nb)) - 1)
                near = np.flatnonzero(popcount((le(recs[:, :nb]) ^ turned[table % n]) & mask) <= self.sim_k)
                ids = id3(recs[near, nb:]) | (segs_arr[table[near] // n] << SEGMENT_SHIFT)
                found.append((ch, None, ids))
                continue
            r = L.resid[ch]
            recs, lens = parse(part, r + ID_BYTES)
            rows, qi = matching(recs, lens, np.tile(le_bytes(resid, r), (nseg, 1)))
            ids = id3(recs[rows, r:])
            if nseg > 1:
                ids |= segs_arr[qi // n] << SEGMENT_SHIFT
            found.append((ch, qi % n, ids))
        all_ids = np.concatenate([f[2] for f in found]) if found else np.empty(0, dtype=np.int64)
        live = self.state.live(all_ids, filt)
        p = self.params
        at = 0
        for ch, qi, ids in found:
            docs = live[at: at + ids.shape[0]]
            at += ids.shape[0]
            ok = docs >= 0
            docs = docs[ok]
            if ch in ("winnow", "pinyin", "translation"):
                # distinct (query key, doc) pairs packed in one int64: key << 32 | doc
                pairs = distinct((qi[ok].astype(np.int64) << 32) | docs.astype(np.int64))
                q, d = pairs >> 32, pairs & 0xFFFFFFFF
                d = np.sort(d[np.bincount(q)[q] <= p.max_df])
                docs, counts = runs(d)
                docs = best_hits(docs, counts, p.translation_min_hits if ch == "translation" else p.min_hits,
                                 p.translation_most if ch == "translation" else 0)
            else:
                docs = distinct(docs.astype(np.int64))
            for d in docs.tolist():
                out.setdefault(d, set()).add(ch)
        return out

    # -- upkeep -------------------------------------------------------------------------------

    def _scan(self, patterns: list[bytes], step: int = 1000):
        """Every key matching the patterns, on every master, in batches of about `step`, as
        (node client, keys)."""
        for client in self.nodes.masters():
            for pattern in patterns:
                names = []
                for k in client.scan_iter(match=pattern, count=step):
                    names.append(k)
                    if len(names) >= step:
                        yield client, names
                        names = []
                if names:
                    yield client, names

    def compact(self, step: int = 5000) -> int:
        """Store every posting string at its exact size; returns the strings rewritten.

        APPEND makes Redis reserve as much room again as a string holds, so a bucket that
        grows takes up to twice its length. COPY writes an exact-size copy on the server
        (nothing crosses the network) and RENAME puts it in place, in one MULTI block per
        string, so a concurrent APPEND lands before or after, never in between. The copy's
        name carries the string's name as hash tag, so both are in one cluster slot.
        Replies are switched off (an error inside MULTI only aborts that string's block).
        Run it after a bulk load or now and then; it keeps dead postings (only `clear()`
        drops those)."""
        self._adopt_layout()
        salt = os.urandom(4).hex().encode()

        def go():
            done = 0
            for client, names in self._scan(self.layout.posting_patterns(), step):
                buf = [cmd(b"CLIENT", b"REPLY", b"OFF")]
                for k in names:
                    tmp = b"{%s}~%s" % (k, salt)
                    buf.append(cmd(b"MULTI") + cmd(b"COPY", k, tmp) + cmd(b"RENAME", tmp, k) + cmd(b"EXEC"))
                buf.append(cmd(b"CLIENT", b"REPLY", b"ON"))
                b = Batch()
                b.add([b"".join(buf)])  # one reply: CLIENT REPLY ON's
                self.nodes.lines_at(client, b)
                done += len(names)
            return done

        return self._run(go)

    def clear(self) -> None:
        """Delete every key of this index: its postings and state on every master (SCAN +
        UNLINK), and an older layout's keys under the same prefix. Other keys under the
        prefix (a crawl's frontier) stay. What is written next is laid out for this
        instance's `capacity`, not the cleared index's."""
        L = self.layout

        def go():
            patterns = L.posting_patterns() + L.old_patterns() + [glob_escape(L.tag) + b"*"]
            for client, names in self._scan(patterns):
                b = Batch()
                b.add([cmd(b"UNLINK", k) for k in names])
                self.nodes.lines_at(client, b)
            for k in L.old_keys():
                self.client.delete(k)

        self._run(go)
        self._layout_read = False
        self._segments = {0}
        self.layout.bits.update(self._sized[0])  # the next index is sized from this one's capacity
        self.layout.resid.update(self._sized[1])

    def __len__(self) -> int:
        v = self._run(lambda: self.nodes.client_for(self.layout.count).get(self.layout.count))
        return int(v or 0)

    def __repr__(self) -> str:
        return (f"RedisIndex({self.url}, prefix={self.prefix.decode(errors='replace')!r}, bits={self.layout.bits}, "
                f"residual bytes={self.layout.resid})")
