"""Reading the documents a command works on, with the skip summary on stderr."""
from __future__ import annotations

from collections.abc import Sequence

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
