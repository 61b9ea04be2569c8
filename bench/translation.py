"""Translation benchmark: are pages that translate a registered chapter found, and nothing else?

    .venv/bin/python bench/translation.py [--corpus PATH] [--distractors N] [--negatives N] [--quick]

Originals registered in Chinese: the Chinese side of every pair of the parallel corpus
(bench/data/translation: 聊斋志异 with H. A. Giles's 1880 translation, 道德经 with James
Legge's 1891 translation; MANIFEST.md there), plus N distractor chapters of 三国演义 and
西游记 from the shared corpus. Pages:

- **whole**: each English translation, alone;
- **third**: the middle third of each Liaozhai translation between as much unrelated
  English (chapters of the shared corpus's English novels) before and after it;
- **negatives**: chapters of English novels that translate nothing registered;
- **reverse**: the English translations registered (with the English novels' chapters as
  distractors) and the Chinese stories given as pages;
- **English among English**: English novels' chapters registered in English and other
  chapters of them as pages: no cross-lingual match may come of it.

Each is run through `fingerprint.track.Tracker` (the engine simtool and the tracker share)
twice in the same run: with every channel, and with the same-language channels only (the
peer this channel adds to). Liaozhai volume 1 is the development set the thresholds were
tuned on; volumes 2-3 and the Daodejing are held out. Times: milliseconds per page of the
Chinese channels on Chinese chapters and of the translation channel on English pages, the
dictionary's load time and memory.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import BenchError, corpus_path, cpu_model, run_cli
from bench.translation_corpus import pairs
from fingerprint.chapters import split_chapters
from fingerprint.engine import CHANNELS, EngineConfig, prepare
from fingerprint.models import Document
from fingerprint.track import Tracker

SAME_LANGUAGE = tuple(c for c in CHANNELS if c != "translation")
EN_BOOKS = ("pride_and_prejudice_pg1342.txt", "moby_dick_pg2701.txt", "frankenstein_pg84.txt",
            "little_women_pg37106.txt", "great_gatsby_pg64317.txt")


def _chapters(path: Path, n: int) -> list[str]:
    return [c.text for c in split_chapters(path.read_text("utf-8")) if len(c.text) > 2000][:n]


def _english_chunks(corpus: Path, n: int) -> list[str]:
    """Runs of 12 paragraphs of the English novels, as chapter-sized texts."""
    out = []
    for name in EN_BOOKS:
        paras = [p for p in (corpus / "en_books" / name).read_text("utf-8").split("\n\n") if len(p) > 200]
        out.extend("\n\n".join(paras[i:i + 12]) for i in range(12, len(paras) - 12, 24))
    step = max(1, len(out) // n)
    return out[::step][:n]


def _run(originals: list[Document], pages: list[tuple[str, str | None, Document]], channels) -> dict:
    config = EngineConfig(channels=channels)
    tr = Tracker(config)
    for d in originals:
        tr.add(d)
    found: dict[str, list[int]] = {}
    false = 0
    wrong: list[str] = []
    t = time.perf_counter()
    for kind, truth, page in pages:
        matches = tr.match(page)
        keys = {m.original for m in matches}
        hit = truth in keys if truth else False
        found.setdefault(kind, []).append(int(hit))
        false += len(keys - {truth})
        wrong += [f"{page.key} ({kind}) -> {m.original}: {m.verdict}, {m.scores.get('aligned_sentences')} of "
                  f"{m.scores.get('chapter_sentences')} sentences, score {m.scores.get('alignment_score')}"
                  for m in matches if m.original != truth]
    return {"found": found, "false": false, "seconds": time.perf_counter() - t, "pages": len(pages), "wrong": wrong,
            "verified": tr.stats.candidates}


def _rate(xs: list[int]) -> str:
    return f"{sum(xs)}/{len(xs)} = {sum(xs) / len(xs):.2f}" if xs else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--distractors", type=int, default=120, help="Chinese distractor chapters (default 120)")
    ap.add_argument("--negatives", type=int, default=80, help="English chapters that translate nothing (80)")
    ap.add_argument("--quick", action="store_true", help="20 distractors, 20 negatives")
    a = ap.parse_args()
    if a.quick:
        a.distractors, a.negatives = 20, 20
    corpus = corpus_path(a.corpus)
    t0 = time.perf_counter()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from fingerprint.translation.lexicon import lexicon

    lexicon()
    load_s = time.perf_counter() - t0
    rss_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024

    lz, dd = pairs("liaozhai"), pairs("daodejing")
    if not lz:
        raise BenchError("no Liaozhai pairs under bench/data/translation; check out the repository's data")
    half = a.distractors // 2
    distract = (_chapters(corpus / "zh_novels" / "sanguoyanyi.txt", half)
                + _chapters(corpus / "zh_novels" / "xiyouji.txt", a.distractors - half))
    originals = [Document(f"liaozhai-{p.number:03d}", p.zh_text) for p in lz]
    originals += [Document(f"daodejing-{p.number:03d}", p.zh_text) for p in dd]
    originals += [Document(f"distractor-{i:03d}", t) for i, t in enumerate(distract)]
    chunks = _english_chunks(corpus, a.negatives + 2 * len(lz))
    negatives, fillers = chunks[:a.negatives], chunks[a.negatives:]
    pages: list[tuple[str, str | None, Document]] = []
    for p in lz:
        kind = f"whole, Liaozhai ({'development' if p.split == 'dev' else 'held out'})"
        pages.append((kind, f"liaozhai-{p.number:03d}", Document(f"en-{p.number}", p.en_text)))
    for p in dd:
        pages.append(("whole, Daodejing (held out)", f"daodejing-{p.number:03d}", Document(f"dd-{p.number}", p.en_text)))
    for i, p in enumerate(lz):
        n = len(p.en_text)
        third = p.en_text[n // 3: 2 * n // 3]
        before, after = fillers[(2 * i) % len(fillers)], fillers[(2 * i + 1) % len(fillers)]
        text = before[-len(third):] + "\n\n" + third + "\n\n" + after[:len(third)]
        size = "stories of 2,000 characters or more" if len(p.zh_text) >= 2000 else "shorter stories"
        pages.append((f"third inside other text, Liaozhai, {size}", f"liaozhai-{p.number:03d}",
                      Document(f"third-{p.number}", text)))
    for i, t in enumerate(negatives):
        pages.append(("negatives (English, nothing registered)", None, Document(f"neg-{i}", t)))

    rows = {}
    for label, channels in (("all channels", CHANNELS), ("same-language channels", SAME_LANGUAGE)):
        rows[label] = _run(originals, pages, channels)

    # The reverse direction, and English among English.
    en_orig = [Document(f"en-liaozhai-{p.number:03d}", p.en_text) for p in lz]
    en_orig += [Document(f"en-novel-{i:03d}", t) for i, t in enumerate(negatives[: a.negatives // 2])]
    rev_pages = [("reverse: Chinese story, English registered", f"en-liaozhai-{p.number:03d}",
                  Document(f"zh-{p.number}", p.zh_text)) for p in lz]
    rev_pages += [("English pages, English registered (no cross-lingual match)", None, Document(f"en-page-{i}", t))
                  for i, t in enumerate(negatives[a.negatives // 2:])]
    rows_rev = {label: _run(en_orig, rev_pages, ch) for label, ch in
                (("all channels", CHANNELS), ("same-language channels", SAME_LANGUAGE))}

    # Per-page cost of the channels, after the normalisation every channel shares: the Chinese
    # channels on the Chinese stories, the translation channel's query on the same stories and on
    # their English translations (what every page pays), and its alignment with one original.
    def per_page(texts, work) -> float:
        prepared = [prepare(f"t{i}", t) for i, t in enumerate(texts)]
        t = time.perf_counter()
        for p in prepared:
            work(p)
        return 1000 * (time.perf_counter() - t) / len(prepared)

    from fingerprint.engine import judge_translation

    zh_texts, en_texts = [p.zh_text for p in lz], [p.en_text for p in lz]
    per_page(zh_texts + en_texts, lambda p: p.translation_keys("query"))  # warm the tables
    zh_ms = per_page(zh_texts, lambda p: p.compute(SAME_LANGUAGE))
    zh_query_ms = per_page(zh_texts, lambda p: p.translation_keys("query"))
    en_query_ms = per_page(en_texts, lambda p: p.translation_keys("query"))
    originals_zh = [prepare(f"o{i}", t) for i, t in enumerate(zh_texts)]
    for o in originals_zh:
        _ = o.bags
    t = time.perf_counter()
    for o, text in zip(originals_zh, en_texts):
        judge_translation(prepare("page", text), o)
    align_ms = 1000 * (time.perf_counter() - t) / len(en_texts)

    print(f"# Translation benchmark, {_dt.date.today()} on {platform.machine()} ({cpu_model()}), "
          f"{len(originals)} originals registered ({a.distractors} distractors)\n")
    print("| pages | all channels | same-language channels |")
    print("| --- | ---: | ---: |")
    for kind in dict.fromkeys(k for k, _, _ in pages):
        if kind.startswith("negatives"):
            continue
        print(f"| {kind} | {_rate(rows['all channels']['found'][kind])} | "
              f"{_rate(rows['same-language channels']['found'][kind])} |")
    for kind in dict.fromkeys(k for k, _, _ in rev_pages):
        if kind.startswith("English pages"):
            continue
        print(f"| {kind} | {_rate(rows_rev['all channels']['found'][kind])} | "
              f"{_rate(rows_rev['same-language channels']['found'][kind])} |")
    for label in ("all channels", "same-language channels"):
        r, rr = rows[label], rows_rev[label]
        true = sum(sum(v) for v in r["found"].values()) + sum(sum(v) for v in rr["found"].values())
        false = r["false"] + rr["false"]
        prec = true / (true + false) if true + false else 1.0
        print(f"| precision, {label} | {true} right, {false} wrong = {prec:.3f} | |")
    print(f"\n- Per page, after normalising: the Chinese channels take {zh_ms:.1f} ms on a Liaozhai story; the "
          f"translation channel's query {zh_query_ms:.1f} ms on the same story ({zh_query_ms / zh_ms:.1f}x) and "
          f"{en_query_ms:.1f} ms on its English translation ({en_query_ms / zh_ms:.1f}x); aligning an English "
          f"page with its original (its sentences included) {align_ms:.1f} ms.")
    print(f"- Matching, all channels: {1000 * rows['all channels']['seconds'] / rows['all channels']['pages']:.1f} ms "
          f"per page; same-language channels: "
          f"{1000 * rows['same-language channels']['seconds'] / rows['same-language channels']['pages']:.1f} ms; "
          f"originals verified per page, all channels: "
          f"{rows['all channels']['verified'] / rows['all channels']['pages']:.1f}.")
    print(f"- Dictionary: loaded in {load_s:.2f} s, +{rss_mb:.0f} MB resident.")
    for line in rows["all channels"]["wrong"] + rows_rev["all channels"]["wrong"]:
        print(f"- wrong match: {line}")
    return 0


if __name__ == "__main__":
    run_cli(main)
