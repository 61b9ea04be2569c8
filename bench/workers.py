"""Many workers, same answers: one set of pirated pages ingested in-process and by 1 and 2
real Celery worker processes, with pages/s for each and whether the matches are identical.

    .venv/bin/python bench/workers.py [--novels N] [--chapters-per-novel C] [--pages P]
                                      [--workers 1,2] [--layout apart|one] [--repeat R]
                                      [--broker URL] [--redis-url URL] [--seed S]
                                      [--corpus PATH] [--embedded] [--keep DIR]

Originals: the registered first halves of N simplified novels and of 儒林外史 (traditional),
registered as one work each with `register_work`, once, into a template FPT_HOME (the
embedded SQLite store) that every run copies. Pages: made by bench/quality.py's make_pages
(bench/piracy.py's transformations: boilerplate, split, merged, excerpt, homophones,
traditional, junk, pinyin, GBK HTML, reordered, combined, simplified), from registered and
unregistered chapters and from unregistered novels, then a seeded sample of P of them,
written as files and stored with `pipeline.ingest`, as `fptrack ingest` does.

Each run has its own copy of the store and its own key prefix in the Redis index
(FPT_REDIS_URL, filled from the stored fingerprints with `pipeline.reindex`, not timed):
- in-process: no broker, `dispatch_pages` processes the pages here, one after another;
- N workers: N `fptrack worker --concurrency=1` processes (--layout apart, as on N machines)
  or one `fptrack worker --concurrency=N` (--layout one), on the broker (RabbitMQ by
  default), on a queue of the run's own, sharing the SQLite store (WAL) and the Redis index;
  timed from the first task sent to the last page processed, the workers' start-up included
  (each pool process opens its store, index and engine on its first task; not the Celery
  boot). Not the solo pool: with RabbitMQ and late acks, two `--pool=solo` workers sat idle
  for about 10 s at a time while tasks waited in the queue (Celery 5.7, kombu 5.7).
--embedded adds an in-process run on the embedded index instead of Redis; that index keeps
every key where the Redis index samples them (Settings.index_params), so its candidates, and
a few matches, may differ: a comparison of index parameters, not of workers.

Each run is made --repeat times (3), each on a fresh copy; the fastest is shown (the machine
may be busy with other work: the load average before and after is in the header), and every
repeat is compared. The matches of every run are compared with the in-process run's: the set of (page, chapter,
verdict), the page outcomes, and every score (similarity, containment, page share, the
per-channel scores), which must be equal, not close. The Redis keys of the runs and the
broker queues are deleted at the end. The table goes to stdout and
bench/out/workers-<date>.md. The corpus is ../shared/corpus, $FPT_SHARED/corpus or --corpus.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (
    BenchError,
    corpus_path,
    load_average,
    machine_info,
    markdown_table,
    run_cli,
    write_report,
)
from bench.piracy import Simulator
from bench.quality import SIMPLIFIED, TRADITIONAL_REGISTERED, UNREGISTERED, load_novel, make_pages, write_docs

DEFAULT_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
READY_TIMEOUT_S = 60
RUN_TIMEOUT_S = 1800


@dataclass
class Outcome:
    """What a run left in its store, and what it cost."""

    label: str
    pages: int
    seconds: float
    cpu: dict[str, float] = field(default_factory=dict)  # "workers", "redis", "broker" -> CPU seconds
    statuses: dict[str, str] = field(default_factory=dict)  # page -> done / failed
    matches: dict[tuple[str, str, str], tuple] = field(default_factory=dict)  # (page, chapter, verdict) -> scores

    def differences(self, ref: Outcome) -> list[str]:
        """What differs from `ref`, in words (empty: identical)."""
        out = []
        if self.statuses != ref.statuses:
            diff = [k for k in sorted(set(self.statuses) | set(ref.statuses))
                    if self.statuses.get(k) != ref.statuses.get(k)]
            out.append(f"{len(diff)} page outcomes differ, e.g. {diff[:3]}")
        if set(self.matches) != set(ref.matches):
            extra, missing = set(self.matches) - set(ref.matches), set(ref.matches) - set(self.matches)
            out.append(f"{len(extra)} matches more and {len(missing)} fewer, e.g. {sorted(extra | missing)[:3]}")
        scored = [k for k in self.matches if k in ref.matches and self.matches[k] != ref.matches[k]]
        if scored:
            out.append(f"{len(scored)} matches scored differently, e.g. {scored[:3]}")
        return out


def outcome_of(ctx, label: str, keys: list[str], seconds: float, cpu: dict[str, float]) -> Outcome:
    o = Outcome(label, len(keys), seconds, cpu)
    for key in keys:
        o.statuses[key] = ctx.store.get_page(key).status
    for m in ctx.store.matches():
        o.matches[(m.page, m.chapter, m.verdict)] = (m.similarity, m.containment, m.page_share,
                                                     tuple(sorted(m.scores.items())))
    return o


# ------------------------------------------------------------------------------------ data


def build(args: argparse.Namespace, work: Path) -> tuple[Path, Path, int]:
    """Write the originals (a folder per work) and the pages; register the works into a
    template FPT_HOME. Returns (template home, pages folder, registered chapters)."""
    from tracker.context import Context
    from tracker.registry import register_work
    from tracker.settings import Settings

    corpus = corpus_path(args.corpus)
    zh = corpus / "zh_novels"
    novels = [load_novel(zh / f"{n}.txt", n, True) for n in SIMPLIFIED[: args.novels]]
    trad = load_novel(zh / f"{TRADITIONAL_REGISTERED}.txt", TRADITIONAL_REGISTERED, True)
    others = [load_novel(zh / f"{n}.txt", n, False) for n in UNREGISTERED[:2]]
    sim = Simulator(args.seed, filler=[zh.joinpath(f"{n}.txt").read_text(encoding="utf-8") for n in UNREGISTERED[:2]])
    pages = make_pages(novels, trad, others, sim, args.chapters_per_novel, args.seed)
    if args.pages and len(pages) > args.pages:
        pages = sorted(random.Random(args.seed).sample(pages, args.pages), key=lambda p: p.key)
    write_docs(work / "pages", [(p.key, p.to_bytes(), p.ext) for p in pages])

    from fingerprint.index import MemoryIndex

    # Fingerprinted with the Redis index's parameters (sampled keys), as the runs use it; the
    # keys go to a throw-away index here, and into each run's Redis prefix by `reindex`.
    home = work / "template"
    settings = Settings.load({"FPT_HOME": str(home), "FPT_REDIS_URL": args.redis_url})
    ctx = Context(settings, index=MemoryIndex(settings.engine_config(), settings.index_params()))
    chapters = 0
    for nv in novels + [trad]:
        folder = work / "originals" / nv.name
        write_docs(folder, [(s.key, (s.title + "\n\n" + s.body).encode("utf-8"), "txt")
                            for s in nv.chapters.values() if s.registered])
        chapters += len(register_work(ctx, nv.name, folder).added)
    ctx.close()
    return home, work / "pages", chapters


# ------------------------------------------------------------------------------------ CPU

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a live process and its live descendants; 0 once gone."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def broker_pids(broker: str) -> list[int]:
    """The RabbitMQ server's processes (beam.smp), when the broker is AMQP on this machine."""
    if not broker.startswith("amqp") or not Path("/proc").is_dir():
        return []
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() == "beam.smp":
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def redis_cpu(url: str) -> float:
    import redis

    client = redis.Redis.from_url(url)
    try:
        info = client.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    finally:
        client.close()


