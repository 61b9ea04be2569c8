"""RedisIndex on a real Redis, next to datasketch's MinHashLSH on the same server.

    .venv/bin/python bench/redis_index.py [--sizes 100000,1000000] [--quick]
                                          [--redis-url redis://127.0.0.1:6379/13]
                                          [--cluster [URL]] [--no-single]
                                          [--peer-docs 10000] [--no-peer] [--queries 300] [--corpus PATH]
                                          [--no-write]

--cluster runs the same measurements on a Redis Cluster as well, in the same table: a
local three-node cluster started for the run on free ports (tests/cluster.py, stopped at
the end), or the cluster at URL, whose every master is FLUSHALL-ed.

Realistic keys: a sample of real chapters of zh_novels is prepared with the default
EngineConfig and IndexParams(winnow_sample=32, pinyin_sample=8); N distinct synthetic
chapters are made from them by XOR-ing every key array (and the Simhash) with a random
64-bit salt per copy, so key counts and distributions are those of real chapters.

Measured, at each size (a fresh index per size, its capacity set to that size):
- indexing throughput (add_many, 20,000 chapters per round trip pair; key generation not timed),
- Redis memory per chapter: INFO memory used_memory delta / chapters, after RedisIndex.compact()
  (and before it: APPEND leaves strings with up to as much room again reserved),
- query latency p50/p99 for an indexed chapter's keys and for an unrelated page's keys,
- false candidates: the mean number of originals proposed for an unrelated page (the
  residual bytes under the bucket bits let other keys pass for a page's keys now and then).
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

from bench.common import (
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
from fingerprint.engine import EngineConfig, prepare
from fingerprint.index import IndexKeys, IndexParams, index_keys

PARAMS = IndexParams(winnow_sample=32, pinyin_sample=8)
CONFIG = EngineConfig()
BASE_CHAPTERS = 400
CHUNK = 100_000  # synthetic chapters generated per add_many call
TARGETS = ("targets: >= 20,000 chapters/s indexed at 1M chapters, <= 600 B of Redis memory per chapter, "
           "query p50 <= 1 ms at 10M, on one instance and on a cluster")


class Keys:
    """Real chapters' keys as flat arrays, and salted copies of them."""

    def __init__(self, keys: list[IndexKeys], minhashes: list[np.ndarray], seed: int = 1, count: int = 2_000_000):
        self.base = keys
        self.minhashes = minhashes
        self.rng = np.random.default_rng(seed)
        self.salts = np.random.default_rng(seed + 1).integers(1, 2**64, size=count, dtype=np.uint64)

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


def masters(client) -> list:
    """Plain clients of every master (one for a single instance)."""
    from tracker.redis_client import is_cluster

    if is_cluster(client):
        return [client.get_redis_connection(n) for n in client.get_primaries()]
    return [client]


def used_memory(client) -> int:
    return sum(int(m.info("memory")["used_memory"]) for m in masters(client))


def flush(client) -> None:
    """Empty the benchmark's database (every master of a cluster)."""
    for m in masters(client):
        m.flushdb()


def key_count(client) -> int:
    return sum(int(m.dbsize()) for m in masters(client))


def latencies(fn, queries: Sequence, warm: int = 20) -> np.ndarray:
    for q in queries[:warm]:
        fn(q)
    out = np.empty(len(queries))
    for j, q in enumerate(queries):
        t0 = time.perf_counter()
        fn(q)
        out[j] = time.perf_counter() - t0
    return out


