"""Admin latency: requests/s and p50/p95/p99 of the admin's pages under concurrent clients.

    .venv/bin/python bench/admin_latency.py [--matches N] [--duration S] [--connections C]
                                            [--threads T] [--out DIR] [--rebuild] [--no-write]

The store: 20 works of 50 chapters, 200 sites (a few big, many small), and pages that each
copy one or two chapters (a merged page copies the next chapter too) until there are N
matches (default 1,000,000, so about N / 1.5 pages), with evidence spans, statuses spread over
new / confirmed / dismissed, and first_seen spread over the last 90 days; 1% more pages
failed. It is written through the store API (about 200 µs per page and match; 10 minutes for
a million) once and kept at <out>/admin-store-<N>-v<version>.sqlite3, so reruns start at once.
Two organisations own the works and sites (ORGS); the admin who signs in belongs to the first,
which owns the 14 most-copied works and 140 sites, so every page is read through an
organisation's view, as a rights holder reads it.

The server: the admin (web.create_app) on that store, under waitress with --threads worker
threads (default 8), in a subprocess on 127.0.0.1. One real sign-in (GET /login for the
CSRF token, POST /login) gives the session cookie. Each page is first fetched alone (it
must answer 200; the "alone" column is the median of three such requests), then loaded by

    wrk -t4 -c<C> -d<S>s --latency --timeout 30s -s <hook>.lua -H "Cookie: ..." <url>

one page at a time; between pages the script waits until the server has finished the
requests still queued from the last load (a small middleware in the server process counts
them), so no page pays for the one before. The Lua hook prints the 50th, 95th and 99th latency percentiles and
counts responses that are not 2xx (wrk's own count leaves out 3xx, and a redirect to
/login would mean the session was lost). The first row, /static/style.css from the same
server, is the floor: what waitress and Flask cost before any report is computed.

The table is printed and written to <out>/admin-latency-<date>.md (--no-write: printed
only). Without wrk the script says how to install it and exits.
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import random
import re
import secrets
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import quote, unquote, urlencode

from werkzeug.wsgi import ClosingIterator

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (
    OUT_DIR,
    BenchError,
    Table,
    fmt_rate,
    fmt_seconds,
    header_markdown,
    run_cli,
    write_report,
)

VERSION = 1  # of the generated store: bump it when the generator changes, so old caches are not reused
WORKS, CHAPTERS, SITES = 20, 50, 200
STATUSES = (("new", 0.6), ("confirmed", 0.3), ("dismissed", 0.1))
DAYS = 90
INFLIGHT_PATH = "/_bench/in-flight"  # answered by the benchmark's own middleware, not by the admin
ADMIN, PASSWORD = "bench", "bench password"
#: (organisation, works, sites) in that order: the signed-in admin belongs to the first
ORGS = (("north-press", 14, 140), ("south-books", WORKS - 14, SITES - 140))
TITLES = ("山城旧事 长夜将尽 雾港来信 北风之南 青灯照雪 江湖夜雨 旧梦长安 白鹿原野 云深不知 南山有雀 "
          "孤城落日 春水东流 星河入梦 烟雨江南 大漠孤烟 寒山寺外 桃花渡口 月照西楼 剑影流年 故园无声").split()
HOSTS = "biquge xbiquge 69shu uuxs dingdian piaotian quanben shuhai wap tw".split()
HEADER = "{site} > 都市言情 > {title}最新章节列表\n天才一秒记住本站地址：www.{site}.example 最快更新！无广告！\n"
FOOTER = "\n本章未完，请点击下一页继续阅读\n手机用户请浏览 m.{site}.example 阅读，更优质的阅读体验。\n"
LUA = r"""
-- Counts responses that are not 2xx (wrk counts only >= 400) and prints the percentiles as JSON.
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) non2xx = 0 end
function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + t:get("non2xx") end
  local e = summary.errors
  io.write(string.format('FPTRACK {"requests": %d, "duration_us": %d, "p50": %.0f, "p95": %.0f, "p99": %.0f, '
    .. '"non2xx": %d, "socket_errors": %d}\n', summary.requests, summary.duration, latency:percentile(50),
    latency:percentile(95), latency:percentile(99), bad, e.connect + e.read + e.write + e.timeout))
