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

An upload may also be a new edition of a registered work (replace=True): its chapters become
the work's. Unchanged chapters keep their fingerprints, index entries and matches; changed ones
are fingerprinted and indexed again; chapters the edition no longer has leave the index and the
store (their matches stay, for the record). A store failure half-way leaves each chapter in its
old or its new version and raises EditionIncomplete, which says what was done.
"""
from __future__ import annotations

import io
import re
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Union

from fingerprint.encoding import decode
from fingerprint.errors import InputError
from fingerprint.scrub import scrub
from fingerprint.sources import IMAGE_SUFFIXES, ReadReport

from ..context import Context
from ..media.images import register_image
from ..registry import ChapterInput, RegisterReport, chapters_from, register_chapter, work_id
from ..store import Chapter, NotFound, StoreError, Work, content_hash

__all__ = ["EditionIncomplete", "EditionReport", "Limits", "NoWork", "Upload", "UploadError", "WorkExists",
           "own_work_id", "read_upload", "register_upload", "remove_unfinished", "remove_work"]

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


class NoWork(UploadError):
    """A new edition names no registered work (of the store's organisation)."""


@dataclass
class EditionReport(RegisterReport):
    """What registering an upload did; `removed` holds the chapters a new edition no longer has."""
    removed: list[str] = field(default_factory=list)
    replaced: bool = False

    def counts(self) -> str:
        """'2 added, 1 changed, 5 unchanged, 1 removed' (and how many hold no text to index)."""
        line = (f"{len(self.added)} added, {len(self.changed)} changed, {len(self.unchanged)} unchanged, "
                f"{len(self.removed)} removed")
        return line + (f", {len(self.empty)} without text to index" if self.empty else "")


class EditionIncomplete(StoreError):
    """The store failed half-way through a new edition; `report` holds what was done. Each chapter
    holds its old or its new version (the message names any that could not be put back)."""

    def __init__(self, message: str, report: EditionReport):
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 32 * 1024 * 1024  # the upload itself
    max_total: int = 64 * 1024 * 1024  # everything a zip decompresses to
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

Source = Union[bytes, str, Path, BinaryIO]
CHUNK = 64 * 1024


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
        zf = _open_zip(stream)
        names = {i.filename for i in zf.infolist()}
        if "META-INF/container.xml" in names or _epub_mimetype(zf):
            _check_zip(zf, size, limits)
            return _read_epub(stream)
        return _read_chapter_zip(zf, size, limits)
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
    suffix = PurePosixPath(_safe_name(filename) or "work.txt").suffix.lower()
    suffix = suffix if suffix in TEXT_SUFFIXES else ".txt"
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        path = Path(tmp) / f"work{suffix}"
        path.write_bytes(data)
        del data
        report = ReadReport()
        chapters = chapters_from(path, report)
    chapters = [c for c in chapters if _HAS_CONTENT.search(c.text)]
    if not chapters:
        raise UploadError(f"the file holds no text to register; {FIXES}")
    return Upload("text", chapters, report)


_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
               ValueError, OSError)


def _open_zip(stream: BinaryIO) -> zipfile.ZipFile:
    try:
        zf = zipfile.ZipFile(stream)
        zf.infolist()
    except _ZIP_ERRORS as e:
        raise UploadError(f"the zip cannot be read ({e}); make it again, or {FIXES}") from None
    return zf


def _epub_mimetype(zf: zipfile.ZipFile) -> bool:
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


def _check_zip(zf: zipfile.ZipFile, size: int, limits: Limits) -> list[zipfile.ZipInfo]:
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


def _read_chapter_zip(zf: zipfile.ZipFile, size: int, limits: Limits) -> Upload:
    """Copy the zip's files to a temporary folder in chunks, within the budgets (the actual bytes
    counted, whatever the headers claim), then read the folder as `fptrack add-work` does."""
    files = _check_zip(zf, size, limits)
    with tempfile.TemporaryDirectory(prefix="fpt-upload-") as tmp:
        root = Path(tmp).resolve()
        written: dict[str, str] = {}  # the name on disk -> the entry's name, to explain a clash
        images: list[tuple[str, bytes]] = []
        total = 0
        for info in files:
            name = _safe_name(info.filename)
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


def _safe_name(raw: str) -> str:
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


def _read_epub(stream: BinaryIO) -> Upload:
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
            book = epub.read_epub(stream, {"ignore_ncx": True})
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

