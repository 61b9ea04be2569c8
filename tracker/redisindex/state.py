"""Which documents are indexed, under which posting id: the index's document state.

Removal never scans and never rewrites postings: postings are not deleted, they die.
Every state key is named ``<prefix>{index}...``: the hash tag puts them in one hash slot,
so a transaction over them is valid on a Redis Cluster.

* ``K``: a bitmap, bit `doc` set once number `doc` has been indexed. A document whose
  bit is set and that has no field in ``D`` is live under its own number.
* ``D:{doc >> 8}``: a small hash, one per 256 numbers, with a field only for changed
  documents: "<id>" = indexed again under an alias id (>= 2**31), "-" = removed.
* ``A:{id >> 8}``: live alias ids -> document; a dead alias is deleted from it.
* ``F``: a 65,536-bit filter, bit (doc & 0xFFFF) set once a document's own number has
  died. A query trusts postings whose id is a number with a clear filter bit and looks
  up the others in a second round trip, which only happens when changed documents are
  among the hits. Dead postings take memory until `clear()` and a rebuild.
* ``S``: a 256-bit map of the id segments (id >> 24) that have postings.
* ``n`` counts documents, ``ids`` hands out alias ids, ``meta`` holds the layout.
"""
from __future__ import annotations

import numpy as np
import redis

from .layout import SEGMENT_SHIFT, Layout
from .wire import Nodes, cmd

ALIAS_BASE = 1 << 31  # posting ids from here on are aliases; document numbers stay below
FILTER_MASK = 0xFFFF  # bits of the changed-documents filter
MARK_CHUNK = 10_000  # documents per BITFIELD command


def segments_of(bitmap: bytes | None) -> set[int]:
    """The segments set in the ``S`` bitmap (bit 0 = the first byte's top bit, as SETBIT)."""
    if not bitmap:
        return {0}
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8))
    return set(np.flatnonzero(bits).tolist()) | {0}


class DocState:
    def __init__(self, nodes: Nodes, layout: Layout):
        self.nodes = nodes
        self.layout = layout

    @property
    def node(self) -> int:
        """The node serving the state's hash slot."""
        return self.nodes.node_of_key(self.layout.known)

    def mark(self, docs: list[int], gone: list[int] = ()) -> tuple[list[bool], list[bool]]:
        """Set the known bit of each of `docs`, and mark their id segments; read the known bit
        of each of `gone`. Returns (True where a doc was new, True where a gone one was known).
        One round trip."""
        L = self.layout
        cmds = []
        for i in range(0, len(docs), MARK_CHUNK):
            part = docs[i: i + MARK_CHUNK]
            body = b"".join(b"$3\r\nSET\r\n$2\r\nu1\r\n$%d\r\n%d\r\n$1\r\n1\r\n" % (len(b"%d" % d), d) for d in part)
            cmds.append(b"*%d\r\n$8\r\nBITFIELD\r\n$%d\r\n%b\r\n" % (2 + 4 * len(part), len(L.known), L.known) + body)
        marks = len(cmds)
        cmds += [cmd(b"GETBIT", L.known, b"%d" % d) for d in gone]
        cmds += [cmd(b"SETBIT", L.segments, b"%d" % s, b"1") for s in sorted({d >> SEGMENT_SHIFT for d in docs})]
        if not cmds:
            return [], []
        replies = self.nodes.replies({self.node: cmds})[self.node]
        fresh: list[bool] = []
        for r in replies[:marks]:
            fresh += [v == 0 for v in r]
        return fresh, [r == 1 for r in replies[marks: marks + len(gone)]]

    def _watched(self, key: bytes, body):
        """Run body(pipe) in an optimistic transaction on `key`, again whenever another client
        changed the key in between (WATCH/MULTI/EXEC), on the master serving the state."""
        for attempt in range(3):
            client = self.nodes.client_for(key)
            try:
                with client.pipeline() as pipe:
                    while True:
                        try:
                            pipe.watch(key)
                            return body(pipe)
                        except redis.WatchError:
                            continue
            except redis.ResponseError as e:
                if not str(e).startswith(("MOVED", "ASK")) or attempt == 2:
                    raise
                self.nodes.refresh()
            except redis.ConnectionError:
                if not self.nodes.cluster or attempt == 2:
                    raise
                self.nodes.refresh()

    def reindex(self, doc: int) -> int:
        """Give a number that was indexed before a fresh alias id (its old postings die);
        returns the alias."""
        L = self.layout
        skey, field = L.state_key(doc), b"%d" % doc

        def body(pipe) -> int:
            old = pipe.hget(skey, field)  # None: live under its own number
            pid = ALIAS_BASE + int(pipe.incr(L.ids)) - 1
            if pid >= 1 << 32:
                raise ValueError(f"the alias ids under {L.prefix!r} are used up; rebuild the index "
                                 "(fptrack reindex)")
            pipe.multi()
            pipe.hset(skey, field, b"%d" % pid)
            pipe.hset(L.alias_key(pid), b"%d" % pid, field)
            pipe.setbit(L.segments, pid >> SEGMENT_SHIFT, 1)
            if old not in (None, b"-"):
                pipe.hdel(L.alias_key(int(old)), old)
            if old == b"-":
                pipe.incr(L.count)
            pipe.setbit(L.filter, doc & FILTER_MASK, 1)
            pipe.execute()
            return pid

        return self._watched(skey, body)

    def remove(self, doc: int) -> None:
        L = self.layout
        skey, field = L.state_key(doc), b"%d" % doc

        def body(pipe) -> None:
            # the known bit only ever goes from 0 to 1, so reading it unwatched is safe
            if not pipe.getbit(L.known, doc):
                pipe.unwatch()
                return
            old = pipe.hget(skey, field)
            if old == b"-":
                pipe.unwatch()
                return
            pipe.multi()
            pipe.hset(skey, field, b"-")
            if old is not None:
                pipe.hdel(L.alias_key(int(old)), old)
            pipe.setbit(L.filter, doc & FILTER_MASK, 1)
            pipe.decr(L.count)
            pipe.execute()

        self._watched(skey, body)

    def live(self, pids: np.ndarray, filt: bytes | None) -> np.ndarray:
        """The document of each posting id, or -1 where the posting is dead."""
        docs = pids.astype(np.int64)
        if not pids.shape[0] or (not filt and not (pids >= ALIAS_BASE).any()):
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
        L = self.layout
        cmds = [cmd(b"HGET", L.alias_key(p), b"%d" % p) if p >= ALIAS_BASE else cmd(b"HGET", L.state_key(p), b"%d" % p)
                for p in asked]
        answer = {}
        for p, r in zip(asked, self.nodes.replies({self.node: cmds})[self.node]):
            if p >= ALIAS_BASE:
                answer[p] = int(r) if r is not None else -1
            else:
                answer[p] = p if r is None else -1
        table = np.array([answer.get(p, p) for p in u.tolist()], dtype=np.int64)
        return table[np.searchsorted(u, docs)]