class CpuMeter:
    """CPU seconds used between start() and stop() by the given processes, the Redis server
    (shared with whatever else uses it) and the broker's server."""

    def __init__(self, redis_url: str, broker: str, pids=list):
        self.redis_url, self.pids, self.brokers = redis_url, pids, broker_pids(broker)

    def _sample(self) -> dict[str, float]:
        return {"workers": sum(process_cpu(p) for p in self.pids()) if self.pids() else time.process_time(),
                "redis": redis_cpu(self.redis_url) if self.redis_url else 0.0,
                "broker": sum(process_cpu(p) for p in self.brokers)}

    def start(self) -> None:
        self.first = self._sample()

    def stop(self) -> dict[str, float]:
        last = self._sample()
        return {k: last[k] - self.first[k] for k in last}


# ------------------------------------------------------------------------------------ runs


@dataclass
class Run:
    """One run's own store (a copy of the template), Redis prefix and broker queue."""

    label: str
    home: Path
    redis_url: str
    prefix: str
    broker: str = ""
    queue: str = ""

    def env(self) -> dict[str, str]:
        e = {"FPT_HOME": str(self.home)}
        if self.redis_url:
            e.update(FPT_REDIS_URL=self.redis_url, FPT_REDIS_PREFIX=self.prefix)
        if self.broker:
            e["FPT_BROKER_URL"] = self.broker
        return e

    def context(self):
        from tracker.context import Context
        from tracker.settings import Settings

        return Context(Settings.load(self.env()))


