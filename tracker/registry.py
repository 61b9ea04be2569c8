"""Registering originals: a work's chapters into the store, their fingerprints
next to them, and their keys into the index."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fingerprint.book import book_chapters
from fingerprint.chapters import chinese_numeral
from fingerprint.engine import prepare
from fingerprint.errors import InputError
from fingerprint.index import index_keys
from pagetext.scrub import scrub
from pagetext.sources import ReadReport, image_files, read_documents, without_images

from .context import Context
from .fingerprints import pack_keys, params_of
from .media.images import ImageReport, register_images
from .store import BadRecord, Chapter, FingerprintRecord, Work

_NUMBER_IN_NAME = re.compile(r"第\s*([0-9零〇一二两三四五六七八九十百千]+)\s*[章回节卷]|(\d+)")


def number_in_name(name: str) -> int | None:
    """The chapter number a file name carries: "第十二回", "chapter-012", "12"."""
    m = _NUMBER_IN_NAME.search(name)
    if not m:
        return None
    try:
        return chinese_numeral(m.group(1)) if m.group(1) else int(m.group(2))
    except ValueError:
        return None


@dataclass
class ChapterInput:
    name: str  # unique within the work: file name without extension, or "第N回" style
    title: str
    text: str
    number: int | None = None


@dataclass
class RegisterReport:
    work: Work
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # no text left to fingerprint
    skipped: ReadReport = field(default_factory=ReadReport)
    images: ImageReport = field(default_factory=ImageReport)  # covers and illustrations


def work_id(title: str) -> str:
    """A work's id: its title with whitespace collapsed ("山城旧事", "Pride and Prejudice")."""
    wid = " ".join(title.split())
    if not wid or "/" in wid:
        raise InputError(f"a work title must be non-empty and contain no '/': {title!r}")
    return wid


def chapters_from(path: str | Path, report: ReadReport | None = None) -> list[ChapterInput]:
    """A folder: one chapter per file (name = file name without extension, in name order).
    A JSON Lines file: one chapter per record. One text file: split at its chapter headings
    (第X章/回/卷, Chapter N); a file without headings is one chapter."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file or directory: {p}; check the path")
    docs = list(read_documents([str(p)], report))
    if report is not None and p.is_dir():
        without_images(report)  # a work's folder may hold its covers: registered as images (register_work)
    if p.is_dir() or len(docs) != 1:
        numbered = [(number_in_name(d.key), d) for d in docs]
        numbered.sort(key=lambda nd: (nd[0] is None, nd[0] or 0, _natural(nd[1].key)))
        return [ChapterInput(name=d.key, title=d.meta.get("title") or d.key, text=d.text,
                             number=n if n is not None else order)
                for order, (n, d) in enumerate(numbered, 1)]
    doc = docs[0]
    parts = book_chapters(doc.text)  # named as `simtool track` names a book's chapters
    if len(parts) <= 1:
        return [ChapterInput(name=doc.key, title=doc.meta.get("title") or doc.key, text=doc.text, number=1)]
    return [ChapterInput(name=c.name, title=c.title, text=c.text, number=c.number) for c in parts]


def _natural(key: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


def register_work(ctx: Context, title: str, path: str | Path | None = None, *, author: str = "",
                  images: Sequence[str | Path] = (),
                  progress: Callable[[Iterable], Iterable] | None = None) -> RegisterReport:
    """Register (or update) a work from a file or folder; changed chapters are re-fingerprinted.
    The image files in the folder, and those in `images` (files or folders), are registered as the
    work's covers and illustrations. With images only (no path), the work keeps its chapters.
    `progress` wraps the list of chapters (a progress bar)."""
    skipped = ReadReport()
    # Arguments that were not valid UTF-8 reach Python as lone surrogates, which no store takes.
    (title, bad_title), (author, bad_author) = scrub(title), scrub(author)
    skipped.add_replaced("the title and author", bad_title + bad_author)
    if path is None and not images:
        raise InputError("give the work's text (a file or folder of chapters), its images (--cover), or both")
    inputs = chapters_from(path, skipped) if path is not None else []
    if path is not None and not inputs and not (Path(path).is_dir() and image_files([path])) and not images:
        raise InputError(f"no chapters to register in {path}: give a text file, a folder of chapter files, "
                         "or a JSON Lines file of {\"id\", \"text\"} records")
    work = ctx.store.upsert_work(Work(id=work_id(title), title=title, author=author))
    report = RegisterReport(work=work, skipped=skipped)
    for c in progress(inputs) if progress else inputs:
        try:
            ch, status = register_chapter(
                ctx, Chapter(key=f"{work.id}/{c.name}", work=work.id, title=c.title, text=c.text, number=c.number))
        except BadRecord as e:  # one chapter the store refuses does not cost the others
            skipped.add_skip(c.name, f"not stored: {e}")
            continue
        getattr(report, status).append(ch.key)
    folders = [path] if path is not None and Path(path).is_dir() else []
    report.images = register_images(ctx, work.id, [*folders, *images])
    return report


def register_chapter(ctx: Context, chapter: Chapter, *, keep: bool = True) -> tuple[Chapter, str]:
    """Store a chapter; when its text is new or changed, fingerprint and index it.
    Returns the stored chapter and what happened: "added", "changed", "unchanged" or "empty".
    `keep=False` does not keep the prepared chapter in the matcher's cache (an upload of
    thousands of chapters would otherwise hold a GB of them for nothing)."""
    is_new = _known_doc(ctx, chapter.key) is None
    ch, changed = ctx.store.upsert_chapter(chapter)
    if not changed:
        return ch, "unchanged"
    p = prepare(ch.key, ch.text, ctx.config, {"work": ch.work, "title": ch.title})
    keys = index_keys(p, ctx.config, ctx.params, role="original")
    ctx.store.put_fingerprint(FingerprintRecord(chapter=ch.key, params_hash=ctx.params_hash,
                                                params=params_of(ctx.config, ctx.params), data=pack_keys(keys)))
    ctx.tracker.originals.pop(ch.doc, None)
    if keys.empty:
        ctx.index.remove(ch.doc)
        return ch, "empty"
    ctx.index.add(ch.doc, keys)
    if keep:
        ctx.tracker.originals[ch.doc] = p
    return ch, "added" if is_new else "changed"


def _known_doc(ctx: Context, key: str) -> int | None:
    from .store import NotFound

    try:
        return ctx.store.get_chapter(key).doc
    except NotFound:
        return None
