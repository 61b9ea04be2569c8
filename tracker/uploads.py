"""Novels uploaded through the admin or the API: read whole, split into chapters, then registered.

An upload is one of three kinds, told apart by its bytes, not its name:

- a zip of chapter files (a folder of chapters: .txt, .html, JSON Lines), read as
  `fptrack add-work` reads a folder (tracker.registry.chapters_from);
- one text file (any common encoding, or HTML), split at its chapter headings;
- an EPUB, whose chapters are the documents of its spine (ebooklib), their XHTML read
  by the project's HTML reader (fingerprint.html).

Reading is safe against hostile files: a zip's entries are counted and decompressed with
a budget (total size, size of one entry, compression ratio), archives inside it are
refused, and entry names never leave the temporary folder they are written to (`..` and
absolute parts are dropped). Every problem is an UploadError whose message names it and
the fix. Nothing is registered until the whole upload is read and split; a registration
that fails half-way is removed again, so the store never holds half a work.
"""
from __future__ import annotations

import io
import re
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fingerprint.encoding import decode
from fingerprint.errors import InputError
from fingerprint.scrub import scrub
from fingerprint.sources import IMAGE_SUFFIXES, ReadReport

from .context import Context
from .images import register_image
from .registry import ChapterInput, RegisterReport, chapters_from, register_chapter, work_id
from .store import Chapter, NotFound, Work

__all__ = ["Limits", "Upload", "UploadError", "WorkExists", "read_upload", "register_upload", "remove_work"]

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with entries; an empty zip
ARCHIVE_SUFFIXES = frozenset(".zip .rar .7z .gz .tgz .bz2 .xz .tar .jar .epub .cbz .apk".split())
TEXT_SUFFIXES = frozenset(".txt .text .md .html .htm .xhtml .jsonl .ndjson .json".split())
_HAS_CONTENT = re.compile(r"[^\W_]")
MAX_IMAGES = 50  # covers and illustrations registered from one upload
FIXES = "upload a .txt file (split at its chapter headings), a .zip of chapter files, or an .epub"


class UploadError(InputError):
    """An upload that cannot be registered; the message names the problem and the fix."""


