"""Zips of chapter files, read safely: entries counted and unpacked to a temporary folder within
budgets (total size, size of one entry, compression ratio), archives inside refused, entry names
kept inside the folder; then the folder is read as `fptrack add-work` reads one."""
from __future__ import annotations

import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from pagetext.scrub import scrub
from pagetext.sources import IMAGE_SUFFIXES, ReadReport

from ..registry import chapters_from
from .upload import FIXES, MAX_IMAGES, Limits, Upload, UploadError

__all__ = ["ZIP_MAGIC", "check_zip", "epub_mimetype", "open_zip", "read_chapter_zip", "safe_name"]

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with entries; an empty zip
ARCHIVE_SUFFIXES = frozenset(".zip .rar .7z .gz .tgz .bz2 .xz .tar .jar .epub .cbz .apk".split())
CHUNK = 64 * 1024

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
               ValueError, OSError)


def open_zip(stream: BinaryIO) -> zipfile.ZipFile:
    try:
        zf = zipfile.ZipFile(stream)
        zf.infolist()
    except _ZIP_ERRORS as e:
        raise UploadError(f"the zip cannot be read ({e}); make it again, or {FIXES}") from None
    return zf


def epub_mimetype(zf: zipfile.ZipFile) -> bool:
    try:
        info = zf.getinfo("mimetype")
    except KeyError:
        return False
    if info.file_size > 100:
        return False
    try:
        return zf.read(info).strip() == b"application/epub+zip"
    except _ZIP_ERRORS:
        return False


def check_zip(zf: zipfile.ZipFile, size: int, limits: Limits) -> list[zipfile.ZipInfo]:
    """The zip's files, refused before anything is unpacked when what they claim breaks a budget:
    their number, their total size, and the whole archive's compression ratio (many entries,
    each just under the per-entry floor, add up to a bomb as surely as one big one)."""
    files = [i for i in zf.infolist() if not i.filename.endswith("/")]  # is_dir() fails on a name cut to ""
    if len(files) > limits.max_entries:
        raise UploadError(f"the zip holds {len(files):,} files; upload at most {limits.max_entries:,} "
                          "(one file per chapter)")
    claimed = sum(i.file_size for i in files)
    if claimed > limits.max_total:
        raise UploadError(f"the zip would unpack to more than {limits.max_total:,} bytes (a zip bomb?); "
                          "upload a smaller work")
    _check_ratio(claimed, size, limits)
    return files


def _check_ratio(total: int, size: int, limits: Limits) -> None:
    if total > limits.ratio_floor and total > limits.max_ratio * max(1, size):
        raise UploadError(f"the zip unpacks to {total // max(1, size):,} times its size (over {limits.max_ratio}:1, "
                          "a zip bomb?); upload the chapters as they are, or zip them with ordinary compression")


def read_chapter_zip(zf: zipfile.ZipFile, size: int, limits: Limits) -> Upload:
    """Copy the zip's files to a temporary folder in chunks, within the budgets (the actual bytes
    counted, whatever the headers claim), then read the folder as `fptrack add-work` does."""
    files = check_zip(zf, size, limits)
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        root = Path(tmp).resolve()
        written: dict[str, str] = {}  # the name on disk -> the entry's name, to explain a clash
        images: list[tuple[str, bytes]] = []
        total = 0
        for info in files:
            name = safe_name(info.filename)
            if not name:
                continue  # "..", an absolute path, a hidden file or macOS's resource forks: ignored
            if info.flag_bits & 0x1:
                raise UploadError(f"{name} in the zip is encrypted; zip the chapters without a password")
            if PurePosixPath(name).suffix.lower() in ARCHIVE_SUFFIXES:
                raise UploadError(f"the zip holds another archive ({name}); put the chapter files themselves "
                                  "in one zip")
            _check_clash(name, written)
            budget = min(limits.max_entry, limits.max_total - total)
            path = root / name
            n = _copy_entry(zf, info, name, path, budget, limits)
            total += n
            _check_ratio(total, size, limits)
            written[name.casefold()] = name
            if PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES and len(images) < MAX_IMAGES:
                images.append((PurePosixPath(name).name, path.read_bytes()))
        if not written:
            raise UploadError("the zip is empty; put one file per chapter (.txt or .html) in it")
        report = ReadReport()
        chapters = chapters_from(root, report)
    if not chapters:
        reasons = "; ".join(report.details()[:3])
        raise UploadError("no file in the zip holds text" + (f" ({reasons})" if reasons else "")
                          + "; put one .txt or .html file per chapter in it")
    return Upload("zip", chapters, report, images)


