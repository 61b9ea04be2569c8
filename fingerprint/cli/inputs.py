"""Reading the documents a command works on, with the skip summary on stderr."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..models import Document
from ..sources import ReadReport, read_documents
from .common import note


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
        raise InputError(f"{path} holds {len(docs)} documents; {what} must be a single text (one file, one record)")
    return docs[0]


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")
MAX_IMAGE_BYTES = 50 * 2**20


def image_inputs(inputs: Sequence[str]) -> list[tuple[str, Path]]:
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


def load_with_images(inputs: Sequence[str], *, what: str, quiet: bool, verbose: bool = False):
    """(text documents, [(key, ImageFingerprint)]) of `inputs`; an error naming `what` when both are empty.
    An image that cannot be read is skipped with its reason, as a text that cannot be."""
    from ..image import fingerprint_image

    images = []
    problems = []
    for key, path in image_inputs(inputs):
        try:
            if path.stat().st_size > MAX_IMAGE_BYTES:
                raise InputError(f"larger than {MAX_IMAGE_BYTES // 2**20} MiB")
            images.append((key, fingerprint_image(path.read_bytes(), name="the file")))
        except (OSError, InputError) as e:
            problems.append(f"skipped {path}: {e}")
    report = ReadReport()
    docs = list(read_documents(inputs, report))
    report.skipped = [s for s in report.skipped if not s.source.lower().endswith(IMAGE_SUFFIXES)]
    if report.problems or problems:
        note(f"{what}: {report.summary()}; {len(images)} images" + (f", {len(problems)} unreadable" if problems
                                                                   else ""), quiet=quiet)
        if verbose:
            for line in report.details() + problems:
                note(f"  {line}", quiet=quiet)
    if not docs and not images:
        raise InputError(f"no {what} to read in {', '.join(inputs)}: give .txt, .html, .jsonl or image files "
                         "(.jpg, .png, .gif, .webp, .bmp), or a folder of them")
    return docs, images
