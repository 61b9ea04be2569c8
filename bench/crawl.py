"""Crawl speed on the local sample pirate site, next to a bare Scrapy spider on the same site.

    .venv/bin/python bench/crawl.py [--chapters 400] [--concurrency 16] [--repeat 5] [--corpus PATH] [--no-write]

The site (web.demo) is built from real chapters (西游记 and 红楼梦 from
zh_novels, split with fingerprint.chapters) and served on 127.0.0.1; every chapter page
carries site chrome, ads and watermarks, encodings rotate (GBK, UTF-8, mislabelled GBK,
Big5, no label) and one chapter is split over two pages.

Rows, each a whole crawl of the same site in a fresh process (one run each, in turn):
- fptrack crawler: `python -m crawler URL --no-process`: fetch, fix the encoding, extract
  the main text, join split chapters, store every page in the embedded store;
- the same crawl with matching (`fptrack crawl` as users run it, the registered originals
  being the chapters the site copies);
- peer: a bare Scrapy spider with the same politeness settings that only follows links
  (LinkExtractor) and decodes each page: the cost of crawling with nothing else done. It has
  no trap handling, so it would follow the session-id and calendar links for ever; it is
  stopped after as many pages as the fptrack crawl fetched (CLOSESPIDER_PAGECOUNT).

- rendered: a site of the same chapters whose text a script writes (tests/crawler/render_site.py:
  half from an escaped JS string, half fetched as JSON after load), every page rendered in the
  system's chromium through scrapy-playwright, with the peak memory (PSS) of the processes the
  crawl started (chromium's and Playwright's driver); next to it the same chapters served as
  static pages, which start no browser.

pages/s counts responses (chapter pages, catalogue, special pages). The table goes to
stdout and to bench/out/crawl-<date>.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BenchError, corpus_path, run_cli

PEER = '''
import sys, scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor

class Bare(scrapy.Spider):
    name = "bare"
    start_urls = [sys.argv[1]]
    allowed_domains = ["127.0.0.1"]
    links = LinkExtractor()
    def parse(self, response):
        if not hasattr(response, "text"):
            return
        response.text  # decode, as any crawler must
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url)

p = CrawlerProcess({"LOG_LEVEL": "ERROR", "CLOSESPIDER_PAGECOUNT": int(sys.argv[3]), "ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS_PER_DOMAIN": int(sys.argv[2]),
                    "CONCURRENT_REQUESTS": int(sys.argv[2]), "DOWNLOAD_DELAY": 0, "DEPTH_LIMIT": 3,
                    "TELNETCONSOLE_ENABLED": False, "REMOTE_CONTROL_ENABLED": False, "DOWNLOAD_MAXSIZE": 4194304,
                    "DOWNLOAD_TIMEOUT": 1, "RETRY_TIMES": 0, "AUTOTHROTTLE_ENABLED": True,
                    "AUTOTHROTTLE_TARGET_CONCURRENCY": 2.0, "AUTOTHROTTLE_START_DELAY": 0.01})
crawler = p.create_crawler(Bare)
p.crawl(crawler)
p.start()
print(crawler.stats.get_value("response_received_count", 0))
'''


def chapters(corpus: Path, n: int) -> list[tuple[str, str]]:
    from fingerprint.chapters import split_chapters

    out: list[tuple[str, str]] = []
    for name in ("xiyouji.txt", "hongloumeng.txt", "sanguoyanyi.txt", "shuihuzhuan.txt"):
        text = (corpus / "zh_novels" / name).read_text(encoding="utf-8")
        out += [(c.heading or f"第{c.number}回", c.text) for c in split_chapters(text) if c.number]
    return out[:n]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise BenchError(f"{' '.join(cmd[:4])} failed: {r.stderr.strip()[-800:]}")
    return seconds, r.stdout


def _children(pid: int) -> list[int]:
    """Every descendant of process `pid`, from /proc."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        todo += kids
    return found


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def timed_with_memory(cmd: list[str], env: dict[str, str]) -> tuple[float, str, float]:
    """(seconds, stdout, peak MiB of the command's child processes: the browser and its driver)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    peak = 0
    import threading

    out: dict[str, str] = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"), proc.communicate())))
    reader.start()
    while proc.poll() is None:
        peak = max(peak, sum(_pss_kib(c) for c in _children(proc.pid)))
        time.sleep(0.2)
    reader.join()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(cmd[:4])} failed: {out.get('stderr', '').strip()[-800:]}")
    return seconds, out.get("stdout", ""), peak / 1024


def render_rows(chs: list[tuple[str, str]], concurrency: int, base_env: dict[str, str], tmp: str) -> list[tuple]:
    """A crawl of pages rendered in chromium, and of the same chapters as static pages."""
    from crawler.render import chromium_path
    from tests.crawler.render_site import RenderSite

    if chromium_path() is None:
        print("rendered rows skipped: chromium is not installed (scripts/system-deps bench)", file=sys.stderr)
        return []
    rows = []
    for kinds, name in ((("script", "ajax"), "rendered in chromium (scripted and AJAX chapter pages)"),
                        (("static",), "the same chapters as static pages (no browser)")):
        with RenderSite(chs, kinds=kinds) as site:
            cmd = [sys.executable, "-m", "crawler", site.url + "/", "--delay", "0", "--concurrency", str(concurrency),
                   "--depth", "2", "--timeout", "20", "--retries", "0", "--format", "jsonl", "-q", "--no-process"]
            env = {**base_env, "FPT_HOME": f"{tmp}/render-{kinds[0]}"}
            seconds, out, peak = timed_with_memory(cmd, env)
            r = json.loads(out)
            rows.append((f"{name}; peak memory of the processes it started (browser, driver, extraction "
                         f"workers) {peak:.0f} MiB", r["fetched"], r["chapters"],
                         seconds))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapters", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--corpus")
    ap.add_argument("--rendered", type=int, default=40, help="chapters of the rendered site (0: no rendered rows)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of the two compared crawls (medians reported)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from web.demo.server import SampleSite

    chs = chapters(corpus_path(args.corpus), args.chapters)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp, SampleSite(chs, slow_delay=2.0, huge_bytes=3_000_000) as site:
        url = site.url + "/"
        crawl = [sys.executable, "-m", "crawler", url, "--delay", "0", "--concurrency", str(args.concurrency),
                 "--depth", "3", "--timeout", "1", "--retries", "0", "--format", "jsonl", "-q"]
        # The two crawls compared are run in turn, --repeat times each, and their medians reported:
        # one run of a 3-second crawl on a 2-core machine varies by a fifth.
        own, peer = [], []
        for k in range(args.repeat):
            env = {**base_env, "FPT_HOME": f"{tmp}/store-{k}"}
            seconds, out = timed([*crawl, "--no-process"], env)
            r = json.loads(out)
            own.append((seconds, r["fetched"], r["chapters"]))
            seconds, out = timed([sys.executable, "-c", PEER, url, str(args.concurrency), str(r["fetched"])], base_env)
            peer.append((seconds, int(out.strip() or 0)))
        seconds, fetched, chapter_pages = sorted(own)[len(own) // 2]
        rows.append((f"fptrack crawler (fetch, extract, join, store), median of {args.repeat}", fetched, chapter_pages,
                     seconds))

        env2 = {**base_env, "FPT_HOME": f"{tmp}/matched"}
        book = Path(tmp) / "originals.txt"
        book.write_text("\n".join(text for _, text in chs), encoding="utf-8")
        subprocess.run([sys.executable, "-m", "fptrack", "add-work", "originals", str(book), "-q"], env=env2,
                       check=True, cwd=ROOT, capture_output=True)
        seconds, out = timed(crawl, env2)
        r = json.loads(out)
        rows.append((f"fptrack crawl, matched in-process ({r['matched']} matched)", r["fetched"], r["chapters"],
                     seconds))

        seconds, fetched = sorted(peer)[len(peer) // 2]
        rows.append((f"peer: bare Scrapy spider (fetch, decode, follow links), median of {args.repeat}", fetched, None,
                     seconds))
        if args.rendered:
            rows += render_rows(chs[: args.rendered], args.concurrency, base_env, tmp)

    lines = [f"Sample site of {len(chs)} real chapters on 127.0.0.1, concurrency {args.concurrency}, "
             f"depth 3; {time.strftime('%Y-%m-%d')}", "",
             "| crawl | pages fetched | chapter pages | seconds | pages/s |", "|---|---:|---:|---:|---:|"]
    for name, pages, chapter_pages, seconds in rows:
        lines.append(f"| {name} | {pages} | {'' if chapter_pages is None else chapter_pages} | {seconds:.1f} | "
                     f"{pages / seconds:.0f} |")
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        out_dir = ROOT / "bench" / "out"
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"crawl-{time.strftime('%Y-%m-%d')}.md").write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    run_cli(main)
