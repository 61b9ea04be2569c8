"""Read the documents every simtool command works on: files, folders, JSON Lines, standard input.

One bad input (an image in a folder, a broken JSON line, an empty file) must
not stop a run over thousands of pages, and must not vanish silently either:
it is recorded in a ReadReport with the reason, and the command prints a
one-line summary. A few bad bytes or lone surrogates (JSON's "\\ud800") do
not cost the document: they become U+FFFD, and the report counts them per
source. Only a path that does not exist stops the run, because that is a
typing mistake the user wants to hear about at once.
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from fingerprint.errors import InputError
from fingerprint.models import Document, Skipped
from pagetext.encoding import decode
from pagetext.html import html_to_text, looks_like_html
from pagetext.scrub import scrub, scrub_value

__all__ = ["IMAGE_SUFFIXES", "ReadReport", "image_files", "read_documents", "read_text", "without_images"]

HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".shtml"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
# Files that are never text, skipped without reading them.
BINARY_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .bmp .webp .ico .tif .tiff .svgz .psd .mp3 .mp4 .m4a .wav .flac .ogg .avi .mkv .mov "
    ".webm .zip .gz .tgz .bz2 .xz .7z .rar .tar .jar .pdf .doc .docx .xls .xlsx .ppt .pptx .epub .mobi .azw3 "
    ".exe .dll .so .dylib .bin .o .pyc .class .woff .woff2 .ttf .otf .sqlite .db .npy .npz .pkl".split()
)
_HAS_CONTENT = re.compile(r"[^\W_]")  # a letter, digit or CJK character
# Images that simtool and the tracker fingerprint as images (fingerprint.image), where texts are skipped.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")


def image_files(inputs: Sequence[str | Path]) -> list[tuple[str, Path]]:
    """The image files among `inputs` (files, or folders searched recursively), as (key, path):
    the key is the file's path inside its folder without the extension, as for texts."""
    out: list[tuple[str, Path]] = []
    for given in inputs:
        path = Path(given)
        if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES:
            out.append((path.stem, path))
        elif path.is_dir():
            for f in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES):
                out.append((f.relative_to(path).with_suffix("").as_posix(), f))
    return out


def without_images(report: ReadReport) -> ReadReport:
    """The report without the image files it skipped as binary (read as images elsewhere)."""
    report.skipped = [s for s in report.skipped if not s.source.lower().endswith(IMAGE_SUFFIXES)]
    return report


@dataclass
class ReadReport:
    """Counts what was read and what was skipped, with reasons."""

    documents: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    replaced: dict[str, int] = field(default_factory=dict)  # source -> bad bytes or code points made U+FFFD

    def add_skip(self, source: str, reason: str) -> None:
        self.skipped.append(Skipped(scrub(source)[0], scrub(reason)[0]))

    def add_replaced(self, source: str, n: int) -> None:
        if n:
            source = scrub(source)[0]
            self.replaced[source] = self.replaced.get(source, 0) + n

    @property
    def problems(self) -> bool:
        """Whether the summary has more to say than the number of documents."""
        return bool(self.skipped or self.replaced)

    def details(self) -> list[str]:
        """One line per skipped input and per damaged one, for --verbose."""
        lines = [f"skipped {s.source}: {s.reason}" for s in self.skipped]
        lines += [f"replaced {n} bad character{'' if n == 1 else 's'} with U+FFFD in {source}"
                  for source, n in self.replaced.items()]
        return lines

    def by_reason(self) -> dict[str, int]:
        """Skips per kind, most frequent first; the kind is the reason up to its first colon."""
        counts = Counter(s.reason.split(":", 1)[0].strip() for s in self.skipped)
        return dict(counts.most_common())

    def summary(self) -> str:
        """One line for standard error, e.g. "read 12 documents; skipped 2: 1 empty, 1 binary (see --verbose)"."""
        head = f"read {self.documents} document{'' if self.documents == 1 else 's'}"
        if self.replaced:
            n, where = sum(self.replaced.values()), len(self.replaced)
            head += (f"; {n} bad character{'' if n == 1 else 's'} replaced with U+FFFD in {where} "
                     f"input{'' if where == 1 else 's'}")
        if not self.problems:
            return head
        if not self.skipped:
            return f"{head} (see --verbose)"
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.by_reason().items())
        return f"{head}; skipped {len(self.skipped)}: {kinds} (see --verbose)"


@dataclass
class _Entry:
    path: Path
    shown: str  # the path as the user would write it: the input joined with the part below it
    rel: Path | None  # below the given directory, or None for a file given directly
    key: str = ""


