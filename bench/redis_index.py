"""RedisIndex on a real Redis, next to datasketch's MinHashLSH on the same server.

    .venv/bin/python bench/redis_index.py [--sizes 100000,1000000] [--quick]
                                          [--redis-url redis://127.0.0.1:6379/13]
                                          [--peer-docs 10000] [--no-peer] [--queries 300] [--corpus PATH]
                                          [--no-write]

Realistic keys: a sample of real chapters of zh_novels is prepared with the default
EngineConfig and IndexParams(winnow_sample=32, pinyin_sample=8); N distinct synthetic
chapters are made from them by XOR-ing every key array (and the Simhash) with a random
64-bit salt per copy, so key counts and distributions are those of real chapters.

Measured, at each size (a fresh index per size, its capacity set to that size):
- indexing throughput (add_many, 20,000 chapters per round trip pair; key generation not timed),
- Redis memory per chapter: INFO memory used_memory delta / chapters, after RedisIndex.compact()
  (and before it: APPEND leaves strings with up to as much room again reserved),
- query latency p50/p99 for an indexed chapter's keys and for an unrelated page's keys.
The peer is datasketch's MinHashLSH(threshold=0.5, num_perm=128) with Redis storage, on
the same signatures (salted alike), measured on --peer-docs documents only (it inserts a
few hundred per second).

The benchmark owns the Redis database of --redis-url: it is FLUSHDB-ed at the start and at
the end (db 0 is refused). Tables go to stdout and bench/out/redis-index-<date>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    BenchError,
    Table,
    corpus_path,
    fmt_bytes,
    fmt_rate,
    fmt_seconds,
    header_markdown,
    load_chapters,
    percentile,
    run_cli,
    version_of,
    write_report,
)
from fingerprint.engine import EngineConfig, prepare  # noqa: E402
from fingerprint.index import IndexKeys, IndexParams, index_keys  # noqa: E402

PARAMS = IndexParams(winnow_sample=32, pinyin_sample=8)
CONFIG = EngineConfig()
BASE_CHAPTERS = 400
CHUNK = 100_000  # synthetic chapters generated per add_many call
TARGETS = "targets: >= 20,000 chapters/s indexed, <= 1 KB of Redis memory per chapter, p50 <= 2 ms per query at 1M"


class Keys:
    """Real chapters' keys as flat arrays, and salted copies of them."""

    def __init__(self, keys: list[IndexKeys], minhashes: list[np.ndarray], seed: int = 1):
        self.base = keys
        self.minhashes = minhashes
        self.rng = np.random.default_rng(seed)
        self.salts = np.random.default_rng(seed + 1).integers(1, 2**64, size=2_000_000, dtype=np.uint64)

    def copy(self, i: int) -> IndexKeys:
        """Synthetic chapter i: base chapter i % n with every key XOR-ed by salt i."""
        k = self.base[i % len(self.base)]
        s = self.salts[i]
        return IndexKeys(winnow=k.winnow ^ s, pinyin=k.pinyin ^ s, simhash=k.simhash ^ int(s),
                         simhash_bits=k.simhash_bits, bands=k.bands ^ s)

    def signature(self, i: int) -> np.ndarray:
        """The MinHash signature of synthetic chapter i (salted like its keys) for the peer."""
        sig = self.minhashes[i % len(self.minhashes)]
        return (sig ^ self.salts[i]) & np.uint64(0xFFFFFFFF)


def used_memory(client) -> int:
    return int(client.info("memory")["used_memory"])


def latencies(fn, queries: Sequence, warm: int = 20) -> np.ndarray:
    for q in queries[:warm]:
        fn(q)
    out = np.empty(len(queries))
    for j, q in enumerate(queries):
        t0 = time.perf_counter()
        fn(q)
        out[j] = time.perf_counter() - t0
    return out


