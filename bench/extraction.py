"""Extraction benchmark: how much of each chapter the extractors recover from pirate pages.

    .venv/bin/python bench/extraction.py [--corpus PATH | --folder DIR | --real DIR] [--limit N] [--repeat R]
                                         [--out DIR] [--no-write]

--real DIR scores saved pages of real sites against hand-written gold text instead
(DIR/<site>/<name>.html and <name>.gold.txt; see bench/real_pages.py): precision, recall
and F1 on bags of characters, per site and per language, for the three extractors.

Chapters: 西游记 and 红楼梦 from zh_novels/ and every edition in zh_novels_alt/ (real web
copies with their own noise), cut with fingerprint.chapters.split_chapters; or, with --folder,
the chapter .txt files of one folder (e.g. samples/originals). Each novel becomes one sample
site (web.demo.build.build_site): its chapter pages rotate over GBK, UTF-8, mislabelled
GBK, Big5 and unlabelled GBK, <br> and <p> layouts; one chapter is split over two pages, one
has broken HTML; all carry navigation, ads, scripts and watermark lines. No server is
started: every chapter page is decoded with its real encoding and given to

    pagetext.extraction.page        extract(html, url): density, then site-line removal
    trafilatura            trafilatura.extract(html, favor_recall=True)
    pagetext.html       html_to_text(html): trafilatura backed by an lxml block walk

A second table reads the hidden-junk layout (tests/crawler/render_site.hidden_page): the same
chapters with a junk character after every fourth character, hidden by the page's CSS one way
per page (class rule, inline style, visibility, font-size, hidden attribute, font shorthand,
overridden rules); there recall and boilerplate say whether the hidden junk was dropped.

Recall is the share of the character 5-grams (whitespace removed) of the chapter text the page
carries that are in the extracted text; boilerplate is the share of the extracted 5-grams that
are in neither that text nor the chapter title. "site text" counts pages whose extraction
still holds one of web.demo.pages.CHROME_MARKERS. Times are the best of --repeat passes
over all pages, the extractors taking turns.

The table is printed and written to bench/out/extraction-<date>.md (--no-write: printed only).
Without the corpus (../shared/corpus, $FPT_SHARED/corpus or --corpus) the script says so and
exits; --folder needs no corpus.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (
    NOVELS_DIR,
    BenchError,
    Table,
    best_of_interleaved,
    corpus_candidates,
    corpus_path,
    header_markdown,
    run_cli,
    write_report,
)

NOVELS = ("xiyouji", "hongloumeng")
ALT_DIR = "zh_novels_alt"
LOW_RECALL = 0.9
BASE = "http://127.0.0.1:8000"


@dataclass
class SitePage:
    """One chapter page of a sample site, decoded, and the chapter text it carries."""

    novel: str
    path: str
    html: str
    title: str
    text: str
    variant: str


@dataclass
class Score:
    recall: float
    boilerplate: float
    chrome: bool


def grams(text: str, k: int = 5) -> set[str]:
    """Character k-grams of `text` with all whitespace removed."""
    s = re.sub(r"\s+", "", text)
    if len(s) < k:
        return {s} if s else set()
    return {s[i : i + k] for i in range(len(s) - k + 1)}


def score(extracted: str, page: SitePage, markers: Sequence[str]) -> Score:
    want = grams(page.text)
    got = grams(extracted)
    allowed = want | grams(page.title)
    recall = len(want & got) / len(want) if want else 1.0
    boilerplate = len(got - allowed) / len(got) if got else 0.0
    return Score(recall, boilerplate, any(m in extracted for m in markers))


# ----------------------------------------------------------------------------- pages


def novel_chapters(corpus: Path, limit: int | None) -> dict[str, list[tuple[str, str]]]:
    """(heading, body) chapters of the benchmark's novels, keyed by novel."""
    from fingerprint.chapters import split_chapters

    files = [corpus / NOVELS_DIR / f"{n}.txt" for n in NOVELS]
    files += sorted((corpus / ALT_DIR).glob("*.txt"))
    out: dict[str, list[tuple[str, str]]] = {}
    for f in files:
        if not f.is_file():
            raise BenchError(f"{f} is missing from the corpus")
        chapters = [(c.heading or f.stem, c.body.strip()) for c in split_chapters(f.read_text(encoding="utf-8"))]
        chapters = [(t, b) for t, b in chapters if len(b) >= 50]
        out[f.stem] = chapters[:limit] if limit else chapters
    return out


def site_pages(books: dict[str, list[tuple[str, str]]]) -> list[SitePage]:
    """Every chapter page (and part page) of one sample site per novel."""
    from web.demo.build import build_site

    pages = []
    for novel, chapters in books.items():
        site = build_site(chapters, book=novel, huge_bytes=0, slow_delay=0.0)
        for path, r in site.items():
            if r.kind in ("chapter", "part") and r.copies is not None:
                pages.append(SitePage(novel, path, r.body.decode(r.encoding), chapters[r.copies][0], r.text, r.variant))
    return pages