def read_documents(
    inputs: Sequence[str], report: ReadReport | None = None, *, stdin: BinaryIO | None = None
) -> Iterator[Document]:
    """Yield Documents from files, directories (recursive, sorted, hidden files skipped), JSON Lines
    files, and '-' (standard input).

    A file's key is its name without extension; when two files share that
    name, their keys become their paths below the given directory (with '/'),
    so results stay unambiguous. JSON Lines records use their "id" (or "key").
    A key seen before is skipped as "duplicate key". Problems with single
    inputs go to `report`; a path that does not exist raises InputError
    before anything is read.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [os.fspath(inputs)]
    report = report if report is not None else ReadReport()
    groups: list[str | list[_Entry]] = []  # "-" or the files of one input, so order follows the inputs
    for given in inputs:
        given = os.fspath(given)
        if given == "-":
            groups.append("-")
            continue
        path = Path(given)
        if not path.exists():
            raise InputError(f"no such file or directory: {given}; check the path")
        if path.is_dir():
            groups.append(_walk(path, given, report))
        else:
            groups.append([_Entry(path, given, None)])
    _assign_keys([e for g in groups if g != "-" for e in g])

    seen: dict[str, str] = {}  # key -> where it was first read
    for group in groups:
        docs = _read_stdin(stdin, report) if group == "-" else (d for e in group for d in _read_entry(e, report))
        for doc in docs:
            doc = _scrubbed(doc, report)
            if doc.key in seen:
                report.add_skip(doc.source, "duplicate key")
                continue
            seen[doc.key] = doc.source
            report.documents += 1
            yield doc


def read_text(path: str | Path) -> str:
    """One file, decoded (any encoding decode_bytes recognises); raises InputError naming the path."""
    return _read_bytes_decoded(Path(path), str(path))[0]


def _scrubbed(doc: Document, report: ReadReport) -> Document:
    """The document with lone surrogates (JSON escapes, undecodable file names) made U+FFFD, counted."""
    key, a = scrub(doc.key)
    text, b = scrub(doc.text)
    source, d = scrub(doc.source)  # an undecodable file name: the same name as in the report
    meta, c = scrub_value(doc.meta)
    if not (a or b or c or d):
        return doc
    path = doc.meta.get("path")
    c -= scrub(path)[1] if isinstance(path, str) else 0  # the source's name again: counted once, in the key
    report.add_replaced(source, a + b + c)
    return Document(key=key, text=text, source=source, meta=meta)


def _read_bytes_decoded(path: Path, shown: str) -> tuple[str, str, int]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such file or directory: {shown}; check the path") from None
    except IsADirectoryError:
        raise InputError(f"{shown} is a directory; give a file, or use a command that reads folders") from None
    except PermissionError:
        raise InputError(f"unreadable: permission denied for {shown}; check its permissions") from None
    except OSError as e:
        raise InputError(f"unreadable: {shown}: {e.strerror or e}; check the file") from None
    try:
        return decode(data)
    except InputError as e:
        raise InputError(f"{shown}: {e}") from None


def _walk(root: Path, given: str, report: ReadReport) -> list[_Entry]:
    """Every non-hidden file below `root`, sorted by relative path; unreadable folders are reported."""
    entries = []

    def on_error(err: OSError) -> None:
        report.add_skip(str(err.filename or given), f"unreadable: {err.strerror or err}; check its permissions")

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.startswith("."):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(root)
            entries.append(_Entry(full, os.path.join(given, *rel.parts), rel))
    entries.sort(key=lambda e: e.rel.parts)
    return entries


def _assign_keys(entries: list[_Entry]) -> None:
    """Name-without-extension keys, made longer only where two files would share one.

    Levels: stem; path below the given directory without extension; the shown
    path without extension; the shown path with extension. JSON Lines files
    and known binary files do not take part (their file name is not a key).
    """
    named = [e for e in entries if not _is_jsonl(e.path) and e.path.suffix.lower() not in BINARY_SUFFIXES]
    levels = (
        lambda e: e.path.stem,
        lambda e: (e.rel.with_suffix("") if e.rel else Path(e.shown).with_suffix("")).as_posix(),
        lambda e: Path(e.shown).with_suffix("").as_posix(),
        lambda e: Path(e.shown).as_posix(),
    )
    pending = named
    for level in levels:
        for e in pending:
            e.key = level(e)
        counts = Counter(e.key for e in named)
        pending = [e for e in pending if counts[e.key] > 1]
        if not pending:
            break


def _is_jsonl(path: Path) -> bool:
    return path.suffix.lower() in JSONL_SUFFIXES


def _read_entry(entry: _Entry, report: ReadReport) -> Iterator[Document]:
    path, shown = entry.path, entry.shown
    suffix = path.suffix.lower()
    if suffix in BINARY_SUFFIXES:
        report.add_skip(shown, f"binary: {suffix} files are not text; convert it to a .txt or .html file first")
        return
    try:
        text, encoding, replaced = _read_bytes_decoded(path, shown)
    except InputError as e:
        report.add_skip(shown, str(e).removeprefix(f"{shown}: "))
        return
    report.add_replaced(shown, replaced)
    if suffix in JSONL_SUFFIXES:
        yield from _jsonl_documents(text, shown, encoding, report)
        return
    doc = _text_document(entry.key, text, shown, encoding, html=suffix in HTML_SUFFIXES)
    if _usable(doc, report):
        yield doc


def _read_stdin(stdin: BinaryIO | None, report: ReadReport) -> Iterator[Document]:
    stream = stdin if stdin is not None else sys.stdin.buffer
    data = stream.read()
    if isinstance(data, str):  # a text stream was passed; take it as it is
        text, encoding = data, "utf-8"
    else:
        try:
            text, encoding, replaced = decode(data)
        except InputError as e:
            report.add_skip("-", str(e))
            return
        report.add_replaced("-", replaced)
    if text.lstrip()[:1] == "{":
        yield from _jsonl_documents(text, "-", encoding, report)
        return
    doc = _text_document("stdin", text, "-", encoding, html=False)
    if _usable(doc, report):
        yield doc


def _text_document(key: str, text: str, source: str, encoding: str, *, html: bool) -> Document:
    meta: dict[str, Any] = {"encoding": encoding, "path": source}
    if html or looks_like_html(text):
        text, page = html_to_text(text)
        meta.update(format="html", title=page.get("title", ""))
    else:
        meta["format"] = "text"
    return Document(key=key, text=text, source=source, meta=meta)


def _usable(doc: Document, report: ReadReport) -> bool:
    if _HAS_CONTENT.search(doc.text):
        return True
    report.add_skip(doc.source, "empty")
    return False


def _jsonl_documents(text: str, shown: str, encoding: str, report: ReadReport) -> Iterator[Document]:
    """One Document per line of {"id": ..., "text": ...}; "key" may stand for "id" and "html" for "text".

    Other fields with plain values (url, title, site...) are kept in meta. A
    .json file holding one JSON array of such objects is read the same way.
    """
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(stripped)
        except (ValueError, RecursionError):  # read line by line below, each bad line reported
            records = None
        if isinstance(records, list):
            for i, rec in enumerate(records, 1):
                doc = _record_document(rec, f"{shown}:{i}", shown, encoding, report)
                if doc is not None:
                    yield doc
            return
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        source = f"{shown}:{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            report.add_skip(source, f"invalid JSON: {e.msg} at column {e.colno}; fix or remove the line")
            continue
        except RecursionError:
            report.add_skip(source, "invalid JSON: nested too deeply to read; fix or remove the line")
            continue
        except ValueError as e:  # e.g. an integer of more digits than Python converts
            report.add_skip(source, f"invalid JSON: {e}; fix or remove the line")
            continue
        doc = _record_document(rec, source, shown, encoding, report)
        if doc is not None:
            yield doc


def _record_document(rec: Any, source: str, shown: str, encoding: str, report: ReadReport) -> Document | None:
    if not isinstance(rec, dict):
        report.add_skip(source, 'not an object: each line must be an object like {"id": "...", "text": "..."}')
        return None
    key = rec.get("id", rec.get("key"))
    if key is None or isinstance(key, bool) or not isinstance(key, (str, int)) or str(key).strip() == "":
        report.add_skip(source, 'missing id: give each record a string "id" (or "key")')
        return None
    is_html = "text" not in rec and "html" in rec
    content = rec.get("html") if is_html else rec.get("text")
    if content is None:
        report.add_skip(source, 'missing text: give each record a "text" (or "html") string')
        return None
    if not isinstance(content, str):
        report.add_skip(source, f'text not a string: got {type(content).__name__}; store the text as a JSON string')
        return None
    meta: dict[str, Any] = {
        k: v for k, v in rec.items()
        if k not in ("id", "key", "text", "html") and isinstance(v, (str, int, float, bool))
    }
    meta.update(encoding=encoding, format="jsonl", path=shown, line=int(source.rsplit(":", 1)[1]))
    if is_html or looks_like_html(content):
        content, page = html_to_text(content)
        meta["title"] = meta.get("title") or page.get("title", "")
        meta["content"] = "html"
    doc = Document(key=str(key), text=content, source=source, meta=meta)
    return doc if _usable(doc, report) else None