def bench_ours(client, label: str, keys: Keys, unrelated: list[IndexKeys], sizes: list[int], n_queries: int,
               table: Table, rng) -> None:
    from tracker.redisindex import RedisIndex

    for n in sizes:
        flush(client)
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
            if done % 1_000_000 == 0 or done == n:
                print(f"  {label}: indexed {done:,} chapters, {done / spent:,.0f}/s", file=sys.stderr, flush=True)
        del items
        grown = used_memory(client) - mem0
        t0 = time.perf_counter()
        strings = idx.compact()
        compact_s = time.perf_counter() - t0
        mem = used_memory(client) - mem0
        found = rng.integers(0, n, size=n_queries)
        hit = latencies(lambda i, idx=idx: idx.candidates(keys.copy(int(i))), list(found))
        others = (unrelated * (n_queries // max(1, len(unrelated)) + 1))[:n_queries]
        miss = latencies(idx.candidates, others)
        ok = sum(int(i) in idx.candidates(keys.copy(int(i))) for i in found[:50])
        false = np.mean([len(idx.candidates(k)) for k in unrelated])
        table.add(f"RedisIndex, {label}", f"{n:,}", fmt_rate(n / spent),
                  f"{fmt_bytes(mem / n)} ({fmt_bytes(grown / n)} before compact())",
                  fmt_seconds(percentile(hit, 50)), fmt_seconds(percentile(hit, 99)),
                  fmt_seconds(percentile(miss, 50)), fmt_seconds(percentile(miss, 99)), f"{ok}/50",
                  f"{false:.3f}", fmt_bytes(mem))
        table.notes.append(f"RedisIndex, {label}, at {n:,} chapters: bucket bits {idx.layout.bits}, residual bytes "
                           f"{idx.layout.resid}, {key_count(client):,} keys; compact() rewrote {strings:,} strings "
                           f"in {compact_s:.1f} s (not in indexed/s).")
        flush(client)


def bench_peer(client, url_kw: dict, keys: Keys, n: int, n_queries: int, table: Table, rng) -> None:
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        table.add("datasketch MinHashLSH (redis)", f"{n:,}", "not installed", "–", "–", "–", "–", "–", "–", "–", "–")
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
    false = np.mean([len(lsh.query(m)) for m in others])
    table.add("datasketch MinHashLSH (redis, one instance), MinHash channel only", f"{n:,}", fmt_rate(n / spent),
              fmt_bytes(mem / n), fmt_seconds(percentile(hit, 50)), fmt_seconds(percentile(hit, 99)),
              fmt_seconds(percentile(miss, 50)), fmt_seconds(percentile(miss, 99)), f"{ok}/50", f"{false:.3f}",
              fmt_bytes(mem))
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
    ap.add_argument("--cluster", nargs="?", const="local", default=None, metavar="URL",
                    help="also measure on a Redis Cluster: a local three-node one started for the run, or the "
                         "cluster at URL (every master is flushed)")
    ap.add_argument("--no-single", action="store_true", help="skip the single instance (with --cluster)")
    ap.add_argument("--peer-docs", type=int, default=None, help="documents for datasketch (default 10000)")
    ap.add_argument("--no-peer", action="store_true",
                    help="skip datasketch (its row says it was not run)")
    ap.add_argument("--queries", type=int, default=None, help="queries per kind and size (default 300)")
    ap.add_argument("--corpus", help="the corpus folder (default: $FPT_SHARED/corpus or ../shared/corpus)")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    return ap


def start_cluster():
    """A local three-node Redis Cluster on free ports (the tests' tests/cluster.py)."""
    from tests.cluster import LocalCluster

    cluster = LocalCluster()
    if not cluster.start():
        raise BenchError(f"could not start a local Redis Cluster: {cluster.error}")
    return cluster


def main(argv: Sequence[str] | None = None) -> int:
    import redis

    from tracker.redis_client import is_cluster
    from tracker.redisindex import IndexUnavailable, connect

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
    if is_cluster(client):
        raise BenchError("--redis-url is a cluster node; give it with --cluster URL instead")
    url_kw = {k: client.connection_pool.connection_kwargs[k] for k in ("host", "port", "db")}
    if url_kw["db"] == 0:
        raise BenchError("the benchmark flushes its database; give it a dedicated one, e.g. redis://127.0.0.1:6379/13")

    chapters = load_chapters(corpus_path(args.corpus))
    rng = np.random.default_rng(5)
    pick = rng.choice(len(chapters), size=min(len(chapters), BASE_CHAPTERS + 50), replace=False)
    print(f"preparing {len(pick)} real chapters ...", file=sys.stderr, flush=True)
    prepared = [prepare(chapters[i].key, chapters[i].text, CONFIG) for i in pick]
    base, held_out = prepared[:BASE_CHAPTERS], prepared[BASE_CHAPTERS:]
    keys = Keys([index_keys(p, CONFIG, PARAMS) for p in base], [p.minhash.values.astype(np.uint64) for p in base],
                count=max(2_000_000, sizes[-1] + 100_000))
    # unrelated pages: chapters never indexed, salted with values no copy uses
    unrelated = [IndexKeys(winnow=k.winnow ^ s, pinyin=k.pinyin ^ s, simhash=k.simhash ^ int(s),
                           simhash_bits=k.simhash_bits, bands=k.bands ^ s)
                 for k, s in zip((index_keys(p, CONFIG, PARAMS) for p in held_out), keys.salts[-len(held_out):])]
    per = np.array([[len(k.winnow), len(k.pinyin), len(k.bands)] for k in keys.base])
    syll = np.array([p.units for p in base])

    table = Table("Redis candidate index: indexing, memory, query latency",
                  ["index", "chapters", "indexed/s", "memory/chapter", "query p50 (indexed)", "query p99 (indexed)",
                   "query p50 (unrelated)", "query p99 (unrelated)", "finds itself",
                   "false candidates / unrelated page", "memory total"])
    table.notes.append(TARGETS + ".")
    table.notes.append(
        f"Keys per chapter (mean of {len(base)} real chapters, {syll.mean():,.0f} syllables): winnow "
        f"{per[:, 0].mean():.1f}, pinyin {per[:, 1].mean():.1f}, LSH bands {per[:, 2].mean():.0f}, Simhash 1 "
        f"(IndexParams(winnow_sample=32, pinyin_sample=8)).")
    table.notes.append("Memory is INFO memory used_memory after minus before (summed over a cluster's masters), "
                       "divided by the chapters indexed.")
    extra = [("redis", f"{client.info('server')['redis_version']} at {args.redis_url} "
                       f"({', '.join(f'{k} {v}' for k, v in sorted(client.config_get('*-max-listpack-*').items()))})"),
             ("redis-py", version_of("redis"))]
    cluster = None
    try:
        if not args.no_single:
            flush(client)
            print("RedisIndex on one instance ...", file=sys.stderr, flush=True)
            bench_ours(client, "one instance", keys, unrelated, sizes, n_queries, table, rng)
        if args.cluster:
            if args.cluster == "local":
                cluster = start_cluster()
                url = cluster.url
            else:
                url = args.cluster
            cl = connect(url)
            if not is_cluster(cl):
                raise BenchError(f"--cluster {url} is not a node of a Redis Cluster")
            n_masters = len(cl.get_primaries())
            extra.append(("redis cluster", f"{n_masters} masters, no replicas, at {url}"
                                           + (" (local, started for the run)" if cluster else "")))
            print(f"RedisIndex on a cluster of {n_masters} masters ...", file=sys.stderr, flush=True)
            bench_ours(cl, f"cluster of {n_masters} masters", keys, unrelated, sizes, n_queries, table, rng)
        flush(client)
        if args.no_peer:
            table.add("datasketch MinHashLSH (redis)", "–", "not run (--no-peer)", "–", "–", "–", "–", "–", "–", "–",
                      "–")
        else:
            print(f"datasketch on {peer_docs:,} documents ...", file=sys.stderr, flush=True)
            bench_peer(client, url_kw, keys, peer_docs, n_queries, table, rng)
    except (redis.RedisError, redis.exceptions.RedisClusterException, IndexUnavailable) as e:
        raise BenchError(f"Redis failed during the benchmark: {e}") from None
    finally:
        flush(client)
        if cluster is not None:
            cluster.stop()
    report = header_markdown("RedisIndex benchmark", ["datasketch"], extra) + "\n\n" + table.markdown()
    print(report)
    if not args.no_write:
        print(f"\nwritten to {write_report('redis-index', report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