def _check_clash(name: str, written: dict[str, str]) -> None:
    """Refuse two entries that would be one file on disk, or a file that is also a folder."""
    key = name.casefold()
    if key in written:
        raise UploadError(f"the zip holds two files named {name!r} (names differing only in case count as one); "
                          "rename one of them")
    parts = key.split("/")
    for i in range(1, len(parts)):
        folder = "/".join(parts[:i])
        if folder in written:
            raise UploadError(f"the zip holds a file {written[folder]!r} and a folder of the same name "
                              f"({name!r}); rename one of them")
    prefix = key + "/"
    for other in written:
        if other.startswith(prefix):
            raise UploadError(f"the zip holds a folder {name!r} and a file of the same name "
                              f"({written[other]!r}); rename one of them")


def _copy_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, path: Path, budget: int,
                limits: Limits) -> int:
    """Copy one entry to `path` in chunks; its size in bytes. Stops as soon as it passes its budget
    or its own compression ratio."""
    n = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, open(path, "xb") as dst:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                n += len(chunk)
                if n > budget:
                    raise UploadError(f"{name} unpacks to more than {budget:,} bytes (a zip bomb?); "
                                      "upload a smaller work")
                if n > limits.ratio_floor and n > limits.max_ratio * max(1, info.compress_size):
                    raise UploadError(f"{name} is compressed {n // max(1, info.compress_size):,} to 1 "
                                      f"(over {limits.max_ratio}:1, a zip bomb?); upload the chapters as they are")
                if n <= len(chunk) and chunk.startswith(ZIP_MAGIC):
                    raise UploadError(f"the zip holds another archive ({name}); put the chapter files themselves "
                                      "in one zip")
                dst.write(chunk)
    except UploadError:
        raise
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        raise UploadError(f"the zip holds a file and a folder both named like {name!r}; rename one of them") from None
    except _ZIP_ERRORS as e:
        raise UploadError(f"{name} in the zip cannot be unpacked ({e}); make the zip again with "
                          "ordinary (deflate) compression") from None
    return n


def safe_name(raw: str) -> str:
    """A zip entry's name as a relative path with no way out: "..", ".", empty and absolute parts
    dropped, backslashes as separators; "" for hidden files and resource forks. Each part fits a
    file system's name limit (255 bytes) and holds no control character."""
    scrubbed, _ = scrub(raw.replace("\\", "/"))
    parts = [p for p in scrubbed.split("/") if p not in ("", ".", "..")]
    if not parts or any(p.startswith(".") or p == "__MACOSX" for p in parts):
        return ""
    parts = [_fit("".join(ch for ch in p if ch >= " " and ch != "\x7f")) for p in parts]
    return "/".join(p for p in parts if p and p not in (".", ".."))


def _fit(part: str, limit: int = 200) -> str:
    """`part` cut to at most `limit` UTF-8 bytes, keeping its suffix (.txt) when it has one."""
    if len(part.encode("utf-8")) <= limit:
        return part
    suffix = PurePosixPath(part).suffix
    suffix = suffix if len(suffix) <= 10 else ""
    stem = part[: len(part) - len(suffix)] if suffix else part
    while len((stem + suffix).encode("utf-8")) > limit:
        stem = stem[:-1]
    return stem + suffix