end
"""


# ----------------------------------------------------------------------------- the store


def sentences() -> list[str]:
    """The sample novel's sentences: real Chinese prose to build chapters from."""
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "originals").glob("*.txt")))
    return [s + "。" for s in re.split(r"。\s*", text) if len(s) > 8]


def build_store(path: Path, matches: int, seed: int = 7) -> dict[str, int]:
    """Fill a new SQLite store at `path` with `matches` matches; returns counts of what it wrote."""
    from tracker.store import Chapter, CrawlRun, MatchRecord, Page, Site, Work
    from tracker.store.sqlite import SQLiteStore
    from tracker.store.values import to_text
    from web.auth.accounts import new_user

    rng = random.Random(seed)
    pool = sentences()
    store = SQLiteStore(path)
    try:
        chapters: list[list[Chapter]] = []
        for w, title in enumerate(TITLES[:WORKS]):
            store.upsert_work(Work(id=title, title=title, author=f"作者{w:02d}"))
            chapters.append([store.upsert_chapter(Chapter(
                key=f"{title}/第{n}章", work=title, title=f"第{n}章", number=n,
                text=f"第{n}章\n\n" + "\n".join(rng.sample(pool, 12))))[0] for n in range(1, CHAPTERS + 1)])
        sites = [f"{HOSTS[i % len(HOSTS)]}{i:03d}" for i in range(SITES)]
        now = datetime.now(UTC)
        for i, site in enumerate(sites):
            store.upsert_site(Site(name=site, start_urls=[f"https://www.{site}.example/"]))
            for run in range(3):
                started = now - timedelta(days=run, hours=i % 24)
                store.add_crawl_run(CrawlRun(site=site, started_at=started, finished_at=started + timedelta(minutes=9),
                                             outcome="finished", counts={"fetched": 120, "stored": 40, "skipped": 75,
                                                                         "failed": 5},
                                             skipped={"not a chapter": 75}, failed={"http 404": 5}))
        site_weights = [1 / (r + 1) for r in range(SITES)]  # a few big sites, a long tail of small ones
        work_weights = [1 / (r + 1) ** 0.5 for r in range(WORKS)]
        statuses, status_weights = zip(*STATUSES)
        made, pages, n = 0, 0, 0
        while made < matches:
            site = rng.choices(sites, site_weights)[0]
            w = rng.choices(range(WORKS), work_weights)[0]
            c = rng.randrange(CHAPTERS)
            # half the pages merge the next chapter too (never making more than `matches`)
            copied = chapters[w][c:c + (2 if rng.random() < 0.5 and made + 1 < matches else 1)]
            first = now - timedelta(seconds=rng.uniform(0, DAYS * 86400))
            last = first + (now - first) * rng.random()
            text = HEADER.format(site=site, title=TITLES[w])
            spans = []
            for ch in copied:  # a whole chapter, or a part of it (a page of a split chapter, an excerpt)
                start = 0 if rng.random() < 0.5 else rng.randrange(len(ch.text) // 2)
                end = len(ch.text) if rng.random() < 0.6 else rng.randrange(start + 20, len(ch.text) + 1)
                spans.append((ch, len(text), start, end))
                text += ch.text[start:end] + "\n"
            text += FOOTER.format(site=site)
            key = f"https://www.{site}.example/book/{w}/{n}.html"
            store.upsert_page(Page(key=key, url=key, site=site, text=text, fetched_at=last, updated_at=last))
            store.set_page_status(key, "done")
            for ch, at, start, end in spans:
                status = rng.choices(statuses, status_weights)[0]
                history = [] if status == "new" else [{"status": status, "by": ADMIN,
                                                       "at": to_text(first + (last - first) / 2)}]
                containment = (end - start) / len(ch.text)
                store.upsert_match(MatchRecord(
                    page=key, chapter=ch.key, work=ch.work, site=site, similarity=containment * 0.9,
                    containment=containment, page_share=(end - start) / len(text),
                    verdict="duplicate" if containment > 0.9 else "part" if containment > 0.3 else "excerpt",
                    scores={"simhash_distance": float(rng.randrange(12)), "minhash_jaccard": containment * 0.8,
                            "pinyin": containment, "winnow": containment},
                    spans=[{"page_start": at, "page_end": at + end - start, "original_start": start,
                            "original_end": end}],
                    status=status, first_seen=first, last_seen=last, history=history))
                made += 1
            pages += 1
            n += 1
            if rng.random() < 0.01:  # a page the engine could not use, for the failure lists
                key = f"https://www.{site}.example/book/{w}/{n}.html"
                store.upsert_page(Page(key=key, url=key, site=site, text="", fetched_at=last, updated_at=last))
                store.set_page_status(key, "failed", "no text left after removing markup, site boilerplate and ads")
                n += 1
        store.upsert_user(new_user(ADMIN, PASSWORD, "admin"))
        return {"matches": made, "pages": pages, "failed_pages": n - pages}
    finally:
        store.close()


def organise(path: Path) -> None:
    """Give the works, sites and the signed-in admin to organisations (ORGS), once: the admin
    reads every page through its organisation's view, as a rights holder does. The first
    organisation owns the most-copied works."""
    from tracker.store.sqlite import SQLiteStore
    from tracker.store.tenancy import Organisation

    store = SQLiteStore(path)
    try:
        if store.owners("user").get(ADMIN) == ORGS[0][0]:
            return
        works, sites = list(TITLES[:WORKS]), sorted(s.name for s in store.sites())
        for name, n_works, n_sites in ORGS:
            store.upsert_org(Organisation(name=name))
            for work in works[:n_works]:
                store.set_owner("work", work, name)
            for site in sites[:n_sites]:
                store.set_owner("site", site, name)
            works, sites = works[n_works:], sites[n_sites:]
        store.set_owner("user", ADMIN, ORGS[0][0])
    finally:
        store.close()


def cached_store(out: Path, matches: int, rebuild: bool = False) -> Path:
    """The store of `matches` matches under `out`, built first when it is missing."""
    path = out / f"admin-store-{matches}-v{VERSION}.sqlite3"
    if path.exists() and not rebuild:
        return path
    out.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    for p in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        p.unlink(missing_ok=True)
    print(f"building a store of {matches:,} matches in {path} (once; later runs reuse it)...", file=sys.stderr)
    t0 = time.perf_counter()
    made = build_store(partial, matches)
    partial.replace(path)  # only a finished store gets the name that is reused
    print(f"  {made['matches']:,} matches, {made['pages']:,} pages (+{made['failed_pages']:,} failed) "
          f"in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return path


def pick_targets(path: Path, matches: int) -> list[tuple[str, str]]:
    """(label, path) of the pages to load, chosen from the store's own data."""
    from tracker.store.scoped import ScopedStore
    from tracker.store.sqlite import SQLiteStore

    root = SQLiteStore(path)
    try:
        store = ScopedStore(root, ORGS[0][0])  # what the signed-in admin sees
        top_site = store.match_totals(["site"])[0]["site"]
        work = store.match_totals(["work"])[0]["work"]
        m = store.matches(limit=1)[0]
    finally:
        root.close()
    deep = min(500, max(1, math.ceil(matches / 50) // 2))  # page 500 of 2,000 at 100k matches
    return [
        ("static file (floor)", "/static/style.css"),
        ("dashboard", "/"),
        ("matches, page 1", "/matches/"),
        (f"matches, page {deep}", f"/matches/?page={deep}"),
        ("matches of one site, confirmed", f"/matches/?{urlencode({'site': top_site, 'status': 'confirmed'})}"),
        ("work report", f"/works/{quote(work)}"),
        ("match evidence", f"/matches/view?{urlencode({'page_key': m.page, 'chapter': m.chapter})}"),
        ("JSON API: matches", "/api/matches"),
        ("sites", "/sites/"),
    ]


# ----------------------------------------------------------------------------- the server


class InFlight:
    """WSGI middleware that counts the requests in progress and tells them at INFLIGHT_PATH.

    When wrk stops, waitress still runs the requests it had queued from the closed
    connections (20 dashboards are seconds of work); the next page is measured only once
    they are done, or it would pay for them."""

    def __init__(self, app):
        self.app, self.count, self.lock = app, 0, threading.Lock()

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == INFLIGHT_PATH:
            body = str(self.count).encode()
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            return [body]
        with self.lock:
            self.count += 1
        try:
            return ClosingIterator(self.app(environ, start_response), self.finished)
        except BaseException:
            self.finished()
            raise

    def finished(self) -> None:
        with self.lock:
            self.count -= 1


def serve(argv: Sequence[str]) -> int:
    """Run the admin on a store under waitress; print the port, then serve until killed."""
    p = argparse.ArgumentParser(prog="admin_latency.py _serve")
    p.add_argument("--db", required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--threads", type=int, default=8)
    args = p.parse_args(argv)
    from waitress import create_server

    from tracker.settings import Settings
    from tracker.store.sqlite import SQLiteStore
    from web import create_app

    # Settings from this mapping only: an FPT_MONGO_URL in the caller's environment must not switch stores.
    app = create_app({"SETTINGS": Settings.load({"FPT_HOME": args.home}), "STORE": SQLiteStore(args.db),
                      "SECRET_KEY": secrets.token_hex(16)})
    server = create_server(InFlight(app), host="127.0.0.1", port=0, threads=args.threads)
    print(f"port {server.effective_port}", flush=True)
    server.run()
    return 0


class Server:
    """The admin in a child process, stopped on exit."""

    def __init__(self, db: Path, threads: int, log: Path):
        self.log = log
        self.home = tempfile.TemporaryDirectory(prefix="fpt-bench-home-")
        with open(log, "w", encoding="utf-8") as err:
            self.proc = subprocess.Popen(
                [sys.executable, __file__, "_serve", "--db", str(db), "--home", self.home.name,
                 "--threads", str(threads)], stdout=subprocess.PIPE, stderr=err, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("port "):
            self.stop()
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise BenchError(f"the admin did not start (its log, {log}, ends with):\n{tail}")
        self.port = int(line.split()[1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.home.cleanup()


def request(port: int, method: str, path: str, *, cookie: str = "", body: str | None = None,
            timeout: float = 120) -> tuple[int, http.client.HTTPMessage, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Cookie": cookie} if cookie else {}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.headers, r.read()
    finally:
        conn.close()


def session_cookie(headers: http.client.HTTPMessage, name: str = "fptrack_session") -> str:
    jar = SimpleCookie()
    for h in headers.get_all("Set-Cookie") or []:
        jar.load(h)
    return f"{name}={jar[name].value}" if name in jar else ""


def sign_in(port: int) -> str:
    """The session cookie of a real sign-in through the form, with its CSRF token."""
    status, headers, html = request(port, "GET", "/login")
    token = re.search(rb'name="csrf_token" value="([^"]+)"', html)
    if status != 200 or not token:
        raise BenchError(f"GET /login answered {status} without a CSRF token")
    status, headers, _ = request(port, "POST", "/login", cookie=session_cookie(headers), body=urlencode(
        {"name": ADMIN, "password": PASSWORD, "csrf_token": token.group(1).decode()}))
    cookie = session_cookie(headers)
    if status != 302 or not cookie:
        raise BenchError(f"signing in as {ADMIN!r} answered {status}, not a redirect with a session")
    return cookie


def drain(port: int, limit: float = 600) -> None:
    """Wait until the server has finished every request it took (the last load's backlog)."""
    deadline = time.monotonic() + limit
    while True:
        status, _, body = request(port, "GET", INFLIGHT_PATH)
        if status == 200 and body.strip() == b"0":
            return
        if time.monotonic() > deadline:
            raise BenchError(f"the server still had {body.decode()} requests in progress after {limit:.0f} s")
        time.sleep(0.1)


def alone(port: int, path: str, cookie: str, times: int = 3) -> float:
    """The median time of `times` requests one after another (after one to warm caches); each must be 200."""
    samples = []
    for i in range(times + 1):
        t0 = time.perf_counter()
        status, _, _ = request(port, "GET", path, cookie=cookie)
        if status != 200:
            raise BenchError(f"GET {path} answered {status}, not 200; the benchmark would measure an error page")
        if i:
            samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


# ----------------------------------------------------------------------------- wrk


@dataclass
class Load:
    requests: int
    seconds: float
    p50: float  # seconds
    p95: float
    p99: float
    non2xx: int
    socket_errors: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def parse_wrk(output: str) -> Load:
    """The hook's JSON line in wrk's output."""
    m = re.search(r"^FPTRACK (\{.*\})$", output, re.M)
    if not m:
        raise BenchError(f"wrk printed no result line; its output was:\n{output[-2000:]}")
    d = json.loads(m.group(1))
    return Load(requests=d["requests"], seconds=d["duration_us"] / 1e6, p50=d["p50"] / 1e6, p95=d["p95"] / 1e6,
                p99=d["p99"] / 1e6, non2xx=d["non2xx"], socket_errors=d["socket_errors"])


def run_wrk(wrk: str, url: str, cookie: str, hook: Path, *, duration: int, connections: int, threads: int) -> Load:
    cmd = [wrk, "-t", str(min(threads, connections)), "-c", str(connections), "-d", f"{duration}s", "--latency",
           "--timeout", "30s", "-s", str(hook), "-H", f"Cookie: {cookie}", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120)
    if done.returncode != 0:
        raise BenchError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return parse_wrk(done.stdout)


def wrk_version(wrk: str) -> str:
    """"wrk debian/4.1.0-3+b2 [epoll]" from the banner `wrk --version` prints (with a usage text)."""
    out = subprocess.run([wrk, "--version"], capture_output=True, text=True).stdout
    return out.split(" Copyright")[0].strip() or "unknown"


# ----------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matches", type=int, default=1_000_000, help="matches in the store (default 1000000)")
    p.add_argument("--duration", type=int, default=15, help="seconds of load per page (default 15)")
    p.add_argument("--connections", type=int, default=20, help="concurrent clients (default 20)")
    p.add_argument("--threads", type=int, default=8, help="waitress worker threads (default 8)")
    p.add_argument("--wrk", default="wrk", help="the wrk program (default: wrk on PATH)")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="where the store is cached and the table written")
    p.add_argument("--rebuild", action="store_true", help="build the store again even when it is cached")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    for name in ("matches", "duration", "connections", "threads"):
        if getattr(args, name) < 1:
            raise BenchError(f"--{name} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_serve"]:
        return serve(argv[1:])
    args = parse_args(argv)
    wrk = shutil.which(args.wrk)
    if wrk is None:
        raise BenchError(f"wrk was not found ({args.wrk!r}): install it (apt-get install wrk) or pass --wrk PATH")
    db = cached_store(args.out, args.matches, args.rebuild)
    organise(db)
    targets = pick_targets(db, args.matches)
    table = Table(f"Admin latency, {args.matches:,} matches, {args.connections} clients, {args.duration} s per page",
                  ["page", "path", "alone", "requests", "requests/s", "p50", "p95", "p99", "non-2xx",
                   "socket errors"])
    with tempfile.TemporaryDirectory(prefix="fpt-bench-") as tmp:
        hook = Path(tmp) / "hook.lua"
        hook.write_text(LUA, encoding="utf-8")
        server = Server(db, args.threads, Path(tmp) / "server.log")
        try:
            cookie = sign_in(server.port)
            for label, path in targets:
                drain(server.port)
                single = alone(server.port, path, cookie)
                print(f"  {label}: {unquote(path)}", file=sys.stderr)
                load = run_wrk(wrk, f"http://127.0.0.1:{server.port}{path}", cookie, hook, duration=args.duration,
                               connections=args.connections, threads=4)
                table.add(label, f"`{unquote(path)}`", fmt_seconds(single), f"{load.requests:,}",
                          fmt_rate(load.rate, 1), fmt_seconds(load.p50), fmt_seconds(load.p95), fmt_seconds(load.p99),
                          load.non2xx, load.socket_errors)
        finally:
            server.stop()
    table.notes += [
        f"Each page: wrk with {min(4, args.connections)} threads and {args.connections} connections for "
        f"{args.duration} s, keep-alive, signed in with one session cookie; the server is waitress "
        f"({args.threads} threads) in one Python process on the embedded SQLite store, on the same machine as wrk.",
        "\"alone\" is the median of three requests one after another, before the load. The static file is the "
        "floor: what the server and Flask cost with no report to compute. A slow page completes few requests in "
        "the window (the requests column): its p95 and p99 rest on few samples.",
    ]
    report = "\n\n".join([
        header_markdown("Admin latency", libraries=("flask", "waitress"),
                        extra=[("store", f"{db.name}: {WORKS} works x {CHAPTERS} chapters, {SITES} sites, "
                                         f"{args.matches:,} matches"),
                               ("wrk", wrk_version(wrk))]),
        table.markdown(),
    ])
    print(table.markdown())
    if not args.no_write:
        print(f"\nwrote {write_report('admin-latency', report, args.out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
