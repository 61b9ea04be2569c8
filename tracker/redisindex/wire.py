"""Raw pipelines per Redis node: the index's commands in the Redis protocol (RESP), sent
to the node that serves each key's hash slot, with MOVED/ASK redirections followed.

A single instance is one node serving every slot. On a Redis Cluster the slot map is
read from redis-py's cluster client; every node gets one packed buffer per round trip,
all buffers are sent before any reply is read, so the nodes work at the same time.

Two kinds of round trip:

* `Nodes.lines` for bulk writes whose every reply is one line (APPEND, UNLINK, INCRBY,
  HSET, SETBIT ... answer ``:<n>``): the replies are read as raw bytes and only the error
  lines (``-...``) are looked at, so a million replies cost a few byte scans;
* `Nodes.replies` for reads (GET, HGET ...), parsed by hiredis when it is installed.
"""
from __future__ import annotations

import binascii
import re
import socket

import numpy as np
import redis

from ..redis_client import is_cluster

SLOTS = 16384
MAX_REDIRECTS = 5
SEND_PIECE = 4 << 20  # bytes per socket send of a bulk write

try:  # replies parsed in C; redis-py itself uses it when installed
    import hiredis as _hiredis
except ImportError:  # pragma: no cover - hiredis comes with redis[hiredis]
    _hiredis = None


