"""Reading an upload whole: its kind told by its bytes (a zip of chapter files, an EPUB, one text
or HTML file), its size checked, and its chapters read (read_upload)."""
from __future__ import annotations

import io
import tempfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from fingerprint.errors import InputError
from pagetext.encoding import decode
from pagetext.sources import ReadReport

from ..registry import chapters_from
from .epubs import read_epub
from .upload import FIXES, HAS_CONTENT, Limits, Upload, UploadError
from .zips import ZIP_MAGIC, check_zip, epub_mimetype, open_zip, read_chapter_zip, safe_name

__all__ = ["Source", "read_upload"]

TEXT_SUFFIXES = frozenset(".txt .text .md .html .htm .xhtml .jsonl .ndjson .json".split())

Source = bytes | str | Path | BinaryIO


def read_upload(filename: str, data: Source, limits: Limits = Limits()) -> Upload:
    """The chapters of an uploaded file (its bytes, a path, or a binary file open for reading, as
    werkzeug spools an upload to disk); raises UploadError (never anything else for bad bytes).
    A zip is never unpacked in memory: its entries are copied to a temporary folder in chunks,
    within the budgets, and read from there."""
    if isinstance(data, (str, Path)):
        with open(data, "rb") as f:
            return read_upload(filename, f, limits)
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, (bytes, bytearray, memoryview)) else data
    size = _size(stream)
    if size > limits.max_bytes:
        raise UploadError(f"the file is {size:,} bytes; upload at most {limits.max_bytes:,} bytes "
                          "(split the work, or zip its chapters)")
    head = stream.read(4)
    stream.seek(0)
    if head.startswith(ZIP_MAGIC):
        zf = open_zip(stream)
        names = {i.filename for i in zf.infolist()}
        if "META-INF/container.xml" in names or epub_mimetype(zf):
            check_zip(zf, size, limits)
            return read_epub(stream)
        return read_chapter_zip(zf, size, limits)
    body = stream.read(limits.max_bytes + 1)
    if not body.strip():
        raise UploadError(f"the file is empty; {FIXES}")
    return _read_text(filename, body)


def _size(stream: BinaryIO) -> int:
    try:
        stream.seek(0, io.SEEK_END)
        size = stream.tell()
        stream.seek(0)
    except (OSError, ValueError) as e:
        raise UploadError(f"the upload cannot be read ({e}); send it again") from None
    return size


def _read_text(filename: str, data: bytes) -> Upload:
    try:
        decode(data)
    except InputError as e:
        raise UploadError(f"the file is not text ({e}); {FIXES}") from None
    suffix = PurePosixPath(safe_name(filename) or "work.txt").suffix.lower()
    suffix = suffix if suffix in TEXT_SUFFIXES else ".txt"
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        path = Path(tmp) / f"work{suffix}"
        path.write_bytes(data)
        del data
        report = ReadReport()
        chapters = chapters_from(path, report)
    chapters = [c for c in chapters if HAS_CONTENT.search(c.text)]
    if not chapters:
        raise UploadError(f"the file holds no text to register; {FIXES}")
    return Upload("text", chapters, report)
