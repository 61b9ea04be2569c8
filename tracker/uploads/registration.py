"""Registering an upload's chapters as a work, all or nothing (register_upload), or as the new
edition of a registered work (replace_work); removing a work, and what registrations stopped
part-way left (remove_unfinished)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fingerprint.errors import InputError
from pagetext.scrub import scrub

from ..context import Context
from ..media.images import register_image
from ..registry import RegisterReport, register_chapter, work_id
from ..store import Chapter, NotFound, StoreError, Work, content_hash
from .upload import FIXES, Upload, UploadError

__all__ = ["EditionIncomplete", "EditionReport", "NoWork", "WorkExists", "own_work_id", "register_upload",
           "remove_unfinished", "remove_work", "replace_work"]


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
        except Exception:
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
    except Exception as e:
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
        except Exception as again:
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