def cmd(*args: bytes) -> bytes:
    """One command in RESP: cmd(b"GET", b"k") -> b"*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nk\\r\\n"."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%b\r\n" % (len(a), a) for a in args)


def key_slot(key: bytes) -> int:
    """The cluster hash slot of a key (the part in the first non-empty {...} if any, CRC16 mod 16384)."""
    start = key.find(b"{")
    if start > -1:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1: end]
    return binascii.crc_hqx(key, 0) % SLOTS


def _crc_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        t[i] = c & 0xFFFF
    return t


_CRC = _crc_table()


def slots_of(head: bytes, digits: np.ndarray, tail: bytes = b"") -> np.ndarray:
    """The slot of each key head + digits[i] + tail (digits: uint8[n, w]), computed with numpy.

    CRC16/XMODEM goes byte by byte: crc = (crc << 8) ^ T[(crc >> 8) ^ byte], so the
    constant head is folded once and each digit column is one vector step."""
    n = digits.shape[0]
    if n < 8:  # a few keys: cheaper one by one
        return np.fromiter((key_slot(head + d.tobytes() + tail) for d in digits), dtype=np.int64, count=n)
    whole = head + b"0" * digits.shape[1] + tail
    start = whole.find(b"{")
    if start > -1 and start < len(head):  # a hash tag opened in the head (the digits hold no braces)
        end = whole.find(b"}", start + 1)
        if end > start + 1 and end < len(head):
            return np.full(n, key_slot(head), dtype=np.int64)
    if b"{" in whole:  # a tag that takes in the digits: key by key (the index's names never do this)
        return np.fromiter((key_slot(head + bytes(d) + tail) for d in digits), dtype=np.int64, count=n)
    crc = np.full(n, binascii.crc_hqx(head, 0), dtype=np.uint32)
    for j in range(digits.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC[((crc >> 8) ^ digits[:, j]) & 0xFF]
    for b in tail:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC[((crc >> 8) ^ b) & 0xFF]
    return (crc % SLOTS).astype(np.int64)


_REDIRECT = re.compile(rb"^(MOVED|ASK) (\d+) (\S+):(\d+)")


class Batch:
    """Commands for one node: blocks of RESP bytes, each a list of commands or a uint8
    array with one command per row; the i-th reply answers the i-th command."""

    def __init__(self) -> None:
        self.blocks: list[np.ndarray | list[bytes]] = []
        self.count = 0

    def add(self, block) -> None:
        n = block.shape[0] if isinstance(block, np.ndarray) else len(block)
        if n:
            self.blocks.append(block)
            self.count += n

    def payload(self) -> list:
        """The commands as one buffer (so a few commands wake the server once), sent in
        pieces of SEND_PIECE bytes: the socket timeout bounds each send, not the whole batch."""
        buf = b"".join(b.tobytes() if isinstance(b, np.ndarray) else b"".join(b) for b in self.blocks)
        if len(buf) <= SEND_PIECE:
            return [buf]
        view = memoryview(buf)
        return [view[i: i + SEND_PIECE] for i in range(0, len(buf), SEND_PIECE)]

    def command(self, i: int) -> bytes:
        for b in self.blocks:
            n = b.shape[0] if isinstance(b, np.ndarray) else len(b)
            if i < n:
                return b[i].tobytes() if isinstance(b, np.ndarray) else b[i]
            i -= n
        raise IndexError(i)


class Nodes:
    """The masters of a single instance (one) or of a cluster, and the slot each serves."""

    def __init__(self, client):
        self.client = client
        self.cluster = is_cluster(client)
        self._slot_node: np.ndarray | None = None
        self._clients: list[redis.Redis] = []
        self._names: list[str] = []

    # -- the slot map -----------------------------------------------------------------------

    def _load(self) -> None:
        if self._slot_node is not None:
            return
        if not self.cluster:
            self._clients, self._names = [self.client], ["single"]
            self._slot_node = np.zeros(SLOTS, dtype=np.int64)
            return
        nm = self.client.nodes_manager
        if not nm.slots_cache:
            nm.initialize()
        names: dict[str, int] = {}
        clients: list[redis.Redis] = []
        table = np.full(SLOTS, -1, dtype=np.int64)
        for slot, nodes in nm.slots_cache.items():
            if not nodes:
                continue
            primary = nodes[0]
            if primary.name not in names:
                names[primary.name] = len(clients)
                clients.append(self.client.get_redis_connection(primary))
            table[slot] = names[primary.name]
        self._clients, self._names, self._slot_node = clients, list(names), table

    def refresh(self) -> None:
        """Read the slot map again (after a MOVED reply or a failed node)."""
        if self.cluster:
            self.client.nodes_manager.initialize()
        self._slot_node = None

    def node_of(self, slots: np.ndarray) -> np.ndarray:
        self._load()
        nodes = self._slot_node[slots]
        if (nodes < 0).any():
            missing = int(np.asarray(slots)[nodes < 0][0])
            raise redis.exceptions.SlotNotCoveredError(f"hash slot {missing} is not served by any node")
        return nodes

    def node_of_key(self, key: bytes) -> int:
        return int(self.node_of(np.array([key_slot(key)]))[0])

    def client_of(self, node: int) -> redis.Redis:
        self._load()
        return self._clients[node]

    def client_for(self, key: bytes) -> redis.Redis:
        """A plain client of the master serving `key` (transactions on one slot run on it)."""
        return self.client_of(self.node_of_key(key))

    def masters(self) -> list[redis.Redis]:
        self._load()
        if self.cluster:  # every master, also one serving no slot now
            return [self.client.get_redis_connection(n) for n in self.client.get_primaries()]
        return list(self._clients)

    def __len__(self) -> int:
        self._load()
        return len(self._clients)

    def _client_at(self, host: str, port: int) -> redis.Redis:
        node = self.client.get_node(host=host, port=port)
        if node is None:
            self.refresh()
            node = self.client.get_node(host=host, port=port)
        if node is None:
            raise redis.ConnectionError(f"the cluster redirected to {host}:{port}, which it does not list")
        return self.client.get_redis_connection(node)

    # -- round trips ----------------------------------------------------------------------

    def lines(self, batches: dict[int, Batch]) -> None:
        """Run commands whose replies are single lines, every node at once; send the ones
        answered MOVED/ASK again where the cluster says; raise the first other error reply."""
        self._lines([(self.client_of(n), b) for n, b in batches.items() if b.count])

    def lines_at(self, client: redis.Redis, batch: Batch) -> None:
        """`lines` for one batch on a given master (keys found there by SCAN)."""
        self._lines([(client, batch)])

    def _lines(self, work: list) -> None:
        for _ in range(MAX_REDIRECTS):
            if not work:
                return
            again: dict[tuple, Batch] = {}
            for batch, errors in self._round(work, _read_lines):
                for i, err in errors:
                    if not _REDIRECT.match(err):
                        raise redis.ResponseError(err.decode(errors="replace"))
                    again.setdefault(self._target(err), Batch()).add([batch.command(i)])
            work = [(self._resolve(t), _AskingBatch(b) if t[2] else b) for t, b in again.items()]
        raise redis.ResponseError("too many MOVED/ASK redirections; the cluster is being resharded, retry later")

    def replies(self, batches: dict[int, Batch | list[bytes]]) -> dict[int, list]:
        """Run commands on their nodes, every node at once, and return each node's replies in
        order; commands answered MOVED/ASK are sent again where the cluster says."""
        work, where, out = [], [], {}
        for n, cmds in batches.items():
            if isinstance(cmds, list):
                b = Batch()
                b.add(list(cmds))
            else:
                b = cmds
            if b.count:
                out[n] = [None] * b.count
                work.append((self.client_of(n), b))
                where.append([(n, j) for j in range(b.count)])
        for _ in range(MAX_REDIRECTS):
            if not work:
                return out
            again: dict[tuple, tuple[Batch, list]] = {}
            for (batch, replies), pos in zip(self._round(work, _read_replies), where):
                for i, r in enumerate(replies):
                    if isinstance(r, Exception):
                        err = str(r).encode()
                        if not _REDIRECT.match(err):
                            raise r
                        b, p = again.setdefault(self._target(err), (Batch(), []))
                        b.add([batch.command(i)])
                        p.append(pos[i])
                    else:
                        n, j = pos[i]
                        out[n][j] = r
            work = [(self._resolve(t), _AskingBatch(b) if t[2] else b) for t, (b, _) in again.items()]
            where = [p for _, p in again.values()]
        raise redis.ResponseError("too many MOVED/ASK redirections; the cluster is being resharded, retry later")

    def _round(self, work: list, read) -> list:
        """Send every batch, then read every node's replies: [(batch, what `read` returns)]."""
        sent = []
        try:
            for client, batch in work:
                conn = client.connection_pool.get_connection()
                sent.append((client, batch, conn))
                conn.send_packed_command(batch.payload(), check_health=True)
            return [read(conn, batch) for _, batch, conn in sent]
        except BaseException:
            for _, _, conn in sent:
                conn.disconnect()  # its reply stream is no longer in step
            raise
        finally:
            for client, _, conn in sent:
                client.connection_pool.release(conn)

    def _target(self, err: bytes) -> tuple[str, int, bool]:
        m = _REDIRECT.match(err)
        if m.group(1) == b"MOVED":
            self.refresh()
        return m.group(3).decode(), int(m.group(4)), m.group(1) == b"ASK"

    def _resolve(self, target) -> redis.Redis:
        if not self.cluster:
            return self.client
        return self._client_at(target[0], target[1])


