"""The Bloom filter over the exact keys of the texts judged before: "maybe seen" or "certainly
not", so that a text never seen costs no store lookup.

Two homes for its bits, with the same answers (fingerprint.bloom.bloom_positions places them):
- `StoreFilter`: a fingerprint.bloom.BloomFilter in this process, saved in the store every
  SAVE_EVERY new keys and when the process closes its Context. A new process loads the saved
  filter; when the store holds keys it does not (another process judged texts since), or none
  was saved, it adds the stored keys. Another process's new keys reach it on its next start:
  until then such a text is judged again, which costs time, never a wrong answer.
- `RedisFilter`: the bits in one Redis string, shared by every process (BITFIELD GET and SET
  of single bits), when Redis holds the index. Its size is kept in a second key; a process
  that finds none (a new Redis, or one emptied) fills the bits from the stored keys.

Both are sized for the expected number of pages (twice the pages stored, at least
MIN_CAPACITY) at ERROR_RATE false positives; a filter that holds more keys than it was sized
for is built again, larger, when a process opens it. A false positive only costs the store
lookup that finds no record.
"""
from __future__ import annotations

import json
import logging
import uuid
from itertools import islice

import redis
import xxhash

from fingerprint.bloom import BloomFilter, bloom_positions, bloom_size

from ..redis_client import RedisUnavailable, client_url, explain, is_cluster
from ..store import NotFound, StoreError

log = logging.getLogger(__name__)

ERROR_RATE = 0.001
MIN_CAPACITY = 100_000
SAVE_EVERY = 1000  # new keys between two saves of an in-process filter
FILL_BATCH = 2000  # keys per BITFIELD when a Redis filter is filled from the store
PART_CAPACITY = 50_000_000  # keys per Redis string of a filter: 86 MiB at ERROR_RATE (a string holds 512 MiB)


def capacity_for(store) -> int:
    """Room for twice the pages stored now (each distinct page text is one key at most)."""
    return max(MIN_CAPACITY, 2 * store.count_pages(), 2 * store.count_seen_texts())


def _batches(keys, size: int):
    it = iter(keys)
    while batch := list(islice(it, size)):
        yield batch


class StoreFilter:
    """The filter in this process, saved in the store."""

    def __init__(self, store, capacity: int | None = None, *, error_rate: float = ERROR_RATE,
                 save_every: int = SAVE_EVERY):
        self.store, self.save_every = store, save_every
        self._unsaved = 0
        stored = store.count_seen_texts()
        try:
            data, held = store.seen_filter()
            bloom = BloomFilter.from_bytes(data)
        except (NotFound, ValueError) as e:  # none saved, or not one we can read: build it
            if not isinstance(e, NotFound):
                log.warning("the saved filter of seen texts cannot be read (%s): building it from the keys", e)
            bloom, held = None, -1
        if bloom is None or bloom.capacity < stored:
            bloom = BloomFilter(max(capacity or capacity_for(store), 2 * stored), error_rate)
            held = -1
        if held != stored:
            for batch in _batches(store.seen_text_keys(), FILL_BATCH):
                bloom.add_many(batch)
            self._unsaved = int(stored > 0)  # save what was built, on close at the latest
        self.bloom, self.keys = bloom, stored

    def might_have(self, key: str) -> bool:
        return key in self.bloom

    def add(self, key: str, new: bool) -> None:
        """Add a key just stored; `new`: the store did not hold it before (it counts one more key)."""
        self.bloom.add(key)
        self.keys += bool(new)
        self._unsaved += 1
        if self._unsaved >= self.save_every:
            self.save()

    def save(self) -> None:
        self.store.put_seen_filter(self.bloom.to_bytes(), self.keys)
        self._unsaved = 0

    def close(self) -> None:
        """Save the keys added since the last save; a store that cannot take it now loses only time
        (the next process adds the stored keys it lacks)."""
        if self._unsaved:
            try:
                self.save()
            except StoreError as e:
                log.warning("the filter of seen texts was not saved (%s); the next process builds it again", e)


