"""Truth benchmark: does fptrack say how much of a chapter a disguised copy carries, and the right verdict?

    .venv/bin/python bench/truth.py [--chapters-per-novel 8] [--seed 1] [--corpus PATH] [--no-write]

Originals: the first 40 chapters of 西游记, 三国演义, 水浒传 and 红楼梦 (zh_novels), registered
with fingerprint.track.Tracker as simtool and the tracker do. Pages: for each disguise of
bench/disguises.py, C registered chapters per novel made into a page whose true containment
(share of the chapter's Chinese characters the page carries, disguised ones included) and true
page share are known; unrelated text comes from novels never registered (警世通言,
济公全传, 东周列国志, 官场现形记). Negatives: the same disguises of chapters 41-80 of the same
novels (never registered), which must match nothing.

The true verdict follows from the true shares and the engine's documented thresholds
(EngineConfig.whole_share, part_share): duplicate, contains, part or excerpt. Per disguise the
table gives recall (the pair found), verdict accuracy, and the mean absolute error of the
reported containment, for fptrack and for the brute-force baseline (exact character 8-gram
containment, bench/baseline.py, judged with the same thresholds) from the same run; then
precision over all pages (false pairs: an original other than the page's source, or any
match of a negative page).

The table goes to stdout and to bench/out/truth-<date>.md.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.baseline import Baseline
from bench.common import corpus_path, run_cli, write_report
from bench.disguises import DISGUISES, cjk
from fingerprint.chapters import split_chapters
from fingerprint.engine import EngineConfig, verdict_for
from fingerprint.models import Document
from fingerprint.track import Tracker
from pagetext.html import html_to_text

NOVELS = ["xiyouji", "sanguoyanyi", "shuihuzhuan", "hongloumeng"]
UNRELATED = ["jingshitongyan", "jigongquanzhuan", "dongzhoulieguozhi", "guanchangxianxingji"]
REGISTERED = 40
TARGET_VERDICTS, TARGET_MAE = 0.97, 0.03


def chapters(corpus: Path, name: str) -> list[tuple[str, str]]:
    text = (corpus / "zh_novels" / f"{name}.txt").read_text(encoding="utf-8")
    return [(f"{name}_{c.number:03d}", c.body) for c in split_chapters(text) if c.number and cjk(c.body) > 800]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapters-per-novel", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    corpus = corpus_path(args.corpus)
    config = EngineConfig()
    rng = random.Random(args.seed)

    originals: list[Document] = []
    positives: list[tuple[str, str]] = []  # (key, body) of the chapters pages are made from
    negatives: list[tuple[str, str]] = []
    for name in NOVELS:
        chs = chapters(corpus, name)
        reg, unreg = chs[:REGISTERED], chs[REGISTERED : 2 * REGISTERED]
        originals += [Document(k, b) for k, b in reg]
        positives += rng.sample(reg, min(args.chapters_per_novel, len(reg)))
        negatives += rng.sample(unreg, min(args.chapters_per_novel // 2, len(unreg)))
    filler = [b for name in UNRELATED for _, b in chapters(corpus, name)]

    pages: list[tuple[str, str, str | None, float, float]] = []  # key, text, source, containment, page share
    for kind, make in DISGUISES.items():
        for src, body in positives + negatives:
            prng = random.Random(f"{args.seed}:{kind}:{src}")
            other = prng.choice(filler)
            d = make(body, prng, other=other)
            text = html_to_text(d.text)[0] if d.html else d.text
            registered = (src, body) in positives
            pages.append((f"{kind}__{src}", text, src if registered else None, d.containment, d.page_share))
    kinds = list(DISGUISES)

    t0 = time.perf_counter()
    tracker = Tracker(config)
    for o in originals:
        tracker.add(o)
    found: dict[tuple[str, str], tuple[float, float, str]] = {}
    for key, text, _, _, _ in pages:
        for m in tracker.match(Document(key, text)):
            found[(key, m.original)] = (m.containment, m.page_share, m.verdict)
    fpt_seconds = time.perf_counter() - t0

    t0 = time.perf_counter()
    base: dict[tuple[str, str], tuple[float, float, str]] = {}
    for bm in Baseline().compare(originals, [Document(k, t) for k, t, _, _, _ in pages]):
        base[(bm.page, bm.original)] = (bm.containment, bm.page_share,
                                        verdict_for(bm.containment, bm.page_share, True, config))
    base_seconds = time.perf_counter() - t0

    rows = []
    totals = {name: defaultdict(float) for name in ("fptrack", "baseline")}
    for kind in kinds:
        row = [kind]
        for name, got in (("fptrack", found), ("baseline", base)):
            n = hits = right = 0
            err = 0.0
            for key, _, src, c_true, p_true in pages:
                if src is None or not key.startswith(kind + "__"):
                    continue
                n += 1
                want = verdict_for(c_true, p_true, True, config)
                g = got.get((key, src))
                if g is None:
                    err += c_true
                    continue
                hits += 1
                right += g[2] == want
                err += abs(g[0] - c_true)
            t = totals[name]
            t["n"] += n
            t["hits"] += hits
            t["right"] += right
            t["err"] += err
            row += [f"{hits / n:.3f}", f"{right / n:.3f}", f"{err / n:.3f}"]
        rows.append(row)
    false = {}
    for name, got in (("fptrack", found), ("baseline", base)):
        sources = {key: src for key, _, src, _, _ in pages}
        false[name] = sum(1 for (key, orig) in got if sources[key] != orig)
        totals[name]["pairs"] = len(got)

    def overall(name):
        t = totals[name]
        precision = (t["pairs"] - false[name]) / t["pairs"] if t["pairs"] else 1.0
        return [f"{t['hits'] / t['n']:.3f}", f"{t['right'] / t['n']:.3f}", f"{t['err'] / t['n']:.3f}"], precision

    fo, fp = overall("fptrack")
    bo, bp = overall("baseline")
    lines = [
        f"{len(originals)} registered chapters of {', '.join(NOVELS)}; {len(pages)} pages "
        f"({len(positives)} registered and {len(negatives)} unregistered chapters per disguise); "
        f"thresholds: whole >= {config.whole_share}, part >= {config.part_share}; {time.strftime('%Y-%m-%d')}",
        "",
        "| disguise | fptrack recall | fptrack verdicts right | fptrack containment error | "
        "baseline recall | baseline verdicts right | baseline containment error |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *("| " + " | ".join(r) + " |" for r in rows),
        "| **all** | " + " | ".join(fo) + " | " + " | ".join(bo) + " |",
        "",
        f"precision: fptrack {fp:.4f} ({false['fptrack']} false pairs of {totals['fptrack']['pairs']:.0f}), "
        f"baseline {bp:.4f} ({false['baseline']} of {totals['baseline']['pairs']:.0f}); "
        f"time: fptrack {fpt_seconds:.1f} s (index + match), baseline {base_seconds:.1f} s (every pair)",
        f"targets: verdicts right >= {TARGET_VERDICTS}, containment error <= {TARGET_MAE}",
    ]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_report("truth", table)
    return 0


if __name__ == "__main__":
    run_cli(main)