def prepare(run: Run, template: Path, pages: Path) -> tuple[object, list[str]]:
    """Copy the store, fill the run's Redis index, store the pages as queued: (context, page keys)."""
    from tracker import pipeline

    shutil.copytree(template, run.home)
    ctx = run.context()
    pipeline.reindex(ctx)  # fills the run's Redis prefix (or the in-process index, fingerprinting first)
    report = pipeline.ingest(ctx, [str(pages)])
    if not report.queued:
        raise BenchError(f"no pages were stored from {pages}")
    return ctx, report.queued


def in_process(run: Run, template: Path, pages: Path) -> Outcome:
    from tracker.workers.queue import dispatch_pages

    ctx, keys = prepare(run, template, pages)
    meter = CpuMeter(run.redis_url, "")  # this process's CPU
    try:
        meter.start()
        t0 = time.perf_counter()
        dispatch_pages(ctx, keys)
        seconds = time.perf_counter() - t0
        return outcome_of(ctx, run.label, keys, seconds, meter.stop())
    finally:
        ctx.close()


class Workers:
    """`fptrack worker` subprocesses for one run, stopped (SIGTERM, then SIGKILL) by stop()."""

    def __init__(self, run: Run, logs: Path):
        self.run, self.logs = run, logs
        self.procs: list[subprocess.Popen] = []

    def start(self, n: int, layout: str) -> None:
        """`n` workers of one process each ("apart", as on n machines), or one worker with `n`
        pool processes ("one")."""
        fptrack = Path(sys.executable).with_name("fptrack")
        cmd = [str(fptrack)] if fptrack.exists() else [sys.executable, "-c", "from fptrack.cli import main; main()"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
        env.update(self.run.env(), PYTHONPATH=str(ROOT))
        pools = [["--concurrency=1"]] * n if layout == "apart" else [[f"--concurrency={n}"]]
        for i, options in enumerate(pools):
            log = open(self.log(i), "wb")
            self.procs.append(subprocess.Popen(
                [*cmd, "worker", "-Q", self.run.queue, *options, "-n", f"bench{i}-{self.run.queue}@%h",
                 "--without-mingle", "--without-gossip", "--without-heartbeat"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
            log.close()
        end = time.monotonic() + READY_TIMEOUT_S
        while not all(" ready." in self.log(i).read_text(errors="replace") for i in range(len(pools))):
            for i, p in enumerate(self.procs):
                if p.poll() is not None:
                    raise BenchError(f"worker {i} exited ({p.returncode}):\n{self.tail(i)}")
            if time.monotonic() > end:
                raise BenchError(f"the workers were not ready after {READY_TIMEOUT_S} s:\n{self.tail(0)}")
            time.sleep(0.2)

    def log(self, i: int) -> Path:
        return self.logs / f"{self.run.queue}-{i}.log"

    def tail(self, i: int, lines: int = 30) -> str:
        return "\n".join(self.log(i).read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def with_workers(run: Run, n: int, layout: str, template: Path, pages: Path, logs: Path) -> Outcome:
    from tracker.settings import Settings
    from tracker.workers.app import create_celery
    from tracker.workers.queue import dispatch_pages

    ctx, keys = prepare(run, template, pages)
    workers = Workers(run, logs)
    sender = create_celery(Settings.load(run.env()), task_default_queue=run.queue)
    try:
        workers.start(n, layout)
        meter = CpuMeter(run.redis_url, run.broker, lambda: [p.pid for p in workers.procs])
        meter.start()
        t0 = time.perf_counter()
        dispatch_pages(ctx, keys, app=sender)
        end = time.monotonic() + RUN_TIMEOUT_S
        while ctx.store.counts()["pages"].get("queued", 0):
            if time.monotonic() > end:
                raise BenchError(f"pages still queued after {RUN_TIMEOUT_S} s:\n{workers.tail(0)}")
            if any(p.poll() is not None for p in workers.procs):
                raise BenchError(f"a worker exited:\n{workers.tail(0)}")
            time.sleep(0.05)
        seconds = time.perf_counter() - t0
        return outcome_of(ctx, run.label, keys, seconds, meter.stop())
    finally:
        workers.stop()
        delete_queue(sender, run.queue)
        ctx.close()


def delete_queue(app, queue: str) -> None:
    """Remove the run's queue from the broker (RabbitMQ keeps durable queues; Redis, a list and
    the bindings kombu keeps next to it)."""
    try:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_delete(queue)
        url = str(app.conf.broker_url)
        if url.startswith(("redis://", "rediss://")):
            import redis

            client = redis.Redis.from_url(url)
            client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
            client.close()
    except Exception as e:  # the numbers are measured; an old empty queue is only untidy
        print(f"warning: could not delete the broker queue {queue}: {e}", file=sys.stderr)


def drop_prefix(redis_url: str, prefix: str) -> int:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        for i in range(0, len(keys), 1000):
            client.delete(*keys[i : i + 1000])
        return len(keys)
    finally:
        client.close()


def check_services(broker: str, redis_url: str) -> None:
    import redis
    from kombu import Connection

    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as e:
        raise BenchError(f"no Redis at {redis_url} ({e}); start redis-server or give --redis-url") from e
    try:
        with Connection(broker, connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as e:
        raise BenchError(f"no broker at {broker} ({e}); start RabbitMQ, or give --broker "
                         "redis://127.0.0.1:6379/N") from e


# ------------------------------------------------------------------------------------ sizes

SIZED = ("chapters", "fingerprints", "pages", "matches")


def sqlite_sizes(path: Path) -> dict[str, tuple[int, int]]:
    """table -> (rows, bytes of its pages and of its indexes' pages), from SQLite's dbstat."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
        used: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            used[table] = used.get(table, 0) + size
        return {t: (conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0], used.get(t, 0)) for t in SIZED}
    finally:
        conn.close()


def mongo_sizes(home: Path, params_hash: str) -> dict[str, tuple[int, float, float]]:
    """collection -> (documents, BSON bytes per document, index key bytes per document), for
    the records of the store in `home` written by MongoStore into mongomock: the documents
    as MongoDB would get them, before its compression; index keys as their BSON values."""
    import bson
    import mongomock

    from tracker.store.mongo import MongoStore
    from tracker.store.open import store_at

    src = store_at(None, home)
    dst = MongoStore(client=mongomock.MongoClient(), db="sizes")
    try:
        for w in src.works():
            dst.upsert_work(w)
        for ch in src.chapters():
            dst.upsert_chapter(ch)
        for p in src.pages():
            dst.upsert_page(p)
            dst.set_page_status(p.key, p.status, p.reason)
        for m in src.matches():
            dst.upsert_match(m)
        for r in src.fingerprints(params_hash):
            dst.put_fingerprint(r)
        db = getattr(dst, "_db", None)  # the pymongo (here mongomock) Database
        if db is None:
            raise BenchError("MongoStore keeps its database elsewhere: update bench/workers.py mongo_sizes")
        out = {}
        for name in SIZED:
            coll = db[name]
            docs = list(coll.find())
            if not docs:
                out[name] = (0, 0.0, 0.0)
                continue
            body = sum(len(bson.encode(d)) for d in docs) / len(docs)
            keys = 0.0
            for spec in coll.index_information().values():
                fields = [f for f, _ in spec["key"]]
                keys += sum(len(bson.encode({f: _field(d, f) for f in fields})) for d in docs) / len(docs)
            out[name] = (len(docs), body, keys)
        return out
    finally:
        src.close()
        dst.close()


def _field(doc: dict, dotted: str):
    for part in dotted.split("."):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


# ------------------------------------------------------------------------------------ main


def run(args: argparse.Namespace) -> int:
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    if any(n < 1 for n in counts):
        raise BenchError(f"--workers takes worker counts of at least 1, got {args.workers!r}")
    if not 1 <= args.novels <= len(SIMPLIFIED):
        raise BenchError(f"--novels must be between 1 and {len(SIMPLIFIED)}, got {args.novels}")
    if args.repeat < 1:
        raise BenchError("--repeat must be at least 1")
    check_services(args.broker, args.redis_url)
    started = machine_info(["celery", "kombu", "redis"])  # the load average before the runs
    tag = uuid.uuid4().hex[:10]
    tmp = tempfile.TemporaryDirectory(prefix="fpt-workers-") if not args.keep else None
    work = Path(args.keep) if args.keep else Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    prefixes: list[str] = []
    try:
        t0 = time.perf_counter()
        template, pages, chapters = build(args, work)
        print(f"{chapters} chapters registered, {sum(1 for _ in pages.iterdir())} pages written "
              f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

        def new_run(label: str, redis: bool = True, broker: str = "") -> Run:
            prefix = f"fpt-bench-workers-{tag}-{len(prefixes)}:"
            prefixes.append(prefix)
            return Run(label, work / f"home-{len(prefixes)}", args.redis_url if redis else "", prefix, broker,
                       f"fpt-bench-workers-{tag}-{len(prefixes)}")

        def repeated(label: str, once, times: int = args.repeat) -> list[Outcome]:
            """`once(label)` `times` times, each on a fresh copy of the store and index."""
            done = []
            for _ in range(times):
                done.append(once(label))
                print(f"{label}: {done[-1].seconds:.1f} s", file=sys.stderr)
            return done

        reference = new_run("in-process (no broker)")
        groups = [[in_process(reference, template, pages)]]
        print(f"{reference.label}: {groups[0][0].seconds:.1f} s", file=sys.stderr)
        groups[0] += repeated(reference.label, lambda label: in_process(new_run(label), template, pages),
                              args.repeat - 1)
        if args.embedded:
            groups.append(repeated("in-process, embedded index (every key: other index parameters)",
                                   lambda label: in_process(new_run(label, redis=False), template, pages)))
        for n in counts:
            label = (f"{n} Celery worker process{'es' if n > 1 else ''}"
                     + (" (one `fptrack worker`)" if args.layout == "one" and n > 1 else ""))
            groups.append(repeated(label, lambda label, n=n: with_workers(
                new_run(label, broker=args.broker), n, args.layout, template, pages, work)))
        lite = sqlite_sizes(reference.home / "fptrack.sqlite3")
        ctx = reference.context()
        mongo = mongo_sizes(reference.home, ctx.params_hash)
        ctx.close()
    finally:
        for prefix in prefixes:
            drop_prefix(args.redis_url, prefix)
        if tmp is not None:
            tmp.cleanup()

    ref = groups[0][0]
    rows, notes = [], []
    for group in groups:
        diff = [d for o in group if o is not ref for d in o.differences(ref)]
        o = min(group, key=lambda x: x.seconds)  # the fastest of the repeats: the least disturbed
        if ref in group:
            same = "reference" if len(group) == 1 else "reference (its repeats: " + ("same)" if not diff else "**differ**)")
        else:
            same = "yes" if not diff else "**no**"
        per_page = [f"{1000 * o.cpu.get(k, 0.0) / o.pages:.1f}" for k in ("workers", "redis", "broker")]
        if o.label.startswith("in-process"):
            per_page[2] = "–"
        rows.append((o.label, o.pages, f"{o.seconds:.1f}", f"{o.pages / o.seconds:.1f}", *per_page, same))
        notes += [f"- {o.label}: {d}" for d in diff]
    done = sum(s == "done" for s in ref.statuses.values())
    from kombu.utils.url import maybe_sanitize_url

    facts = [
        *started,
        ("load average at the end", load_average()),
        ("repeats", f"{args.repeat} of each run, the fastest shown, all compared"),
        ("broker", maybe_sanitize_url(args.broker)),
        ("index", f"Redis at {args.redis_url}, a prefix per run"),
        ("store", "embedded SQLite (WAL), one file shared by the workers of a run"),
        ("originals", f"{chapters} chapters ({args.novels} novels + {TRADITIONAL_REGISTERED}, first halves)"),
        ("pages", f"{ref.pages} ({done} done, {ref.pages - done} failed: no text left); "
                  f"{len(ref.matches)} matches in the reference run; seed {args.seed}"),
    ]
    text = "\n".join([
        "# fptrack: many workers, same answers",
        "",
        *(f"- **{k}**: {v}" for k, v in facts),
        "",
        markdown_table(["run", "pages", "seconds", "pages/s", "CPU ms/page: fptrack", "Redis", "broker",
                        "matches identical to in-process"], rows),
        "",
        "Identical means: the same (page, chapter, verdict) set, the same page outcomes and equal "
        "scores (similarity, containment, page share, per channel). Seconds run from the first "
        "task sent to the last page processed. CPU per page over the same span: fptrack is the "
        "worker processes (pool children included), or the benchmark's own process in-process; "
        "Redis is the server's INFO cpu (shared with anything else using it meanwhile); broker is "
        "the RabbitMQ server's processes (with a Redis broker it is in the Redis column).",
        *(["", "Differences:", *notes] if notes else []),
        "",
        "## Store size per record (the in-process run's store)",
        "",
        markdown_table(["record", "records", "SQLite bytes/record (table + indexes)",
                        "MongoDB BSON bytes/document", "MongoDB index keys bytes/document"],
                       [(name, lite[name][0], f"{lite[name][1] / max(1, lite[name][0]):,.0f}",
                         f"{mongo[name][1]:,.0f}", f"{mongo[name][2]:,.0f}") for name in SIZED]),
        "",
        "SQLite: the pages of each table and of its indexes (dbstat), over its rows. MongoDB: the "
        "same records written by MongoStore into mongomock, each document's BSON size, and the "
        "BSON size of the values each of the collection's indexes holds per document (_id "
        "included); WiredTiger then compresses documents (snappy) and prefix-compresses index keys.",
    ])
    print(text)
    path = write_report("workers", text)
    print(f"\nwritten to {path}", file=sys.stderr)
    return 1 if notes else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--novels", type=int, default=2, help="registered simplified novels (default 2)")
    p.add_argument("--chapters-per-novel", type=int, default=6,
                   help="chapters per novel and transformation the pages are made from (default 6)")
    p.add_argument("--pages", type=int, default=400, help="at most this many pages, a seeded sample (default 400)")
    p.add_argument("--workers", default="1,2", help="worker process counts to run, comma-separated (default 1,2)")
    p.add_argument("--layout", choices=("apart", "one"), default="apart",
                   help="apart: N `fptrack worker --concurrency=1` (default, as on N machines); "
                        "one: one `fptrack worker --concurrency=N`")
    p.add_argument("--broker", default=os.environ.get("FPT_BENCH_BROKER_URL", DEFAULT_BROKER),
                   help=f"Celery broker (default {DEFAULT_BROKER}, or $FPT_BENCH_BROKER_URL)")
    p.add_argument("--redis-url", default=os.environ.get("FPT_BENCH_REDIS_URL", DEFAULT_REDIS),
                   help=f"Redis for the index; each run keeps to a prefix of its own, deleted at the end "
                        f"(default {DEFAULT_REDIS}, or $FPT_BENCH_REDIS_URL)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs of each kind, each on a fresh copy; the fastest is shown, all are compared (default 3)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--corpus", default=None)
    p.add_argument("--embedded", action="store_true", help="add an in-process run on the embedded index")
    p.add_argument("--keep", default=None, help="work in this folder and keep it (stores, pages, worker logs)")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    run_cli(main)