# ----------------------------------------------------------------------------- extractors


def extractors() -> dict[str, Callable[[SitePage], str]]:
    from pagetext.extraction.page import extract
    from pagetext.html import html_to_text

    try:
        import trafilatura
    except ImportError as e:
        raise BenchError(f"trafilatura is not importable ({e}); pip install -e '.[test]'") from None

    return {
        "pagetext.extraction.page": lambda p: extract(p.html, BASE + p.path).text,
        "trafilatura (favor_recall)": lambda p: trafilatura.extract(p.html, favor_recall=True) or "",
        "pagetext.html.html_to_text": lambda p: html_to_text(p.html)[0],
    }


def chrome_markers() -> list[str]:
    """The site's chrome strings, in simplified and traditional script (for the Big5 pages)."""
    from web.demo.pages import CHROME_MARKERS, _s2t

    return sorted({*CHROME_MARKERS, *(_s2t().convert(m) for m in CHROME_MARKERS)})


def hidden_junk_pages(books: dict[str, list[tuple[str, str]]], per_novel: int = 20) -> list[SitePage]:
    """The first `per_novel` chapters of each novel, once per way of hiding junk characters with CSS."""
    from tests.crawler.render_site import HIDING, hidden_page

    pages = []
    for novel, chapters in books.items():
        for n, (title, text) in enumerate(chapters[:per_novel], 1):
            for way in HIDING:
                pages.append(SitePage(novel, f"/hidden/{way}/{n}.html", hidden_page(title, text, way, seed=n), title,
                                      text, way))
    return pages


def bench_extraction(pages: Sequence[SitePage], repeat: int = 1, budget: float | None = None, *,
                     what: str = "pirate chapter pages", note: str = "") -> Table:
    """Time every extractor over all pages and score what each recovered."""
    fns = extractors()
    results: dict[str, list[str]] = {}

    def run(name: str, fn: Callable[[SitePage], str]) -> Callable[[], list[str]]:
        def go() -> list[str]:
            out = [fn(p) for p in pages]
            results[name] = out
            return out

        return go

    timings = best_of_interleaved({name: run(name, fn) for name, fn in fns.items()}, repeat, budget=budget)
    markers = chrome_markers()
    table = Table(
        f"Main-text extraction: {len(pages)} {what} of {len({p.novel for p in pages})} novels",
        ["extractor", "pages/s", "recall (mean)", "recall (min)", "boilerplate (mean)",
         f"pages recall < {LOW_RECALL}", "pages with site text"],
    )
    worst: dict[str, str] = {}
    for name in fns:
        scores = [score(text, p, markers) for text, p in zip(results[name], pages)]
        recalls = [s.recall for s in scores]
        low = [p for p, s in zip(pages, scores) if s.recall < LOW_RECALL]
        table.add(
            name,
            f"{len(pages) / timings[name].best:,.0f}",
            f"{sum(recalls) / len(recalls):.4f}",
            f"{min(recalls):.4f}",
            f"{sum(s.boilerplate for s in scores) / len(scores):.4f}",
            len(low),
            sum(s.chrome for s in scores),
        )
        if low:
            worst[name] = ", ".join(f"{p.novel}{p.path} ({p.variant})" for p in low[:4])
    variants = sorted({p.variant for p in pages})
    table.notes.append(note or (
        f"Pages: every chapter page of one sample site per novel ({', '.join(variants)} encodings; one chapter "
        "split over two pages, one with broken HTML), decoded with its real encoding. Recall: share of the "
        "chapter text's character 5-grams recovered; boilerplate: share of the extracted 5-grams in neither "
        "the chapter text nor its title."
    ))
    for name, listed in worst.items():
        table.notes.append(f"{name}, recall < {LOW_RECALL}: {listed}{' …' if listed.count(',') >= 3 else ''}.")
    return table


# ----------------------------------------------------------------------------- real pages


def real_extractors() -> dict[str, Callable[[str], str]]:
    """The three extractors on a page's HTML alone (saved pages carry no URL worth a rule)."""
    from pagetext.extraction.page import extract
    from pagetext.html import html_to_text

    try:
        import trafilatura
    except ImportError as e:
        raise BenchError(f"trafilatura is not importable ({e}); pip install -e '.[test]'") from None

    return {
        "pagetext.extraction.page": lambda html: extract(html, "https://saved.example/chapter/1.html").text,
        "pagetext.html": lambda html: html_to_text(html)[0],
        "trafilatura": lambda html: trafilatura.extract(html, favor_recall=True) or "",
    }