class WorkExists(UploadError):
    """A work with the upload's title is registered already."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 32 * 1024 * 1024  # the upload itself
    max_total: int = 128 * 1024 * 1024  # everything a zip decompresses to
    max_entry: int = 32 * 1024 * 1024  # one entry of a zip, decompressed
    max_entries: int = 10_000
    max_ratio: int = 100  # decompressed / compressed, per entry of more than RATIO_FLOOR bytes
    ratio_floor: int = 1024 * 1024


@dataclass
class Upload:
    kind: str  # "zip" | "text" | "epub"
    chapters: list[ChapterInput]
    skipped: ReadReport = field(default_factory=ReadReport)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (file name, bytes): covers, illustrations


# ---- reading -------------------------------------------------------------------------------

def read_upload(filename: str, data: bytes, limits: Limits = Limits()) -> Upload:
    """The chapters of an uploaded file; raises UploadError (never anything else for bad bytes)."""
    if len(data) > limits.max_bytes:
        raise UploadError(f"the file is {len(data):,} bytes; upload at most {limits.max_bytes:,} bytes "
                          "(split the work, or zip its chapters)")
    if not data.strip():
        raise UploadError(f"the file is empty; {FIXES}")
    if data.startswith(ZIP_MAGIC):
        entries = _zip_entries(data, limits)
        if _is_epub(entries):
            return _read_epub(data, entries)
        return _read_chapter_zip(entries)
    return _read_text(filename, data)


def _read_text(filename: str, data: bytes) -> Upload:
    try:
        decode(data)
    except InputError as e:
        raise UploadError(f"the file is not text ({e}); {FIXES}") from None
    suffix = PurePosixPath(_safe_name(filename) or "work.txt").suffix.lower()
    suffix = suffix if suffix in TEXT_SUFFIXES else ".txt"
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        path = Path(tmp) / f"work{suffix}"
        path.write_bytes(data)
        report = ReadReport()
        chapters = chapters_from(path, report)
    chapters = [c for c in chapters if _HAS_CONTENT.search(c.text)]
    if not chapters:
        raise UploadError(f"the file holds no text to register; {FIXES}")
    return Upload("text", chapters, report)


def _zip_entries(data: bytes, limits: Limits) -> dict[str, bytes]:
    """Every file of a zip, by its safe relative name, decompressed within the limits."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as e:
        raise UploadError(f"the zip cannot be read ({e}); make it again, or {FIXES}") from None
    files = [i for i in infos if not i.is_dir()]
    if len(files) > limits.max_entries:
        raise UploadError(f"the zip holds {len(files):,} files; upload at most {limits.max_entries:,} "
                          "(one file per chapter)")
    if sum(i.file_size for i in files) > limits.max_total:
        raise UploadError(f"the zip would unpack to more than {limits.max_total:,} bytes (a zip bomb?); "
                          "upload a smaller work")
    out: dict[str, bytes] = {}
    total = 0
    for info in files:
        name = _safe_name(info.filename)
        if not name:
            continue  # "..", an absolute path, a hidden file or macOS's resource forks: ignored
        if info.flag_bits & 0x1:
            raise UploadError(f"{name} in the zip is encrypted; zip the chapters without a password")
        budget = min(limits.max_entry, limits.max_total - total)
        try:
            with zf.open(info) as f:
                body = f.read(budget + 1)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError, ValueError,
                OSError) as e:
            raise UploadError(f"{name} in the zip cannot be unpacked ({e}); make the zip again with "
                              "ordinary (deflate) compression") from None
        if len(body) > budget:
            raise UploadError(f"{name} unpacks to more than {budget:,} bytes (a zip bomb?); upload a smaller work")
        if len(body) > limits.ratio_floor and len(body) > limits.max_ratio * max(1, info.compress_size):
            raise UploadError(f"{name} is compressed {len(body) // max(1, info.compress_size):,} to 1 "
                              f"(over {limits.max_ratio}:1, a zip bomb?); upload the chapters as they are")
        total += len(body)
        out[name] = body
    return out


def _safe_name(raw: str) -> str:
    """A zip entry's name as a relative path with no way out: "..", ".", empty and absolute parts
    dropped, backslashes as separators; "" for hidden files and resource forks."""
    scrubbed, _ = scrub(raw.replace("\\", "/"))
    parts = [p for p in scrubbed.split("/") if p not in ("", ".", "..")]
    if not parts or any(p.startswith(".") or p == "__MACOSX" for p in parts):
        return ""
    parts = [re.sub(r"[\x00-\x1f]", "", p)[:120] for p in parts]
    return "/".join(p for p in parts if p)


def _is_epub(entries: dict[str, bytes]) -> bool:
    return entries.get("mimetype", b"").strip() == b"application/epub+zip" or "META-INF/container.xml" in entries


def _read_chapter_zip(entries: dict[str, bytes]) -> Upload:
    if not entries:
        raise UploadError("the zip is empty; put one file per chapter (.txt or .html) in it")
    for name, body in entries.items():
        if PurePosixPath(name).suffix.lower() in ARCHIVE_SUFFIXES or body.startswith(ZIP_MAGIC):
            raise UploadError(f"the zip holds another archive ({name}); put the chapter files themselves in one zip")
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        root = Path(tmp).resolve()
        for name, body in entries.items():
            path = (root / name).resolve()
            if root not in path.parents:  # cannot happen after _safe_name; never written outside
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        report = ReadReport()
        chapters = chapters_from(root, report)
    if not chapters:
        reasons = "; ".join(report.details()[:3])
        raise UploadError("no file in the zip holds text" + (f" ({reasons})" if reasons else "")
                          + "; put one .txt or .html file per chapter in it")
    images = [(PurePosixPath(name).name, body) for name, body in entries.items()
              if PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES][:MAX_IMAGES]
    return Upload("zip", chapters, report, images)