class RedisFilter:
    """The filter's bits in Redis, shared by every process: `parts` strings of m bits each (a key
    goes to one of them by its hash), so that no string nears Redis' 512 MB and a cluster spreads
    them; their size and names in `<prefix>seen:bloom`."""

    def __init__(self, client, store, prefix: str = "fpt:", capacity: int | None = None, *,
                 error_rate: float = ERROR_RATE):
        self.client, self.store, self.url = client, store, client_url(client)
        self.meta_key = f"{prefix}seen:bloom"
        self._run(lambda: self._open(capacity, error_rate))

    def _run(self, fn):
        try:
            return fn()
        except (redis.RedisError, redis.exceptions.RedisClusterException, OSError) as e:
            raise RedisUnavailable(explain(e, self.url, cluster=is_cluster(self.client))) from e

    def _open(self, capacity: int | None, error_rate: float) -> None:
        raw = self.client.get(self.meta_key)
        meta = json.loads(raw) if raw else None
        stored = self.store.count_seen_texts()
        if meta is not None and meta["capacity"] >= stored and (stored == 0 or self._has_bits(meta)):
            self._adopt(meta)
            return
        size = max(capacity or capacity_for(self.store), 2 * stored)
        parts = -(-size // PART_CAPACITY)
        m, k = bloom_size(-(-size // parts), error_rate)
        mine = {"m": m, "k": k, "parts": parts, "capacity": size, "bits": f"{self.meta_key}:{uuid.uuid4().hex[:12]}"}
        self._adopt(mine)
        for batch in _batches(self.store.seen_text_keys(), FILL_BATCH):
            self._set(batch)
        # A new filter: the first builder to finish is the one every process uses. One that
        # replaces a full filter (or one whose bits are gone): the last, and the old bits go.
        if meta is None:
            if not self.client.set(self.meta_key, json.dumps(mine), nx=True):
                self._drop(mine)
                self._adopt(json.loads(self.client.get(self.meta_key)))
            return
        old = self.client.set(self.meta_key, json.dumps(mine), get=True)
        if old and json.loads(old)["bits"] != mine["bits"]:
            self._drop(json.loads(old))

    def _adopt(self, meta: dict) -> None:
        self.m, self.k, self.capacity = int(meta["m"]), int(meta["k"]), int(meta["capacity"])
        self.bits_key, self.parts = meta["bits"], int(meta.get("parts", 1))

    def _part_keys(self, meta: dict) -> list[str]:
        return [f"{meta['bits']}:{i}" for i in range(int(meta.get("parts", 1)))]

    def _has_bits(self, meta: dict) -> bool:
        return any(self.client.exists(k) for k in self._part_keys(meta))  # one key a command: cluster slots

    def _drop(self, meta: dict) -> None:
        for k in self._part_keys(meta):
            self.client.delete(k)

    def _part(self, key: str) -> str:
        return f"{self.bits_key}:{xxhash.xxh32_intdigest(key.encode()) % self.parts}"

    def _set(self, keys: list[str]) -> None:
        by_part: dict[str, list[str]] = {}
        for key in keys:
            by_part.setdefault(self._part(key), []).append(key)
        for part, some in by_part.items():
            args: list = []
            for p in bloom_positions(some, self.m, self.k).ravel().tolist():
                args += ["SET", "u1", p, 1]
            self.client.execute_command("BITFIELD", part, *args)

    def might_have(self, key: str) -> bool:
        args: list = []
        for p in bloom_positions([key], self.m, self.k)[0].tolist():
            args += ["GET", "u1", p]
        return all(self._run(lambda: self.client.execute_command("BITFIELD", self._part(key), *args)))

    def add(self, key: str, new: bool) -> None:
        self._run(lambda: self._set([key]))

    def close(self) -> None:
        """Nothing to save: every bit is in Redis as soon as it is set."""
