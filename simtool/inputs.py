"""Reading the documents a command works on, with the skip summary on stderr."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from clikit.common import note, progress
from clikit.plural import counted
from fingerprint.book import book_chapters
from fingerprint.errors import InputError
from fingerprint.models import Document
from ocr.pictures import PictureReader, picture_posts
from pagetext.sources import ReadReport, image_files, read_documents, without_images


def load(inputs: Sequence[str], *, what: str, quiet: bool, verbose: bool = False) -> list[Document]:
    """All documents of `inputs`; an error naming `what` when there are none."""
    report = ReadReport()
    docs = list(read_documents(inputs, report))
    if report.problems:
        note(f"{what}: {report.summary()}", quiet=quiet)
        if verbose:
            for line in report.details():
                note(f"  {line}", quiet=quiet)
    if not docs:
        raise InputError(
            f"no {what} to read in {', '.join(inputs)}: give .txt, .html or .jsonl files, or a folder of them"
        )
    return docs


def load_one(path: str, *, what: str, quiet: bool) -> Document:
    docs = load([path], what=what, quiet=quiet)
    if len(docs) != 1:
        raise InputError(f"{path} holds {counted(len(docs), 'document')}; {what} must be a single text (one file, one record)")
    return docs[0]


MAX_IMAGE_BYTES = 50 * 2**20


def load_with_images(inputs: Sequence[str], *, what: str, quiet: bool, verbose: bool = False):
    """(text documents, [(key, ImageFingerprint)]) of `inputs`; an error naming `what` when both are empty.
    An image that cannot be read is skipped with its reason, as a text that cannot be."""
    from fingerprint.image import fingerprint_image

    images = []
    problems = []
    for key, path in image_files(inputs):
        try:
            if path.stat().st_size > MAX_IMAGE_BYTES:
                raise InputError(f"larger than {MAX_IMAGE_BYTES // 2**20} MiB")
            images.append((key, fingerprint_image(path.read_bytes(), name="the file")))
        except (OSError, InputError) as e:
            problems.append(f"skipped {path}: {e}")
    report = ReadReport()
    docs = list(read_documents(inputs, report))
    without_images(report)
    if report.problems or problems:
        note(f"{what}: {report.summary()}; {counted(len(images), 'image')}" + (f", {len(problems)} unreadable" if problems
                                                                   else ""), quiet=quiet)
        if verbose:
            for line in report.details() + problems:
                note(f"  {line}", quiet=quiet)
    if not docs and not images:
        raise InputError(f"no {what} to read in {', '.join(inputs)}: give .txt, .html, .jsonl or image files "
                         "(.jpg, .png, .gif, .webp, .bmp), or a folder of them")
    return docs, images


def split_book(path: str, docs: list[Document], *, quiet: bool) -> list[Document]:
    """A single file holding a whole book (several chapter headings) as its chapters, split and
    named as `fptrack add-work` splits and names them (fingerprint.book), keyed BOOK/CHAPTER as
    the tracker keys WORK/CHAPTER; a folder, a JSON Lines file of several records or a file of
    one chapter is returned as read."""
    if len(docs) != 1 or not Path(path).is_file():
        return docs
    doc = docs[0]
    parts = book_chapters(doc.text)
    if len(parts) <= 1:
        return docs
    note(f"{path}: a whole book, split into {counted(len(parts), 'chapter')}", quiet=quiet)
    return [replace(doc, key=f"{doc.key}/{c.name}", text=c.text, meta={**doc.meta, "title": c.title,
                                                                       "chapter": c.number})
            for c in parts]


join_pictures_option = click.option(
    "--join-pictures", "join_pictures", flag_value="all", default="auto",
    help="Read every picture given as one page, in the order given (a chapter posted as several "
         "screenshots whose names do not say so). By default pictures named like parts of one post "
         "(ch12-1.png, ch12-2.png; ch12(1).png...) are joined, other pictures are pages of their own.")
separate_pictures_option = click.option(
    "--separate-pictures", "join_pictures", flag_value="none",
    help="Read every picture as a page of its own, even when names like ch12-1.png, ch12-2.png say parts of one post.")


def load_pictures(inputs: Sequence[str], *, what: str, quiet: bool, verbose: bool = False, join: str = "auto",
                  reader: PictureReader | None = None) -> tuple[list[Document], PictureReader]:
    """The pictures among `inputs` that hold text, read by OCR into Documents (one per post,
    ocr.pictures), with a progress bar; textless and unreadable ones are skipped with
    their reason and summed up on stderr like skipped texts."""
    posts = picture_posts(inputs, join=join)
    reader = reader or PictureReader()
    docs: list[Document] = []
    report = ReadReport()
    for post in progress(posts, quiet=quiet, desc="reading pictures", unit="post"):
        got = reader.read(post)
        if isinstance(got, str):
            report.add_skip(post.shown, got)
        else:
            docs.append(got)
            report.documents += 1
    if posts:
        pictures = sum(len(p.paths) for p in posts)
        head = (f"{what}: {counted(pictures, 'picture')}: {counted(len(docs), 'page')} read by OCR "
                f"({counted(reader.pictures_read, 'picture')}, {reader.seconds:.1f} s)")
        if report.skipped:
            kinds = ", ".join(f"{n} {kind}" for kind, n in report.by_reason().items())
            head += f"; skipped {len(report.skipped)}: {kinds}" + ("" if verbose else " (see --verbose)")
        note(head, quiet=quiet)
        if verbose:
            for line in report.details():
                note(f"  {line}", quiet=quiet)
    return docs, reader
