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
from pathlib import Path, PurePosixPath

from fingerprint.encoding import decode
from fingerprint.errors import InputError
from fingerprint.scrub import scrub
from fingerprint.sources import IMAGE_SUFFIXES, ReadReport

from .context import Context
from .images import register_image
from .registry import ChapterInput, RegisterReport, chapters_from, register_chapter, work_id
from .store import Chapter, NotFound, StoreError, Work, content_hash

__all__ = ["EditionIncomplete", "EditionReport", "Limits", "NoWork", "Upload", "UploadError", "WorkExists",
           "read_upload", "register_upload", "remove_work"]

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

def register_upload(ctx: Context, title: str, upload: Upload, *, author: str = "",
                    replace: bool = False) -> EditionReport:
    """Register an upload's chapters as a new work; all or nothing. Raises WorkExists when the
    title is taken (remove the work first, or replace it), InputError for a bad title.
    With `replace`, the upload is a new edition of the registered work `title` (see replace_work)."""
    if replace:
        return replace_work(ctx, title, upload, author=author)
    (title, _), (author, _) = scrub(title.strip()), scrub(author.strip())
    wid = work_id(title)
    try:
        ctx.store.get_work(wid)
    except NotFound:
        pass
    else:
        raise WorkExists(f"a work titled {wid!r} is registered already; upload this file as its new edition "
                         "(replace), remove it first, or choose another title")
    if not upload.chapters:
        raise UploadError(f"no chapters to register; {FIXES}")
    work = ctx.store.upsert_work(Work(id=wid, title=title, author=author))
    report = EditionReport(work=work, skipped=upload.skipped)
    try:
        for c in upload.chapters:
            ch, status = register_chapter(
                ctx, Chapter(key=f"{work.id}/{c.name}", work=work.id, title=c.title, text=c.text, number=c.number))
            getattr(report, status).append(ch.key)
        _register_images(ctx, work.id, upload, report)
    except BaseException:
        try:
            remove_work(ctx, work.id)
        except Exception:  # noqa: BLE001 - the first error is the one to report
            pass
        raise
    return report


def replace_work(ctx: Context, title: str, upload: Upload, *, author: str = "") -> EditionReport:
    """Make an upload the new edition of the registered work `title`: its chapters become the work's.

    Chapters are told apart by their names (a file's name, a heading). Everything is checked
    before anything changes: the title, the upload's chapters, and the work (NoWork when the
    store, scoped to an organisation, has none by that title). The author changes when given.
    Raises EditionIncomplete when the store fails half-way."""
    (title, _), (author, _) = scrub(title.strip()), scrub(author.strip())
    wid = work_id(title)
    if not upload.chapters:
        raise UploadError(f"no chapters in the new edition; {FIXES}")
    try:
        work = ctx.store.get_work(wid)
    except NotFound:
        raise NoWork(f"no work titled {wid!r} to replace; check the title, or upload the file as a new work "
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
        ch, status = register_chapter(ctx, chapter)
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
                    register_chapter(ctx, before)
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


def remove_work(ctx: Context, wid: str) -> int:
    """Remove a work from the store (chapters, fingerprints, matches, images) and its chapters
    from the index; returns how many chapters went. Raises NotFound."""
    docs = ctx.store.delete_work(wid)
    for doc in docs:
        ctx.index.remove(doc)
        ctx.tracker.originals.pop(doc, None)
    return len(docs)