class _AskingBatch(Batch):
    """Commands for the node a slot is migrating to: each sent after ASKING, whose +OK
    replies the readers skip."""

    _ASKING = cmd(b"ASKING")

    def __init__(self, inner: Batch):
        super().__init__()
        self.inner = inner
        self.count = inner.count * 2

    def payload(self) -> list[bytes]:
        return [b"".join(self._ASKING + self.inner.command(i) for i in range(self.inner.count))]

    def command(self, i: int) -> bytes:
        return self.inner.command(i)


def _sock(conn) -> socket.socket | None:
    """The connection's socket, to read raw replies from; None for an in-process connection
    (fakeredis), whose replies are read one by one."""
    sock = getattr(conn, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _read_lines(conn, batch: Batch):
    """Read `batch.count` one-line replies as raw bytes; return (batch, [(index, error line)])."""
    n = batch.count
    sock = _sock(conn)
    if sock is None:  # an unusual connection class: read reply by reply
        errors = []
        for i in range(n):
            r = conn.read_response(disable_decoding=True)
            if isinstance(r, Exception):
                errors.append((i, str(r).encode()))
        return _drop_asking(batch, errors)
    buf = bytearray()
    lines = 0
    while lines < n:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise redis.ConnectionError("the server closed the connection")
        was = len(buf)
        buf += chunk
        lines += buf.count(b"\r\n", max(0, was - 1))
    if lines != n:
        raise redis.ConnectionError(f"expected {n} replies, got {lines}: a reply was not a single line")
    errors = []
    if b"-" in buf:
        starts = [0] + [m.end() for m in re.finditer(rb"\r\n", buf)][:-1]
        errors = [(i, bytes(buf[s + 1: buf.index(b"\r\n", s)])) for i, s in enumerate(starts) if buf[s] == 0x2D]
    return _drop_asking(batch, errors)


def _drop_asking(batch: Batch, errors):
    if isinstance(batch, _AskingBatch):  # ASKING's own +OK replies are skipped; index the commands
        errors = [(i // 2, e) for i, e in errors]
    return batch, errors


def _read_replies(conn, batch: Batch):
    """Read `batch.count` replies (errors returned as exceptions, not raised)."""
    n = batch.count
    sock = _sock(conn)
    if _hiredis is not None and sock is not None:
        reader = _hiredis.Reader()
        out = []
        while len(out) < n:
            r = reader.gets()
            if r is False:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise redis.ConnectionError("the server closed the connection")
                reader.feed(chunk)
                continue
            out.append(redis.ResponseError(str(r)) if isinstance(r, _hiredis.ReplyError) else r)
    else:
        out = []
        for _ in range(n):
            try:
                out.append(conn.read_response(disable_decoding=True))
            except redis.ResponseError as e:
                out.append(e)
    if isinstance(batch, _AskingBatch):
        out = out[1::2]
    return batch, out


def split_rows(rows: np.ndarray, nodes: np.ndarray, batches: dict[int, Batch]) -> None:
    """Add command rows to the batch of the node each goes to."""
    if rows.shape[0] == 0:
        return
    first = int(nodes[0])
    if (nodes == first).all():
        batches.setdefault(first, Batch()).add(rows)
        return
    for n in np.unique(nodes).tolist():
        batches.setdefault(n, Batch()).add(rows[nodes == n])


