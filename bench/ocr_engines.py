"""OCR engines side by side on chapters drawn as pictures, and the textness test.

    .venv/bin/python bench/ocr_engines.py [--chapters 24] [--chars 360] [--seed 11]
        [--engines rapidocr,tesseract] [--textless 60] [--no-write]

Excerpts (about --chars characters, from a paragraph start) of --chapters chapters of
the simplified-character novels in ../shared/corpus/zh_novels are drawn with
bench/pictures/render.py, each in a style drawn from the seed (fonts, sizes, themes,
watermark, status bar, reply box, rotation <= 2 degrees, JPEG 40-90, one picture or
split over 2-3). Each engine then reads every picture through
ocr.read.read_picture, in a fresh process of its own with one thread, so
its speed is per core and its peak memory (RSS) is its own: the Python process's
peak, and for Tesseract also its child's.

Columns: character error rate over all excerpts (all edits / reference characters,
after ocr.score.comparable; the reading includes whatever else the engine
read: status bar, watermark, reply box, so insertions count too); "missed": the
reference characters substituted or deleted (what a matcher loses), also after folding
look-alikes (ocr.lookalike) on both sides; median and worst missed share
per excerpt; pictures per second per core (CPU time, the engine's child included); and
peak RSS. The substitutions each engine made are counted and the most
frequent printed (the measured rows of ocr/lookalike.txt come from them).

Textness: the same chapter pictures (with text) and --textless pictures without body
text (photo-like noise, gradients, covers with a title only), judged by
ocr.textness; precision and recall of "has text", and its cost per picture.

Written to bench/out/ocr_engines-<date>.md.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import resource
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BenchError, corpus_path, load_chapters, markdown_table, run_cli, write_report

SIMPLIFIED = ["hongloumeng", "xiyouji", "sanguoyanyi", "shuihuzhuan", "laocanyouji", "jingshitongyan"]


def excerpts(corpus: Path, count: int, chars: int, seed: int) -> list[tuple[str, str]]:
    """(key, text) of `count` excerpts of about `chars` characters, each from a paragraph
    start of a different chapter, chosen by `seed`; excerpts holding the corpus's garbled
    passages (runs of '?') are passed over."""
    chapters = [c for c in load_chapters(corpus, novels=SIMPLIFIED) if len(c.text) > chars * 2]
    if not chapters:
        raise BenchError("no chapter in the corpus is long enough for an excerpt; lower --chars")
    rng = random.Random(seed)
    rng.shuffle(chapters)
    out = []
    for c in chapters:
        paras = [p.strip() for p in c.text.split("\n") if p.strip()][1:]  # skip the heading
        start = rng.randrange(max(1, len(paras) - 3))
        text = ""
        for p in paras[start:]:
            text += p + "\n"
            if len(text) >= chars:
                break
        if "?" in text:  # a garbled (double-encoded) passage of the corpus (MANIFEST.md): no reference to read
            continue
        out.append((c.key, text[: chars + 60].strip()))
        if len(out) == count:
            break
    return out


def render_all(items: list[tuple[str, str]], seed: int):
    """Every excerpt as its pictures: [(key, reference text, [PIL images], style)]."""
    from bench.pictures.render import render_chapter

    out = []
    for i, (key, text) in enumerate(items):
        pictures = render_chapter(text, seed * 1000 + i)
        out.append((key, "\n".join(p.text for p in pictures), [p.image for p in pictures], pictures[0].style))
    return out


def _engine_worker(name: str, payload: list[tuple[str, str, list]], queue) -> None:
    """Read every picture with engine `name` (one thread); put the results on `queue`."""
    from ocr.engines import make_engine
    from ocr.read import read_picture

    try:
        engine = make_engine(name, threads=1)
        # one warm-up read, so model loading is not counted as reading
        engine.read(payload[0][2][0].crop((0, 0, 400, 200)))
    except Exception as e:  # reported as a row, not a crash of the whole run
        queue.put({"name": name, "error": str(e)})
        return
    readings = []
    cpu0 = time.process_time()
    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall0 = time.perf_counter()
    pictures = 0
    for key, _, images in payload:
        texts = []
        for image in images:
            texts.append(read_picture(image, engine).text)
            pictures += 1
        readings.append((key, "\n".join(texts)))
    wall = time.perf_counter() - wall0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu0 + (children.ru_utime - children0.ru_utime) + (children.ru_stime - children0.ru_stime)
    queue.put({"name": name, "readings": readings, "pictures": pictures, "wall": wall, "cpu": cpu,
               "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               "child_rss": children.ru_maxrss * 1024})


def run_engine(name: str, rendered) -> dict:
    """Run `_engine_worker` for `name` in a fresh spawned process; its result dict."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    payload = [(key, ref, images) for key, ref, images, _ in rendered]
    proc = ctx.Process(target=_engine_worker, args=(name, payload, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def score_engine(result: dict, rendered) -> dict:
    from ocr.lookalike import fold
    from ocr.score import align

    refs = {key: ref for key, ref, _, _ in rendered}
    edits = missed = folded_missed = total = 0
    per = []
    subs: Counter = Counter()
    for key, text in result["readings"]:
        a = align(refs[key], text)
        edits += a.edits
        missed += a.missed
        folded_missed += align(fold(refs[key]), fold(text)).missed
        total += a.reference_chars
        per.append(a.missed / a.reference_chars)
        subs.update(a.substituted)
    return {"cer": edits / total, "missed": missed / total, "missed_folded": folded_missed / total,
            "median": statistics.median(per), "worst": max(per), "subs": subs}


def textness_rows(rendered, count: int, seed: int) -> tuple[list, dict]:
    from bench.pictures.render import render_textless
    from ocr.textness import textness

    with_text = [img for _, _, images, _ in rendered for img in images]
    without = [render_textless(kind, seed * 7 + i).image
               for i in range(count) for kind in [("noise", "gradient", "cover")[i % 3]]]
    t0 = time.perf_counter()
    tp = sum(textness(img).has_text for img in with_text)
    fp_kinds = Counter()
    for i, img in enumerate(without):
        if textness(img).has_text:
            fp_kinds[("noise", "gradient", "cover")[i % 3]] += 1
    per = (time.perf_counter() - t0) / (len(with_text) + len(without))
    fp = sum(fp_kinds.values())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / len(with_text)
    return [("pictures with text", len(with_text)), ("pictures without", len(without)),
            ("recall (text found)", f"{recall:.3f}"), ("precision", f"{precision:.3f}"),
            ("false positives by kind", dict(fp_kinds) or "none"),
            ("ms per picture", f"{per * 1000:.1f}")], {"recall": recall, "precision": precision}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapters", type=int, default=24)
    ap.add_argument("--chars", type=int, default=360)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--engines", default="rapidocr,tesseract")
    ap.add_argument("--textless", type=int, default=60)
    ap.add_argument("--corpus")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    corpus = corpus_path(args.corpus)
    items = excerpts(corpus, args.chapters, args.chars, args.seed)
    rendered = render_all(items, args.seed)
    n_pictures = sum(len(images) for _, _, images, _ in rendered)
    ref_chars = sum(len(ref) for _, ref, _, _ in rendered)
    print(f"{len(rendered)} excerpts, {n_pictures} pictures, {ref_chars} reference characters", file=sys.stderr)

    rows, subs_text = [], []
    for name in args.engines.split(","):
        t0 = time.perf_counter()
        result = run_engine(name, rendered)
        if "error" in result:
            rows.append((name, "not run: " + result["error"], "", "", "", "", "", ""))
            continue
        s = score_engine(result, rendered)
        rows.append((name, f"{s['cer']:.3f}", f"{s['missed']:.3f}", f"{s['missed_folded']:.3f}",
                     f"{s['median']:.3f}", f"{s['worst']:.3f}",
                     f"{result['pictures'] / result['cpu']:.2f}",
                     f"{max(result['rss'], result['child_rss']) / 2**20:.0f} MB"
                     + (f" (child {result['child_rss'] / 2**20:.0f})" if result["child_rss"] else "")))
        top = ", ".join(f"{a}→{b} {n}" for (a, b), n in s["subs"].most_common(40))
        subs_text.append(f"- {name}: {top or 'none'}")
        print(f"{name}: done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    table = markdown_table(["engine", "CER (all edits)", "missed (subst.+del.)", "missed, look-alikes folded",
                            "median missed", "worst excerpt missed",
                            "pictures/s per core", "peak RSS"], rows)
    t_rows, _ = textness_rows(rendered, args.textless, args.seed)
    t_table = markdown_table(["textness", "value"], t_rows)
    text = (f"# OCR engines on rendered chapters\n\n{len(rendered)} excerpts of about {args.chars} characters, "
            f"{n_pictures} pictures, {ref_chars} reference characters, seed {args.seed}.\n\n{table}\n\n"
            "Most frequent substitutions (drawn→read count):\n\n" + "\n".join(subs_text) + f"\n\n{t_table}\n")
    print(text)
    if not args.no_write:
        print(f"written to {write_report('ocr_engines', text)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run_cli(main)