def _read_epub(data: bytes, entries: dict[str, bytes]) -> Upload:
    """The spine's documents, in reading order, each one chapter (those without text skipped)."""
    import warnings

    from fingerprint.html import html_to_text

    try:
        import ebooklib
        from ebooklib import epub
    except ImportError:  # pragma: no cover - a dependency
        raise UploadError("EPUB uploads need the ebooklib package (pip install 'ebooklib>=0.18')") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    except Exception as e:  # noqa: BLE001 - ebooklib and lxml raise many kinds for a broken book
        raise UploadError(f"the EPUB cannot be read ({type(e).__name__}: {str(e)[:200]}); "
                          "export it again, or upload its text as a .txt file") from None
    report = ReadReport()
    chapters: list[ChapterInput] = []
    seen: set[str] = set()
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, (tuple, list)) else entry
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        try:
            raw = item.get_content()
            html, _, _ = decode(raw) if isinstance(raw, bytes) else (str(raw), "", 0)
            text, meta = html_to_text(html)
        except Exception as e:  # noqa: BLE001 - one broken document costs only itself
            report.add_skip(item.get_name(), f"unreadable: {e}")
            continue
        text, _ = scrub(text)
        if not _HAS_CONTENT.search(text):
            continue  # a cover page, a title page with an image
        title = (scrub(meta.get("title") or "")[0].strip() or _first_line(text)
                 or PurePosixPath(item.get_name()).stem)
        if not _HAS_CONTENT.search(text.replace(_first_line(text), "", 1)):
            continue  # a heading alone: a part title, an illustration's caption page
        name = " ".join(title.split())[:80].replace("/", "／") or f"{len(chapters) + 1:04d}"
        if name in seen:
            name = f"{name} ({len(chapters) + 1})"
        seen.add(name)
        chapters.append(ChapterInput(name=name, title=title[:200], text=text, number=len(chapters) + 1))
        report.documents += 1
    if not chapters:
        raise UploadError("the EPUB has no chapters with text in its reading order (spine); "
                          "export it again with its text, or upload the text as a .txt file")
    covers = []
    for item in [*book.get_items_of_type(ebooklib.ITEM_COVER), *book.get_items_of_type(ebooklib.ITEM_IMAGE)]:
        name = PurePosixPath(item.get_name() or "").name
        if item.get_type() == ebooklib.ITEM_COVER or "cover" in name.lower():
            if name and all(name != n for n, _ in covers):
                covers.append((name, item.get_content()))
    return Upload("epub", chapters, report, covers[:MAX_IMAGES])


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:80]
    return ""


# ---- registering and removing --------------------------------------------------------------

def register_upload(ctx: Context, title: str, upload: Upload, *, author: str = "") -> RegisterReport:
    """Register an upload's chapters as a new work; all or nothing. Raises WorkExists when the
    title is taken (remove the work first), InputError for a bad title."""
    (title, _), (author, _) = scrub(title.strip()), scrub(author.strip())
    wid = work_id(title)
    try:
        ctx.store.get_work(wid)
    except NotFound:
        pass
    else:
        raise WorkExists(f"a work titled {wid!r} is registered already; remove it first, or choose another title")
    if not upload.chapters:
        raise UploadError(f"no chapters to register; {FIXES}")
    work = ctx.store.upsert_work(Work(id=wid, title=title, author=author))
    report = RegisterReport(work=work, skipped=upload.skipped)
    try:
        for c in upload.chapters:
            ch, status = register_chapter(
                ctx, Chapter(key=f"{work.id}/{c.name}", work=work.id, title=c.title, text=c.text, number=c.number))
            getattr(report, status).append(ch.key)
        for name, data in upload.images:
            try:
                stored, status = register_image(ctx, work.id, name, data)
            except InputError as e:  # a broken picture costs only itself
                report.images.skipped.append((name, str(e)))
                continue
            getattr(report.images, status).append(stored.key)
    except BaseException:
        try:
            remove_work(ctx, work.id)
        except Exception:  # noqa: BLE001 - the first error is the one to report
            pass
        raise
    return report


def remove_work(ctx: Context, wid: str) -> int:
    """Remove a work from the store (chapters, fingerprints, matches, images) and its chapters
    from the index; returns how many chapters went. Raises NotFound."""
    docs = ctx.store.delete_work(wid)
    for doc in docs:
        ctx.index.remove(doc)
        ctx.tracker.originals.pop(doc, None)
    return len(docs)