def register_upload(ctx: Context, title: str, upload: Upload, *, author: str = "",
                    replace: bool = False) -> EditionReport:
    """Register an upload's chapters as a new work; all or nothing. Raises WorkExists when the
    organisation has a work of that title (remove it first, or replace it), InputError for a bad
    title. With `replace`, the upload is a new edition of the registered work `title` (see
    replace_work).

    The work's record is written last: until every chapter is in, no list, report or count shows
    the work. A registration stopped part-way (an error, or the process killed) leaves chapters
    without a work, which the next upload of the same title removes before it starts, and
    `remove_unfinished` (the daily run) removes once they are a day old."""
    if replace:
        return replace_work(ctx, title, upload, author=author)
    (title, _), (author, _) = scrub(title.strip()), scrub(author.strip())
    wid = own_work_id(ctx.store, title)
    try:
        ctx.store.get_work(wid)
    except NotFound:
        pass
    else:
        raise WorkExists(f"a work titled {title!r} is registered already; upload this file as its new edition "
                         "(replace), remove it first, or choose another title")
    if not upload.chapters:
        raise UploadError(f"no chapters to register; {FIXES}")
    _claim(ctx.store, wid)
    _remove_chapters_of(ctx, wid)  # what an upload of this title left when it was stopped part-way
    report = EditionReport(work=Work(id=wid, title=title, author=author), skipped=upload.skipped)
    try:
        for c in upload.chapters:
            ch, status = register_chapter(
                ctx, Chapter(key=f"{wid}/{c.name}", work=wid, title=c.title, text=c.text, number=c.number),
                keep=False)
            getattr(report, status).append(ch.key)
        _register_images(ctx, wid, upload, report)
        report.work = ctx.store.upsert_work(Work(id=wid, title=title, author=author))  # last: now it is whole
    except BaseException:
        try:
            _remove_chapters_of(ctx, wid)
        except Exception:  # noqa: BLE001 - the first error is the one to report; the next upload cleans up
            pass
        raise
    return report


def own_work_id(store: Any, title: str) -> str:
    """The id of the organisation's work titled `title`. Titles are unique per organisation, ids in
    the store: the title itself, unless another organisation has a work (or an upload under way)
    by that title, when the organisation's name follows it: "山城旧事 (acme)"."""
    wid = work_id(title)
    org = getattr(store, "org", None)
    if org is None or store.owner("work", wid) == org or not _in_use(store, wid):
        return wid
    return work_id(f"{wid} ({org})")


def _in_use(store: Any, wid: str) -> bool:
    inner = getattr(store, "inner", store)
    try:
        inner.get_work(wid)
    except NotFound:
        return inner.count_chapters(wid) > 0
    return True


def _claim(store: Any, wid: str) -> None:
    """Make the work the organisation's before its first chapter is written (a scoped store only)."""
    org = getattr(store, "org", None)
    if org is not None:
        store.set_owner("work", wid, org)
        for cached in ("work_ids", "_work_set"):
            store.__dict__.pop(cached, None)


def _remove_chapters_of(ctx: Context, wid: str) -> int:
    """Remove the chapters (with their fingerprints, index entries, images and matches) of a work
    whose record was never written; how many went."""
    inner = getattr(ctx.store, "inner", ctx.store)
    if inner.count_chapters(wid) == 0 and not inner.work_images(wid):
        return 0
    try:
        inner.get_work(wid)
    except NotFound:
        pass
    else:
        return 0  # a whole work: never removed from here
    inner.upsert_work(Work(id=wid, title=wid))  # for delete_work, which removes everything of a work
    return remove_work(ctx, wid, store=inner)


def remove_unfinished(ctx: Context, older_than: timedelta = timedelta(days=1)) -> list[str]:
    """Remove what registrations stopped part-way left (chapters without their work) when their
    newest chapter is older than `older_than`; the ids removed. The daily run calls it."""
    from ..store import now

    inner = getattr(ctx.store, "inner", ctx.store)
    recorded = {w.id for w in inner.works()}
    newest: dict[str, Any] = {}
    for ch in inner.chapter_headers():
        if ch.work not in recorded and (ch.work not in newest or ch.updated_at > newest[ch.work]):
            newest[ch.work] = ch.updated_at
    cutoff = now() - older_than
    gone = [w for w, at in sorted(newest.items()) if at < cutoff]
    for wid in gone:
        _remove_chapters_of(ctx, wid)
    return gone