def real_table(pages, scores: dict, names: list[str]) -> Table:
    """Mean precision, recall and F1 per site and per language, one column group per extractor."""
    from statistics import mean

    headers = ["site", "lang", "pages"] + [f"{n} {m}" for n in names for m in ("P", "R", "F1")]
    table = Table("Real chapter pages: character-level precision, recall, F1 (bag of characters)", headers)
    groups: dict[tuple[str, str], list] = {}
    for p in pages:
        groups.setdefault((p.site, p.language), []).append(p)
    for lang in sorted({p.language for p in pages}):
        groups.setdefault((f"all {lang}", lang), []).extend(p for p in pages if p.language == lang)
    groups[("all", "*")] = list(pages)
    for (site, lang), members in groups.items():
        cells = []
        for n in names:
            trio = [scores[n, p.site, p.name] for p in members]
            cells += [f"{mean(t[i] for t in trio):.3f}" for i in range(3)]
        table.add(site, lang, len(members), *cells)
    table.notes.append("Scores: NFKC, lower-cased letters and digits of each text as a multiset; "
                       "P = shared/extracted, R = shared/gold, means over pages.")
    return table


def real_main(folder: Path, args) -> int:
    from bench.real_pages import read_pages, score_pages

    if not folder.is_dir():
        raise BenchError(f"--real: no folder {folder}")
    pages = read_pages(folder)
    if not pages:
        raise BenchError(f"--real: no <site>/<name>.html with a .gold.txt under {folder}")
    fns = real_extractors()
    scores = score_pages(pages, fns)
    table = real_table(pages, scores, list(fns))
    worst = sorted(pages, key=lambda p: scores["pagetext.extraction.page", p.site, p.name][2])[:5]
    table.notes.append("Lowest pagetext.extraction.page F1: " + ", ".join(
        f"{p.site}/{p.name} {scores['pagetext.extraction.page', p.site, p.name][2]:.3f}" for p in worst))
    text = table.markdown()
    print(f"{len(pages)} pages from {len({p.site for p in pages})} sites under {folder}", file=sys.stderr)
    print(text)
    if not args.no_write:
        path = write_report("extraction-real", text, Path(args.out) if args.out else None)
        print(f"written to {path}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- driver


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bench/extraction.py",
        description="Main-text extraction from pirate pages: pagetext.extraction.page next to trafilatura.",
    )
    ap.add_argument("--corpus", help="the corpus folder (default: $FPT_SHARED/corpus or ../shared/corpus)")
    ap.add_argument("--folder", help="use the chapter .txt files of this folder instead of the corpus")
    ap.add_argument("--real", help="score the saved real pages of this folder (<site>/<name>.html + .gold.txt)")
    ap.add_argument("--limit", type=int, default=None, help="chapters per novel (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes over the pages, the best is kept (default 3)")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds after which an extractor gets no more passes")
    ap.add_argument("--out", default=None, help="folder for the report (default bench/out)")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise BenchError(f"--limit must be at least 1, got {args.limit}")
    if args.repeat < 1:
        raise BenchError(f"--repeat must be at least 1, got {args.repeat}")
    if args.real:
        return real_main(Path(args.real), args)
    if args.folder:
        from web.demo.chapters import chapters_from_folder

        try:
            chapters = chapters_from_folder(args.folder)
        except ValueError as e:
            raise BenchError(str(e)) from None
        books = {Path(args.folder).name: chapters[: args.limit] if args.limit else chapters}
        source = f"the chapter files of {args.folder}"
    else:
        if not args.corpus and not any((p / NOVELS_DIR).is_dir() for p in corpus_candidates()):
            where = ", ".join(str(p) for p in corpus_candidates())
            print(f"skipped: the shared corpus is not at {where}; check out ../shared, set FPT_SHARED, "
                  "pass --corpus PATH, or run on a folder of chapters with --folder samples/originals",
                  file=sys.stderr)
            return 0
        corpus = corpus_path(args.corpus)
        books = novel_chapters(corpus, args.limit)
        source = f"{', '.join(books)} from {corpus}"
    started = time.perf_counter()
    pages = site_pages(books)
    print(f"{len(pages)} pages from {source}", file=sys.stderr)
    extra = [("pages", f"{len(pages)} chapter pages from {source}"
                       + (f" (first {args.limit} chapters per novel)" if args.limit else "")),
             ("timing", f"best of {args.repeat} passes, extractors in turn")]
    header = header_markdown("Extraction benchmark", ["lxml", "trafilatura", "scrapy"], extra)
    table = bench_extraction(pages, args.repeat, args.budget)
    hidden = hidden_junk_pages(books)
    junk = bench_extraction(
        hidden, args.repeat, args.budget, what="hidden-junk chapter pages",
        note=f"Pages: up to 20 chapters per novel, each with a junk character after every fourth character, hidden "
             f"by the page's CSS one way per page ({', '.join(sorted({p.variant for p in hidden}))}). "
             "Boilerplate here is mostly the hidden junk that an extractor kept.")
    text = (header + "\n\n" + table.markdown() + "\n\n" + junk.markdown()
            + f"\n\nTotal benchmark time: {time.perf_counter() - started:.0f} s.")
    print(text)
    if not args.no_write:
        path = write_report("extraction", text, Path(args.out) if args.out else None)
        print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
