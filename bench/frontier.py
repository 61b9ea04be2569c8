"""Crawl speed with a frontier shared in Redis: 1 and 2 crawler processes, one instance and a cluster.

    .venv/bin/python bench/frontier.py [--chapters 400] [--concurrency 16] [--repeat 3] [--corpus PATH]
                                       [--redis redis://127.0.0.1:6379/0] [--cluster URL] [--no-write]

The sample pirate site of bench/crawl.py (web.demo, real chapters from zh_novels) is
served on 127.0.0.1 and crawled with `python -m crawler URL --no-process` (fetch, extract,
join, store; no matching, so that only the crawl and its frontier are timed):

- on disk: the embedded frontier (Scrapy's JOBDIR), one process, for reference;
- Redis, one instance (--redis; a key prefix per run, deleted after it);
- Redis Cluster: --cluster URL (any node), or else three masters started for the run on
  free loopback ports (tests/cluster.py), stopped after it.

With 2 processes both crawlers are started at once on the same job; they split the site
between them. pages/s is the pages the crawlers fetched together over the time from their
start to the last page the site served (medians of --repeat runs, taken in turn); the time
to the last exit is shown beside it. "fetched twice"
counts the URLs the site served more than once (robots.txt, read by each process, aside),
which a shared frontier must keep at 0. The table goes to stdout and to
bench/out/frontier-<date>.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BenchError, corpus_path, header_markdown, markdown_table, run_cli, write_report
from bench.crawl import chapters
from crawler.frontier import SHARED_IDLE_WAIT


def crawl_at_once(site, env: dict[str, str], processes: int, concurrency: int) -> tuple[float, float, int]:
    """(seconds to the last page served, seconds to the last exit, pages fetched) of `processes`
    crawlers started together on one job."""
    import threading

    cmd = [sys.executable, "-m", "crawler", site.url + "/", "--job", "bench", "--delay", "0", "--concurrency",
           str(concurrency), "--depth", "3", "--timeout", "1", "--retries", "0", "--format", "jsonl", "-q",
           "--no-process"]
    t0 = time.perf_counter()
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
             for _ in range(processes)]
    outs: list[tuple[str, str]] = [("", "")] * processes

    def wait(i: int) -> None:
        outs[i] = procs[i].communicate(timeout=3600)

    waiters = [threading.Thread(target=wait, args=(i,)) for i in range(processes)]
    for w in waiters:
        w.start()
    served, last = -1, t0
    while any(w.is_alive() for w in waiters):  # when the site served its last request
        n = sum(site.hits.values())
        if n != served:
            served, last = n, time.perf_counter()
        time.sleep(0.02)
    for w in waiters:
        w.join()
    seconds = time.perf_counter() - t0
    fetched = 0
    for p, (out, err) in zip(procs, outs):
        if p.returncode != 0 or not out.strip():
            raise BenchError(f"a crawler failed (exit {p.returncode}): {err.strip()[-800:]}")
        fetched += sum(json.loads(line)["fetched"] for line in out.splitlines())
    return last - t0, seconds, fetched


def delete_prefix(url: str, prefix: str) -> None:
    """Delete the run's keys (a cluster client scans every master)."""
    from tracker.redis_client import connect

    client = connect(url)
    for key in list(client.scan_iter(match=prefix + "*", count=1000)):
        client.delete(key)
    client.close()


def frontier_ops(url: str, n: int, prefix: str) -> dict[str, str]:
    """Requests/s through each frontier alone (queue `n` requests, then take them all back):
    scrapy-redis's dupefilter and priority queue as shipped, and crawler.redis_frontier's."""
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler
    from scrapy_redis.dupefilter import RFPDupeFilter
    from scrapy_redis.queue import PriorityQueue

    from crawler.redis_frontier import Scheduler
    from tracker.redis_client import connect, explain, is_cluster

    client = connect(url)
    crawler = get_crawler(Spider, {})
    spider = Spider(name="bench")
    spider.settings = crawler.settings
    requests = [Request(f"http://127.0.0.1/book/{i // 50}/{i}.html", priority=-(i % 7)) for i in range(n)]
    out: dict[str, str] = {}

    def shipped() -> None:
        seen = RFPDupeFilter(client, key=prefix + "{a}:seen")
        queue = PriorityQueue(client, spider, key=prefix + "{a}:requests")
        for r in requests:
            if not seen.request_seen(r):
                queue.push(r)
        while queue.pop() is not None:
            pass

    def ours() -> None:
        scheduler = Scheduler(client, persist=True, queue_key=prefix + "{b}:requests",
                              queue_cls="crawler.redis_frontier.Queue", dupefilter_key=prefix + "{b}:seen")
        scheduler.open(spider)
        for r in requests:
            scheduler.enqueue_request(r)
        while scheduler.next_request() is not None:
            pass
        if scheduler.failed:
            raise RuntimeError(scheduler.failed)

    for name, run in (("scrapy-redis as shipped", shipped), ("crawler.redis_frontier", ours)):
        t0 = time.perf_counter()
        try:
            run()
            out[name] = f"{n / (time.perf_counter() - t0):,.0f}"
        except Exception as e:
            out[name] = "fails: " + explain(e, url, cluster=is_cluster(client)).split(";")[0]
    client.close()
    return out