def bench_ours(client, keys: Keys, unrelated: list[IndexKeys], sizes: list[int], n_queries: int,
               table: Table, rng) -> None:
    from tracker.redis_index import RedisIndex

    for n in sizes:
        client.flushdb()
        idx = RedisIndex(client, CONFIG, PARAMS, prefix="bench:", capacity=n)
        mem0 = used_memory(client)
        done, spent = 0, 0.0
        while done < n:
            m = min(CHUNK, n - done)
            items = [(i, keys.copy(i)) for i in range(done, done + m)]
            t0 = time.perf_counter()
            idx.add_many(items)
            spent += time.perf_counter() - t0
            done += m
            if done % 100_000 == 0 or done == n:
                print(f"  indexed {done:,} chapters, {done / spent:,.0f}/s", file=sys.stderr, flush=True)
        grown = used_memory(client) - mem0
        t0 = time.perf_counter()
        strings = idx.compact()
        compact_s = time.perf_counter() - t0
        mem = used_memory(client) - mem0
        found = rng.integers(0, n, size=n_queries)
        hit = latencies(lambda i: idx.candidates(keys.copy(int(i))), list(found))
        miss = latencies(idx.candidates, unrelated[:n_queries] * (n_queries // max(1, len(unrelated[:n_queries]))))
        ok = sum(int(i) in idx.candidates(keys.copy(int(i))) for i in found[:50])
        table.add("RedisIndex (all channels)", f"{n:,}", fmt_rate(n / spent),
                  f"{fmt_bytes(mem / n)} ({fmt_bytes(grown / n)} before compact())",
                  fmt_seconds(percentile(hit, 50)), fmt_seconds(percentile(hit, 99)),
                  fmt_seconds(percentile(miss, 50)), fmt_seconds(percentile(miss, 99)), f"{ok}/50", fmt_bytes(mem))
        info = client.info("keyspace")
        table.notes.append(f"RedisIndex at {n:,} chapters: bucket bits {idx.bits}, "
                           f"{next(iter(info.values()))['keys'] if info else 0:,} keys in the database; "
                           f"compact() rewrote {strings:,} strings in {compact_s:.1f} s (not in indexed/s).")


def bench_peer(client, url_kw: dict, keys: Keys, n: int, n_queries: int, table: Table, rng) -> None:
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        table.add("datasketch MinHashLSH (redis)", f"{n:,}", "not installed", "–", "–", "–", "–", "–", "–", "–")
        return
    basename = b"bench-peer"
    mem0 = used_memory(client)
    lsh = MinHashLSH(threshold=0.5, num_perm=128,
                     storage_config={"type": "redis", "basename": basename, "redis": url_kw})
    sigs = [MinHash(num_perm=128, hashvalues=keys.signature(i), scheme="legacy") for i in range(n)]
    t0 = time.perf_counter()
    with lsh.insertion_session(buffer_size=50_000) as session:
        for i, m in enumerate(sigs):
            session.insert(f"c{i}", m)
    spent = time.perf_counter() - t0
    mem = used_memory(client) - mem0
    found = rng.integers(0, n, size=min(n_queries, 200))
    hit = latencies(lambda i: lsh.query(sigs[int(i)]), list(found), warm=5)
    others = [MinHash(num_perm=128, hashvalues=keys.signature(1_900_000 + j), scheme="legacy") for j in range(len(found))]
    miss = latencies(lsh.query, others, warm=5)
    ok = sum(f"c{int(i)}" in lsh.query(sigs[int(i)]) for i in found[:50])
    table.add("datasketch MinHashLSH (redis), MinHash channel only", f"{n:,}", fmt_rate(n / spent),
              fmt_bytes(mem / n), fmt_seconds(percentile(hit, 50)), fmt_seconds(percentile(hit, 99)),
              fmt_seconds(percentile(miss, 50)), fmt_seconds(percentile(miss, 99)), f"{ok}/50", fmt_bytes(mem))
    table.notes.append(
        f"datasketch measured on {n:,} documents only (insertion_session with buffered pipelines); "
        "published figures for it: ~160 inserts/s, 20-28 ms/query, ~2 KB/doc.")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help="indexed chapter counts (default 100000,1000000)")
    ap.add_argument("--quick", action="store_true", help="20,000 chapters, 2,000 for the peer, 100 queries")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/13",
                    help="a Redis database the benchmark may flush (default db 13)")
    ap.add_argument("--peer-docs", type=int, default=None, help="documents for datasketch (default 10000)")
    ap.add_argument("--no-peer", action="store_true",
                    help="skip datasketch (its row says it was not run)")
    ap.add_argument("--queries", type=int, default=None, help="queries per kind and size (default 300)")
    ap.add_argument("--corpus", help="the corpus folder (default: $FPT_SHARED/corpus or ../shared/corpus)")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    import redis

    from tracker.redis_index import IndexUnavailable, connect

    args = build_parser().parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("20000" if args.quick else "100000,1000000")).split(",")]
    if sorted(sizes) != sizes or sizes[0] < 1:
        raise BenchError(f"--sizes must be increasing positive counts, got {args.sizes}")
    peer_docs = args.peer_docs or (2000 if args.quick else 10_000)
    n_queries = args.queries or (100 if args.quick else 300)
    try:
        client = connect(args.redis_url)
    except IndexUnavailable as e:
        raise BenchError(str(e)) from None
    url_kw = {k: client.connection_pool.connection_kwargs[k] for k in ("host", "port", "db")}
    if url_kw["db"] == 0:
        raise BenchError("the benchmark flushes its database; give it a dedicated one, e.g. redis://127.0.0.1:6379/13")

    chapters = load_chapters(corpus_path(args.corpus))
    rng = np.random.default_rng(5)
    pick = rng.choice(len(chapters), size=min(len(chapters), BASE_CHAPTERS + 50), replace=False)
    print(f"preparing {len(pick)} real chapters ...", file=sys.stderr, flush=True)
    prepared = [prepare(chapters[i].key, chapters[i].text, CONFIG) for i in pick]
    base, held_out = prepared[:BASE_CHAPTERS], prepared[BASE_CHAPTERS:]
    keys = Keys([index_keys(p, CONFIG, PARAMS) for p in base], [p.minhash.values.astype(np.uint64) for p in base])
    # unrelated pages: chapters never indexed, salted with values no copy uses
    unrelated = [IndexKeys(winnow=k.winnow ^ s, pinyin=k.pinyin ^ s, simhash=k.simhash ^ int(s),
                           simhash_bits=k.simhash_bits, bands=k.bands ^ s)
                 for k, s in zip((index_keys(p, CONFIG, PARAMS) for p in held_out), keys.salts[-len(held_out):])]
    per = np.array([[len(k.winnow), len(k.pinyin), len(k.bands)] for k in keys.base])
    syll = np.array([p.units for p in base])

    table = Table("Redis candidate index: indexing, memory, query latency",
                  ["index", "chapters", "indexed/s", "memory/chapter", "query p50 (indexed)", "query p99 (indexed)",
                   "query p50 (unrelated)", "query p99 (unrelated)", "finds itself", "memory total"])
    table.notes.append(TARGETS + ".")
    table.notes.append(
        f"Keys per chapter (mean of {len(base)} real chapters, {syll.mean():,.0f} syllables): winnow "
        f"{per[:, 0].mean():.1f}, pinyin {per[:, 1].mean():.1f}, LSH bands {per[:, 2].mean():.0f}, Simhash 1 "
        f"(IndexParams(winnow_sample=32, pinyin_sample=8)).")
    table.notes.append("Memory is INFO memory used_memory after minus before, divided by the chapters indexed.")
    try:
        client.flushdb()
        print("RedisIndex ...", file=sys.stderr, flush=True)
        bench_ours(client, keys, unrelated, sizes, n_queries, table, rng)
        client.flushdb()
        if args.no_peer:
            table.add("datasketch MinHashLSH (redis)", "–", "not run (--no-peer)", "–", "–", "–", "–", "–", "–", "–")
        else:
            print(f"datasketch on {peer_docs:,} documents ...", file=sys.stderr, flush=True)
            bench_peer(client, url_kw, keys, peer_docs, n_queries, table, rng)
    except redis.RedisError as e:
        raise BenchError(f"Redis at {args.redis_url} failed during the benchmark: {e}") from None
    finally:
        client.flushdb()
    cfg = client.config_get("*-max-listpack-*")
    extra = [("redis", f"{client.info('server')['redis_version']} at {args.redis_url} "
                       f"({', '.join(f'{k} {v}' for k, v in sorted(cfg.items()))})"),
             ("redis-py", version_of("redis"))]
    report = header_markdown("RedisIndex benchmark", ["datasketch"], extra) + "\n\n" + table.markdown()
    print(report)
    if not args.no_write:
        print(f"\nwritten to {write_report('redis-index', report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
