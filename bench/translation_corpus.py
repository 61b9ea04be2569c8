"""Parallel Chinese-English texts for measuring the translation channel.

A translated copy of a registered chapter shares no characters with it, so the channel is
measured on real pairs: a Chinese text and a public-domain English translation of the same
chapter or story. The pairs are committed under bench/data/translation/ (MANIFEST.md there
names the sources, the translators and the public-domain reasoning), one folder per work:

    <work>/index.json      one entry per pair: number, titles, and any checks
    <work>/zh/<NNN>.txt    the Chinese text of pair NNN (UTF-8)
    <work>/en/<NNN>.txt    the English translation of the same story or chapter

Development and held-out sets. Tune on the development set only; the held-out sets say whether
the tuning generalises (another translator, another genre, another period of English):

* ``liaozhai`` volume 1 (聊斋志异 卷一, H. A. Giles 1880): **dev** (17 stories);
* ``liaozhai`` volumes 2 and 3 (same translator, other stories): **test** (22 stories);
* ``daodejing`` (道德经, James Legge 1891, 81 short chapters, another translator and genre):
  **test**.

No English translation of 红楼梦 belongs here: that work is held out for the final measurement.

Works whose Chinese side is already in the shared corpus (../shared/corpus/zh_novels) are not
copied into the repository; `shared_chapters` reads such a novel and cuts it with the project's
chapter splitter, so an English side added later pairs with the same chapter bodies the tracker
registers.

Import it as ``bench.translation_corpus`` from the repository root, or as
``translation_corpus`` with bench/ on sys.path.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DATA", "DEV", "TEST", "Pair", "TranslationCorpusError",
    "works", "pairs", "split_of", "shared_corpus", "shared_chapters",
]

DATA = Path(__file__).resolve().parent / "data" / "translation"
ROOT = Path(__file__).resolve().parent.parent
DEV, TEST = "dev", "test"
SPLITS = (DEV, TEST)


class TranslationCorpusError(Exception):
    """A missing or unreadable part of the parallel corpus; the message names the fix."""


@dataclass(frozen=True)
class Pair:
    """One Chinese text and its English translation."""

    work: str
    number: int  # the translator's own story/chapter number
    zh_text: str
    en_text: str
    title: str  # "<English title> / <Chinese title>"
    split: str  # DEV or TEST
    anchor_zh: str = ""  # a name in the Chinese text ...
    anchor_en: str = ""  # ... and how the translator romanised it ("" where none was recorded)


def works() -> list[str]:
    """The works with committed pairs, in name order."""
    if not DATA.is_dir():
        raise TranslationCorpusError(f"no parallel corpus at {DATA}; it is part of the repository, check it out again")
    return sorted(p.name for p in DATA.iterdir() if (p / "index.json").is_file())


def split_of(work: str, entry: dict) -> str:
    """DEV or TEST for one index entry (see the module docstring for the rule)."""
    if work == "liaozhai":
        return DEV if entry.get("volume") == 1 else TEST
    return TEST


def _index(work: str) -> list[dict]:
    path = DATA / work / "index.json"
    if not path.is_file():
        raise TranslationCorpusError(f"unknown work {work!r}: no {path}; available: {', '.join(works())}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TranslationCorpusError(f"cannot read {path}: {e}") from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TranslationCorpusError(f"cannot read {path} as UTF-8 text: {e}") from None


def pairs(work: str, split: str | None = None) -> list[Pair]:
    """Every pair of `work` in number order, or only those of `split` (DEV or TEST)."""
    if split is not None and split not in SPLITS:
        raise TranslationCorpusError(f"unknown split {split!r}: use {DEV!r}, {TEST!r} or None for both")
    out = []
    for entry in _index(work):
        n = int(entry["number"])
        s = split_of(work, entry)
        if split is not None and s != split:
            continue
        out.append(Pair(
            work=work,
            number=n,
            zh_text=_read(DATA / work / "zh" / f"{n:03d}.txt"),
            en_text=_read(DATA / work / "en" / f"{n:03d}.txt"),
            title=f"{entry.get('title_en', '')} / {entry.get('title_zh', '')}",
            split=s,
            anchor_zh=entry.get("anchor_zh", ""),
            anchor_en=entry.get("anchor_en", ""),
        ))
    return out


def shared_corpus() -> Path:
    """The shared corpus folder: $FPT_SHARED/corpus if set, else ../shared/corpus.

    Raises TranslationCorpusError naming the path it looked for when it is missing.
    """
    base = Path(os.environ["FPT_SHARED"]) if os.environ.get("FPT_SHARED") else ROOT.parent / "shared"
    corpus = base / "corpus"
    if not (corpus / "zh_novels").is_dir():
        raise TranslationCorpusError(
            f"the shared corpus is missing: no {corpus / 'zh_novels'}. Check out ../shared next to the "
            "project or set FPT_SHARED to the folder that contains corpus/."
        )
    return corpus


def shared_chapters(novel: str) -> dict[int, str]:
    """Chapter number -> chapter body of zh_novels/<novel>.txt in the shared corpus, cut with
    fingerprint.chapters.split_chapters (the splitter the tracker uses when registering)."""
    from fingerprint.chapters import split_chapters

    path = shared_corpus() / "zh_novels" / f"{novel}.txt"
    text = _read(path) if path.is_file() else None
    if text is None:
        raise TranslationCorpusError(f"no {path}; the novels there are: "
                                     f"{', '.join(sorted(p.stem for p in path.parent.glob('*.txt')))}")
    return {ch.number: ch.body.strip() for ch in split_chapters(text) if ch.number is not None}