def replace_work(ctx: Context, title: str, upload: Upload, *, author: str = "") -> EditionReport:
    """Make an upload the new edition of the registered work `title`: its chapters become the work's.

    Chapters are told apart by their names (a file's name, a heading). Everything is checked
    before anything changes: the title, the upload's chapters, and the work (NoWork when the
    store, scoped to an organisation, has none by that title). The author changes when given.
    Raises EditionIncomplete when the store fails half-way."""
    (title, _), (author, _) = scrub(title.strip()), scrub(author.strip())
    wid = own_work_id(ctx.store, title)
    if not upload.chapters:
        raise UploadError(f"no chapters in the new edition; {FIXES}")
    try:
        work = ctx.store.get_work(wid)
    except NotFound:
        raise NoWork(f"no work titled {work_id(title)!r} to replace; check the title, or upload the file as a new work "
                     "(without replace)") from None
    new = [Chapter(key=f"{wid}/{c.name}", work=wid, title=c.title, text=c.text, number=c.number)
           for c in upload.chapters]
    keys = {c.key for c in new}
    if len(keys) != len(new):  # the readers name chapters apart; two alike would overwrite each other
        raise UploadError("two chapters of the upload have the same name; give each chapter its own name")
    old = {c.key: c for c in ctx.store.chapter_headers(wid)}
    report = EditionReport(work=work, skipped=upload.skipped, replaced=True)
    step = ""
    try:
        for ch in new:
            step = f"chapter {ch.key!r}"
            _replace_chapter(ctx, ch, old.get(ch.key), report)
        for key, gone in old.items():
            if key not in keys:
                step = f"removing chapter {key!r}"
                ctx.store.delete_chapter(key)
                report.removed.append(key)
                ctx.tracker.originals.pop(gone.doc, None)  # first: a doc left in the index then matches nothing
                ctx.index.remove(gone.doc)
        if author and author != work.author:
            step = "the author"
            report.work = ctx.store.upsert_work(Work(id=wid, title=work.title, author=author))
        step = "the images"
        _register_images(ctx, wid, upload, report)
    except _PutBack as e:
        raise _incomplete(wid, step, e.error, report, e.note) from e.error
    except Exception as e:
        raise _incomplete(wid, step, e, report) from e
    return report


class _PutBack(Exception):
    def __init__(self, error: Exception, note: str):
        self.error, self.note = error, note


def _replace_chapter(ctx: Context, chapter: Chapter, before: Chapter | None, report: EditionReport) -> None:
    """Register one chapter of a new edition; when that fails, put its old version back (or take
    it out, when it is new), so it is never half one and half the other."""
    if before is not None and before.content_hash != content_hash(chapter.text):
        before = ctx.store.get_chapter(chapter.key)  # its text, to put back should the new one fail
    try:
        ch, status = register_chapter(ctx, chapter, keep=False)
    except Exception as e:  # noqa: BLE001 - put back, then report
        try:
            if before is None:
                try:
                    doc = ctx.store.get_chapter(chapter.key).doc
                except NotFound:
                    doc = None
                if doc is not None:
                    ctx.store.delete_chapter(chapter.key)
                    ctx.index.remove(doc)
                    ctx.tracker.originals.pop(doc, None)
                note = f"{chapter.key!r} was not added"
            else:
                if before.text:  # headers only when unchanged: its fingerprints were never touched
                    register_chapter(ctx, before, keep=False)
                note = f"{chapter.key!r} keeps its old version"
        except Exception as again:  # noqa: BLE001
            note = (f"{chapter.key!r} could not be put back ({again}), so its text and index entries may "
                    "differ: upload the previous edition again, then this one")
        raise _PutBack(e, note) from e
    getattr(report, status).append(ch.key)


def _incomplete(wid: str, step: str, error: Exception, report: EditionReport, note: str = "") -> EditionIncomplete:
    done = report.counts()
    return EditionIncomplete(
        f"the new edition of {wid!r} stopped at {step}: {error}. Done before: {done} chapters"
        + (f"; {note}" if note else "")
        + ". Every other chapter holds its old or its new version; upload the edition again (replace) "
          "to finish", report)


def _register_images(ctx: Context, wid: str, upload: Upload, report: RegisterReport) -> None:
    for name, data in upload.images:
        try:
            stored, status = register_image(ctx, wid, name, data)
        except InputError as e:  # a broken picture costs only itself
            report.images.skipped.append((name, str(e)))
            continue
        getattr(report.images, status).append(stored.key)


def remove_work(ctx: Context, wid: str, *, store: Any = None) -> int:
    """Remove a work from the store (chapters, fingerprints, matches, images) and its chapters
    from the index; returns how many chapters went. Raises NotFound."""
    docs = (store or ctx.store).delete_work(wid)
    for doc in docs:
        ctx.index.remove(doc)
        ctx.tracker.originals.pop(doc, None)
    return len(docs)