def crawl_rows(setups: list[tuple[str, str, int]], chs: list[tuple[str, str]], args) -> list[list]:
    """One row per setup (name, Redis URL or "" for the disk, processes): medians of --repeat runs."""
    from web.demo.server import SampleSite

    base_env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    runs: dict[int, list[tuple[float, float, int, int]]] = {i: [] for i in range(len(setups))}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):  # the setups in turn, so that a busy moment does not hit one alone
            for i, (_, url, processes) in enumerate(setups):
                env = {**base_env, "FPT_HOME": f"{tmp}/home-{i}-{k}"}
                prefix = f"fpt-bench-{uuid.uuid4().hex[:8]}:"
                if url:
                    env.update(FPT_REDIS_URL=url, FPT_REDIS_PREFIX=prefix)
                # A site per run: its hit counts tell the URLs fetched twice.
                with SampleSite(chs, slow_delay=2.0, huge_bytes=3_000_000) as site:
                    try:
                        fetching, seconds, fetched = crawl_at_once(site, env, processes, args.concurrency)
                    finally:
                        if url:
                            delete_prefix(url, prefix)
                    twice = sum(1 for path, n in site.hits.items() if n > 1 and path != "/robots.txt")
                runs[i].append((fetching, seconds, fetched, twice))
    rows = []
    for i, (name, _, processes) in enumerate(setups):
        fetching = statistics.median(r[0] for r in runs[i])
        seconds = statistics.median(r[1] for r in runs[i])
        fetched = statistics.median(r[2] for r in runs[i])
        rows.append([name, processes, int(fetched), max(r[3] for r in runs[i]), f"{fetching:.1f}",
                     f"{fetched / fetching:.0f}", f"{seconds:.1f}"])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapters", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16, help="requests at once per crawler process")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each row (medians reported)")
    ap.add_argument("--corpus")
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="a single Redis instance")
    ap.add_argument("--cluster", default="", help="a node of a Redis Cluster (default: start one for the run)")
    ap.add_argument("--ops", type=int, default=5000, help="requests through the frontier alone")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from tracker.redis_client import RedisUnavailable, connect

    for name, url in (("--redis", args.redis), ("--cluster", args.cluster)):
        if url:
            try:
                connect(url).close()
            except RedisUnavailable as e:
                raise BenchError(f"{name}: {e}") from None
    chs = chapters(corpus_path(args.corpus), args.chapters)
    local = None
    cluster_url = args.cluster
    if not cluster_url:
        from tests.cluster import LocalCluster

        local = LocalCluster()
        if not local.start():
            raise BenchError(f"no Redis Cluster: {local.error} (or give one with --cluster URL)")
        cluster_url = local.url
    try:
        rows = crawl_rows([("on disk (JOBDIR)", "", 1), ("Redis, one instance", args.redis, 1),
                           ("Redis, one instance", args.redis, 2), ("Redis Cluster, 3 masters", cluster_url, 1),
                           ("Redis Cluster, 3 masters", cluster_url, 2)], chs, args)
        op_rows = []
        for name, url in (("one instance", args.redis), ("cluster, 3 masters", cluster_url)):
            prefix = f"fpt-bench-{uuid.uuid4().hex[:8]}:"
            try:
                op_rows.append([name, *frontier_ops(url, args.ops, prefix).values()])
            finally:
                delete_prefix(url, prefix)
    finally:
        if local is not None:
            local.stop()

    table = markdown_table(["frontier", "crawler processes", "pages fetched", "fetched twice",
                            "seconds to the last page", "pages/s", "seconds to exit"], rows)
    table += ("\n\npages/s: pages fetched over the seconds from the start to the last page the site served. "
              "Seconds to exit add the end of the crawl: a crawler sharing a Redis frontier waits "
              f"{SHARED_IDLE_WAIT:.0f} s, idle, for its peers' links before it finishes (crawler.frontier."
              "SHARED_IDLE_WAIT), and the process start and exit.")
    table += "\n\n" + markdown_table(
        ["Redis", "requests/s, scrapy-redis as shipped", "requests/s, crawler.redis_frontier"], op_rows)
    table += (f"\n\nThe frontier alone, in one process: {args.ops} requests queued (seen-set checked), then "
              "all taken back.")
    header = header_markdown("fptrack: crawl frontier, one instance and a cluster", ["scrapy", "scrapy-redis", "redis"],
                             [("site", f"sample site of {len(chs)} real chapters on 127.0.0.1, depth 3, no delay"),
                              ("crawl", f"--no-process, concurrency {args.concurrency} per process, "
                                        f"medians of {args.repeat} runs")])
    print(table)
    if not args.no_write:
        path = write_report("frontier", header + "\n\n" + table)
        print(f"\nwritten to {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
