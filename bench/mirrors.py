"""Mirror benchmark: page processing with and without the "seen this text before?" gate (tracker.seen)
on a crawl where half the pages are mirrors.

    .venv/bin/python bench/mirrors.py [--chapters N] [--negatives M] [--mirrors S] [--repeat R]
                                      [--corpus PATH | --folder DIR] [--seed X] [--out DIR] [--no-write]

Chapters: the first N chapters of 西游记, 红楼梦, 三国演义 and 水浒传 (zh_novels/, cut with
fingerprint.chapters.split_chapters), registered as originals, and M more that are not (their
pages must match nothing); or, with --folder, the chapter files of one folder. Every chapter is
served twice: once on a first pirate site and once on one of S mirror sites (web.demo.site
build_site: each site its own name, domain and watermarks, its own encodings and layout for a
chapter, traditional script on its Big5 pages), so half the pages are mirrors. No server is
started: each page's HTML is decoded with its real encoding and its text extracted two ways,

    crawl    pagetext.extraction.page.extract(html, url), as the crawler extracts
    ingest   pagetext.html.html_to_text(html), as `fptrack ingest` reads saved pages

(the ingest text keeps the site's watermark lines, which normalisation removes). The pages are
stored in a shuffled order (mirrors come before their first copy as often as after) and each
is processed with tracker.pipeline.process_page, on a copy of one store holding the registered
chapters, with the in-process index; once all of them (mirrors: half), once the first site's
alone (mirrors: none, what the gate costs where it never helps):

    every page judged    FPT_SEEN_TEXTS=0: every page normalised, matched and verified
    with the gate        FPT_SEEN_TEXTS=1: a page whose text was judged before gets that judgement

Columns: "mirror keys equal" is the share of mirror pairs whose two texts have the same exact
key (fingerprint.textkeys), "texts equal" the share whose extracted texts are identical;
pages/s is processing only (best of --repeat runs, the two taking turns), and pages per CPU
second the same work over this process's CPU time (steadier on a machine others share);
"by lookup" the pages the gate served; "same matches" compares, page by page, the set of
(chapter, verdict) of both runs, and "same scores and spans" every match's scores and spans.

The table is printed and written to bench/out/mirrors-<date>.md (--no-write: printed only).
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (
    NOVELS_DIR,
    BenchError,
    Table,
    corpus_candidates,
    corpus_path,
    header_markdown,
    run_cli,
    write_report,
)

NOVELS = ("xiyouji", "hongloumeng", "sanguoyanyi", "shuihuzhuan")
FIRST = ("笔趣阁", "www.xbiquge-fake.com")
MIRRORS = [("顶点小说", "www.dingdian-fake.net"), ("书趣阁", "m.shuquge-fake.cc"), ("八一中文网", "www.81zw-fake.org"),
           ("新笔趣阁", "www.xbqg-fake.la"), ("飘天文学", "www.ptwx-fake.info"), ("全本小说网", "quanben-fake.xyz")]
PEERS = ("every page judged", "with the gate")


@dataclass
class SitePage:
    url: str
    site: str
    chapter: int  # index into the chapters
    html: str
    whole: bool  # the whole chapter (a site serves one of its chapters split over two pages)


def corpus_chapters(corpus: Path, n: int) -> list[tuple[str, str]]:
    """(title, text) of the first chapters of NOVELS, taken in turn, `n` of them."""
    from bench.common import load_chapters

    per = {novel: [c for c in load_chapters(corpus, folder=NOVELS_DIR, novels=[novel]) if len(c.text) > 500]
           for novel in NOVELS}
    out: list[tuple[str, str]] = []
    for i in range(max(len(v) for v in per.values())):
        for novel in NOVELS:
            if i < len(per[novel]) and len(out) < n:
                out.append((f"{novel} {i + 1}", per[novel][i].text))
    if len(out) < n:
        raise BenchError(f"the corpus has {len(out)} chapters of {', '.join(NOVELS)}, fewer than {n}")
    return out


def site_pages(chapters: list[tuple[str, str]], mirrors: int) -> list[SitePage]:
    """Every chapter on the first site, and each once more on one of `mirrors` mirror sites (chapter i on
    mirror i mod S), each site serving its chapters in its own order so that a chapter's encoding and
    layout differ between its two pages."""
    from web.demo.build import build_site

    if not 1 <= mirrors <= len(MIRRORS):
        raise BenchError(f"--mirrors must be 1 to {len(MIRRORS)}, got {mirrors}")
    served = [(FIRST, list(range(len(chapters))))]
    served += [(MIRRORS[s], [i for i in range(len(chapters)) if i % mirrors == s]) for s in range(mirrors)]
    pages = []
    for k, ((name, domain), indexes) in enumerate(served):
        order = indexes[k:] + indexes[:k]  # site k serves chapter order[j] as its j-th
        site = build_site([chapters[i] for i in order], site_name=name, domain=domain, seed=k, huge_bytes=0,
                          slow_delay=0.0)
        for path, r in site.items():
            if r.kind in ("chapter", "part") and r.copies is not None and path.count("/") == 3:
                i = order[r.copies]
                whole = len(r.text) > 0.9 * len("".join(chapters[i][1].split()))
                pages.append(SitePage(f"https://{domain}{path}", domain, i, r.body.decode(r.encoding), whole))
    return pages


def extract(pages: list[SitePage], how: str) -> dict[str, str]:
    if how == "crawl":
        from pagetext.extraction.page import extract as page_text

        return {p.url: page_text(p.html, p.url).text for p in pages}
    from pagetext.html import html_to_text

    return {p.url: html_to_text(p.html)[0] for p in pages}


def mirror_pairs(pages: list[SitePage]) -> list[tuple[str, str]]:
    """The pairs of pages that serve one whole chapter on two sites."""
    by_chapter: dict[int, list[str]] = {}
    for p in pages:
        if p.whole:
            by_chapter.setdefault(p.chapter, []).append(p.url)
    return [(urls[0], u) for urls in by_chapter.values() for u in urls[1:]]


def register(home: Path, chapters: list[tuple[str, str]], folder: Path) -> None:
    from tracker.context import Context
    from tracker.registry import register_work
    from tracker.settings import Settings

    folder.mkdir()
    for i, (_, text) in enumerate(chapters):
        (folder / f"{i + 1:04d}.txt").write_text(text, encoding="utf-8")
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    try:
        register_work(ctx, "registered", folder)
    finally:
        ctx.close()


def run(template: Path, home: Path, gate: bool, pages: list[SitePage], texts: dict[str, str]):
    """Process the pages on a copy of the template store; (seconds, CPU seconds, pages served by lookup,
    matches)."""
    from tracker.context import Context
    from tracker.pipeline import process_page
    from tracker.settings import Settings
    from tracker.store import Page

    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home)
    ctx = Context(Settings.load({"FPT_HOME": str(home), "FPT_SEEN_TEXTS": "1" if gate else "0"}))
    try:
        for p in pages:
            ctx.store.upsert_page(Page(key=p.url, text=texts[p.url], url=p.url, site=p.site))
        ctx.catalog_judged()  # the index is loaded, and the filter opened, before the clock starts
        _ = ctx.seen
        started, cpu = time.perf_counter(), time.process_time()
        done = [process_page(ctx, p.url) for p in pages]
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        failed = [d.page for d in done if d.status != "done"]
        if failed:
            raise BenchError(f"{len(failed)} pages failed, e.g. {failed[0]}")
        matches = {p.url: {} for p in pages}
        for m in ctx.store.matches():
            matches[m.page][m.chapter] = (m.verdict, m.similarity, m.containment, m.page_share,
                                          sorted(m.scores.items()), m.spans)
        return seconds, cpu, sum(d.looked_up for d in done), matches
    finally:
        ctx.close()


def compare(template: Path, home: Path, pages: list[SitePage], texts: dict[str, str], repeat: int):
    """Both peers on the same pages, taking turns: {peer: (best seconds, best CPU seconds, served,
    matches)}."""
    best: dict[str, tuple[float, float]] = {}
    results = {}
    run(template, home, False, pages[:5], texts)  # the first run of a process loads the engine's tables
    for r in range(repeat):
        for peer in (PEERS if r % 2 == 0 else PEERS[::-1]):
            seconds, cpu, served, matches = run(template, home, peer == PEERS[1], pages, texts)
            was = best.get(peer, (seconds, cpu))
            best[peer] = (min(was[0], seconds), min(was[1], cpu))
            results[peer] = (*best[peer], served, matches)
    return results


def bench(chapters: list[tuple[str, str]], registered: int, mirrors: int, repeat: int, seed: int) -> Table:
    pages = site_pages(chapters, mirrors)
    random.Random(seed).shuffle(pages)
    pairs = mirror_pairs(pages)
    first_site = [p for p in pages if p.site == FIRST[1]]
    table = Table("Page processing with and without the gate",
                  ["extraction", "mirrors", "pages", "mirror keys equal", "texts equal", "peer", "pages/s",
                   "pages per CPU second", "by lookup", "same matches", "same scores and spans"])
    from fingerprint.textkeys import exact_key

    with tempfile.TemporaryDirectory(prefix="fpt-mirrors-") as tmp:
        tmp_path = Path(tmp)
        template = tmp_path / "template"
        register(template, chapters[:registered], tmp_path / "originals")
        for how in ("crawl", "ingest"):
            texts = extract(pages, how)
            keys = {u: exact_key(t) for u, t in texts.items()}
            same_key = f"{sum(keys[a] == keys[b] for a, b in pairs) / len(pairs):.3f}"
            same_text = f"{sum(texts[a] == texts[b] for a, b in pairs) / len(pairs):.3f}"
            for share, some, equal in (("half", pages, (same_key, same_text)), ("none", first_site, ("–", "–"))):
                results = compare(template, tmp_path / "home", some, texts, repeat)
                judged, gated = results[PEERS[0]][3], results[PEERS[1]][3]
                same = all({(c, v[0]) for c, v in judged[u].items()} == {(c, v[0]) for c, v in gated[u].items()}
                           for u in judged)
                for peer in PEERS:
                    seconds, cpu, served, _ = results[peer]
                    table.add(how, share, len(some), *equal, peer, f"{len(some) / seconds:.1f}",
                              f"{len(some) / cpu:.1f}", served,
                              "–" if peer == PEERS[0] else ("yes" if same else "NO"),
                              "–" if peer == PEERS[0] else ("yes" if judged == gated else "NO"))
                if share == "half":
                    found = sum(1 for u in judged for v in judged[u].values() if v[0] != "different")
                    distinct = len({keys[p.url] for p in pages})
                    table.notes.append(f"{how}: {found} matches in all; {distinct} distinct exact keys among "
                                       f"{len(pages)} pages.")
    table.notes.append(f"{len(chapters)} chapters ({registered} registered, {len(chapters) - registered} not), each on "
                       f"the first site and on one of {mirrors} mirror sites (mirrors: half); the first site's pages "
                       f"alone (mirrors: none); best of {repeat} runs per peer.")
    return table


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bench/mirrors.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapters", type=int, default=100, help="registered chapters (default 100)")
    ap.add_argument("--negatives", type=int, default=50, help="chapters served but not registered (default 50)")
    ap.add_argument("--mirrors", type=int, default=4, help=f"mirror sites, 1 to {len(MIRRORS)} (default 4)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per peer, the best is kept (default 2)")
    ap.add_argument("--seed", type=int, default=1, help="the order pages are processed in")
    ap.add_argument("--corpus", help="the corpus folder (default: $FPT_SHARED/corpus or ../shared/corpus)")
    ap.add_argument("--folder", help="use the chapter .txt files of this folder instead of the corpus")
    ap.add_argument("--out", default=None, help="folder for the report (default bench/out)")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.chapters < 1 or args.negatives < 0 or args.repeat < 1:
        raise BenchError("--chapters and --repeat must be at least 1, --negatives at least 0")
    if args.folder:
        from web.demo.chapters import chapters_from_folder

        try:
            chapters = chapters_from_folder(args.folder)
        except ValueError as e:
            raise BenchError(str(e)) from None
        registered = min(args.chapters, max(1, len(chapters) - args.negatives))
        chapters = chapters[: registered + args.negatives]
        source = f"the chapter files of {args.folder}"
    else:
        if not args.corpus and not any((p / NOVELS_DIR).is_dir() for p in corpus_candidates()):
            where = ", ".join(str(p) for p in corpus_candidates())
            print(f"skipped: the shared corpus is not at {where}; check out ../shared, set FPT_SHARED, "
                  "pass --corpus PATH, or run on a folder of chapters with --folder samples/originals",
                  file=sys.stderr)
            return 0
        corpus = corpus_path(args.corpus)
        chapters = corpus_chapters(corpus, args.chapters + args.negatives)
        registered = args.chapters
        source = f"{', '.join(NOVELS)} from {corpus}"
    started = time.perf_counter()
    table = bench(chapters, registered, args.mirrors, args.repeat, args.seed)
    header = header_markdown("Mirror benchmark", ["lxml", "trafilatura"], [("chapters", source)])
    text = header + "\n\n" + table.markdown() + f"\n\nTotal benchmark time: {time.perf_counter() - started:.0f} s."
    print(text)
    if not args.no_write:
        path = write_report("mirrors", text, Path(args.out) if args.out else None)
        print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
