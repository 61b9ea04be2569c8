"""Chapters posted as pictures, found the way `simtool track` finds them.

    .venv/bin/python bench/pictures_match.py [--quick] [--chapters 60] [--chars 600]
        [--seed 5] [--jobs 2] [--no-write]

--chapters chapters of the simplified novels in ../shared/corpus/zh_novels are
registered, each as its opening of about --chars characters (cut at a paragraph end): a
web-novel chapter's size, and what OCR can read in the run's budget (about 1.3 s of
CPU per 100 characters). They are drawn with bench/pictures/render.py as:

- whole: a chapter as one long screenshot, in a random style;
- split: a chapter over 2-3 pictures named post-1.png, post-2.png... (joined by name);
- third: the first, middle or last third of a chapter, one picture;
- styled: a chapter in one fixed hard style: dark, sepia, watermarked, JPEG quality 40,
  rotated 2 degrees;
- unregistered: a third of a chapter that is not registered (must match nothing);
- textless: photo-like pictures, gradients and covers (must be skipped unread).

Every post goes through ocr.pictures.PictureReader (textness, then RapidOCR
within its bounds, one engine per worker process, --jobs workers) and then
fingerprint.track.Tracker, as `simtool track` does, twice: with the reading as it is,
and with look-alikes folded on both sides (ocr.lookalike). Beside it, the
same chapters' drawn text given as text to the same Tracker: the text channels' result.

Found: the post's chapter is among its matches (recall over posts holding a third or
more of a registered chapter). Precision: matches naming the right chapter over all
matches (unregistered and textless posts included). CER: ocr.score over the
drawn body text (status bar, watermark and reply box readings count as insertions);
missed: drawn characters substituted or deleted.

Written to bench/out/pictures_match-<date>.md.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BenchError, corpus_path, header_markdown, load_chapters, markdown_table, run_cli, write_report

SIMPLIFIED = ["hongloumeng", "xiyouji", "sanguoyanyi", "shuihuzhuan", "laocanyouji", "jingshitongyan"]
STYLED = {
    "dark": dict(theme="dark"),
    "sepia": dict(theme="sepia"),
    "watermark": dict(watermark="笔趣阁 www.biquge.la", watermark_alpha=60),
    "jpeg40": dict(jpeg_quality=40),
    "rotated": dict(rotation=2.0),
}
KINDS = ["whole", "split", "third", "styled", "unregistered", "textless"]


@dataclass
class Case:
    """One post of the run: its pictures, what it holds, and what it should match."""

    name: str
    kind: str
    chapter: str | None  # the registered chapter it holds, or None
    reference: str  # the body text drawn (empty for textless)
    paths: list[Path] = field(default_factory=list)
    style: str = ""


def opening(text: str, chars: int) -> str:
    """The chapter's opening of about `chars` characters, cut at a paragraph's end."""
    out = ""
    for para in text.split("\n"):
        if para.strip():
            out += para.strip() + "\n"
        if len(out) >= chars:
            break
    return out.strip()


def thirds(text: str) -> list[str]:
    n = len(text)
    return [text[:n // 3], text[n // 3: 2 * n // 3], text[2 * n // 3:]]


def build_cases(corpus: Path, chapters: int, chars: int, seed: int, counts: dict[str, int], out: Path):
    """(registered {key: text}, [Case]) with every picture drawn into `out`."""
    from bench.pictures.render import render_chapter, render_textless

    pool = [c for c in load_chapters(corpus, novels=SIMPLIFIED) if len(c.text) > chars * 1.5]
    rng = random.Random(seed)
    picked = rng.sample(pool, min(len(pool), chapters + counts["unregistered"]))
    registered = {c.key: opening(c.text, chars) for c in picked[:chapters]}
    others = [(c.key, opening(c.text, chars)) for c in picked[chapters:]]
    keys = list(registered)
    cases: list[Case] = []

    def draw(name, kind, chapter, text, style_name="", **fixed):
        folder = out / name
        folder.mkdir()
        pictures = render_chapter(text, rng.randrange(10**6), **fixed)
        paths = []
        for i, p in enumerate(pictures, 1):
            path = folder / (f"post-{i}.png" if len(pictures) > 1 else "post.png")
            p.image.save(path)
            paths.append(path)
        cases.append(Case(name, kind, chapter, "\n".join(p.text for p in pictures), paths,
                          style_name or pictures[0].style.theme))

    order = rng.sample(keys, len(keys))
    take = iter(order * 4)
    for i in range(counts["whole"]):
        k = next(take)
        draw(f"whole{i:02d}", "whole", k, registered[k], pages=1)
    for i in range(counts["split"]):
        k = next(take)
        draw(f"split{i:02d}", "split", k, registered[k], pages=rng.choice([2, 3]))
    for i in range(counts["third"]):
        k = next(take)
        draw(f"third{i:02d}", "third", k, thirds(registered[k])[i % 3], pages=1)
    styled = list(STYLED.items())
    for i in range(counts["styled"]):
        k = next(take)
        name, fixed = styled[i % len(styled)]
        draw(f"styled{i:02d}", "styled", k, registered[k], name, pages=1, **fixed)
    for i, (_k, text) in enumerate(others[:counts["unregistered"]]):
        draw(f"unreg{i:02d}", "unregistered", None, thirds(text)[i % 3], pages=1)
    for i in range(counts["textless"]):
        kind = ["noise", "gradient", "cover"][i % 3]
        folder = out / f"textless{i:02d}"
        folder.mkdir()
        path = folder / "post.jpg"
        render_textless(kind, rng.randrange(10**6)).image.save(path, quality=85)
        cases.append(Case(folder.name, "textless", None, "", [path], kind))
    return registered, cases


def _worker_init() -> None:
    global READER
    from ocr.pictures import PictureReader

    READER = PictureReader("rapidocr")
    READER._get_engine()  # load the models before the clock of the first post


def _read(case_paths: tuple[str, list[Path]]):
    from ocr.pictures import Post

    name, paths = case_paths
    t0 = time.process_time()
    got = READER.read(Post(name, paths, str(paths[0])))
    cpu = time.process_time() - t0
    if isinstance(got, str):
        return name, None, got, cpu
    return name, got, "", cpu


def read_all(cases: list[Case], jobs: int):
    """{case name: (Document or None, skip reason, CPU seconds)}, and the wall time."""
    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    with ctx.Pool(jobs, initializer=_worker_init) as pool:
        ready = time.perf_counter()
        done = {}
        for name, doc, reason, cpu in pool.imap_unordered(_read, [(c.name, c.paths) for c in cases]):
            done[name] = (doc, reason, cpu)
            print(f"  read {len(done)}/{len(cases)} {name}   ", file=sys.stderr, end="\r" if sys.stderr.isatty() else "\n")
    print(file=sys.stderr)
    return done, time.perf_counter() - t0, ready - t0


def match(registered: dict[str, str], pages: dict[str, object], fold: bool) -> dict[str, list[str]]:
    """{page name: [matched chapter keys]} through fingerprint.track.Tracker as simtool track does."""
    from fingerprint.engine import EngineConfig
    from fingerprint.models import Document
    from fingerprint.track import Tracker
    from ocr import pictures

    tracker = Tracker(EngineConfig())
    originals = [Document(k, t) for k, t in registered.items()]
    for d in originals:
        tracker.add(d)
    saved = pictures.FOLD_LOOKALIKES
    pictures.FOLD_LOOKALIKES = fold
    try:
        ocr_tracker = pictures.folded_tracker(tracker, originals)
        return {name: [m.original for m in (ocr_tracker.match(pictures.ocr_view(doc)) if doc.meta.get("ocr")
                                            else tracker.match(doc))]
                for name, doc in pages.items()}
    finally:
        pictures.FOLD_LOOKALIKES = saved


def score(cases: list[Case], found: dict[str, list[str]]):
    """Rows per kind: posts, found, recall; and overall precision."""
    rows = []
    right = wrong = 0
    for kind in KINDS:
        group = [c for c in cases if c.kind == kind]
        if not group:
            continue
        if kind in ("unregistered", "textless"):
            hits = sum(1 for c in group if not found.get(c.name))
            rows.append((kind, len(group), f"{hits} matched nothing", ""))
        else:
            hits = sum(1 for c in group if c.chapter in found.get(c.name, []))
            rows.append((kind, len(group), hits, f"{hits / len(group):.3f}"))
        for c in group:
            for k in found.get(c.name, []):
                right += k == c.chapter
                wrong += k != c.chapter
    precision = right / (right + wrong) if right + wrong else 1.0
    return rows, precision, wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--quick", action="store_true", help="about a quarter of the pictures")
    ap.add_argument("--chapters", type=int, default=60)
    ap.add_argument("--chars", type=int, default=600)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    try:
        corpus = corpus_path(args.corpus)
    except BenchError as e:
        raise BenchError(f"{e} (this benchmark needs ../shared/corpus/zh_novels; it is skipped without it)") from None
    try:
        from bench.pictures.render import require_fonts

        require_fonts()
        from ocr.engines import make_engine

        make_engine("rapidocr")
    except Exception as e:
        raise BenchError(str(e)) from None
    counts = dict(whole=12, split=6, third=15, styled=10, unregistered=6, textless=9)
    if args.quick:
        counts = dict(whole=5, split=3, third=6, styled=5, unregistered=3, textless=3)

    from fingerprint.models import Document
    from ocr.lookalike import fold
    from ocr.score import align, cer

    with tempfile.TemporaryDirectory(prefix="pictures_match-") as tmp:
        t0 = time.perf_counter()
        registered, cases = build_cases(corpus, args.chapters, args.chars, args.seed, counts, Path(tmp))
        render_s = time.perf_counter() - t0
        print(f"{len(registered)} chapters registered, {len(cases)} posts "
              f"({sum(len(c.paths) for c in cases)} pictures) drawn in {render_s:.0f} s", file=sys.stderr)
        done, wall, startup = read_all(cases, args.jobs)

    pages = {name: doc for name, (doc, _, _) in done.items() if doc is not None}
    skipped = {name: reason for name, (doc, reason, _) in done.items() if doc is None}
    text_pages = {c.name: Document(c.name, c.reference) for c in cases if c.reference}
    results = {"as read": match(registered, pages, False), "look-alikes folded": match(registered, pages, True),
               "as text": match(registered, text_pages, False)}

    with_text = [c for c in cases if c.reference]
    cers, missed, missed_folded, refs = [], 0, 0, 0
    for c in with_text:
        doc = pages.get(c.name)
        reading = doc.text if doc else ""
        cers.append(cer(c.reference, reading))
        a = align(c.reference, reading)
        b = align(fold(c.reference), fold(reading))
        missed += a.missed
        missed_folded += b.missed
        refs += a.reference_chars
    pictures = sum(len(c.paths) for c in cases)
    read_pictures = sum(len(c.paths) for c in cases if c.name in pages)
    cpu = sum(cpu for _, _, cpu in done.values())
    textless = [c for c in cases if c.kind == "textless"]
    textless_skipped = sum(1 for c in textless if c.name in skipped)
    text_skipped = sum(1 for c in with_text if c.name in skipped)

    sections = []
    rows_by = {label: score(cases, found) for label, found in results.items()}
    header = ["kind", "posts"] + [h for label in results for h in (f"found ({label})", "recall")]
    table = []
    for i, kind_row in enumerate(rows_by["as read"][0]):
        row = [kind_row[0], kind_row[1]]
        for label in results:
            r = rows_by[label][0][i]
            row += [r[2], r[3]]
        table.append(row)
    registered_cases = [c for c in cases if c.chapter]
    total = ["**a third or more of a chapter**", len(registered_cases)]
    for found in results.values():
        hits = sum(1 for c in registered_cases if c.chapter in found.get(c.name, []))
        total += [hits, f"{hits / len(registered_cases):.3f}"]
    table.append(total)
    precision = ["**precision** (wrong matches)", ""]
    for label in results:
        _, p, wrong = rows_by[label]
        precision += [f"{p:.3f} ({wrong})", ""]
    table.append(precision)
    sections.append(markdown_table(header, table))
    sections.append(markdown_table(["OCR", "value"], [
        ("pictures (posts)", f"{pictures} ({len(cases)})"),
        ("CER, mean over posts with text", f"{sum(cers) / len(cers):.3f}"),
        ("missed (subst.+del.) / drawn characters", f"{missed / refs:.3f} ({missed} / {refs})"),
        ("missed, look-alikes folded", f"{missed_folded / refs:.3f}"),
        ("textless pictures skipped unread", f"{textless_skipped} / {len(textless)}"),
        ("pictures with text wrongly skipped", text_skipped),
        ("pictures read per second (wall, all workers)", f"{read_pictures / (wall - startup):.2f} ({args.jobs} workers)"),
        ("CPU seconds per picture read (textless ones cost about 0.02)", f"{cpu / max(1, read_pictures):.1f}"),
        ("drawing the pictures", f"{render_s:.0f} s"),
    ]))
    misses = [(c.name, c.kind, c.style, c.chapter, f"{cer(c.reference, pages[c.name].text if c.name in pages else ''):.3f}",
               skipped.get(c.name, ""))
              for c in registered_cases if c.chapter not in results["as read"].get(c.name, [])]
    if misses:
        sections.append("Not found (as read):\n\n" + markdown_table(["post", "kind", "style", "chapter", "CER", "skipped"],
                                                                    misses))
    head = header_markdown("Chapters as pictures, matched like simtool track", ["rapidocr-onnxruntime", "onnxruntime"],
                           [("run", f"{len(registered)} chapters of about {args.chars} characters registered, seed "
                                    f"{args.seed}{', --quick' if args.quick else ''}")])
    text = head + "\n\n" + "\n\n".join(sections) + "\n"
    print(text)
    if not args.no_write:
        print(f"written to {write_report('pictures_match', text)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
