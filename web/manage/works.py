"""Works managed from the admin and the API: upload a novel, list its chapters, remove it.

The same functions serve the HTML forms (web.reports.works) and the JSON API (web.api.manage).
An upload is read from where werkzeug spooled it and split (tracker.uploads.novels) before anything is registered; a
bad one is a 400 whose message names the problem and the fix, a taken title a 409. With
`replace` the upload is a new edition of the organisation's work of that title (404 when it
has none); a store failure half-way through it is a 503 that says what was done.
"""
from __future__ import annotations

from typing import Any

from flask import abort, current_app, request
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import Conflict, ServiceUnavailable
from werkzeug.exceptions import NotFound as HTTPNotFound

from fingerprint.errors import InputError
from tracker.context import Context
from tracker.uploads.novels import (
    EditionIncomplete,
    EditionReport,
    Limits,
    NoWork,
    UploadError,
    WorkExists,
    read_upload,
    register_upload,
    remove_work,
)

from ..auth.access import is_api
from ..params import MAX_TEXT
from ..services import services

#: Bytes an upload request may carry (the file and its form), unless UPLOAD_MAX_BYTES says otherwise.
UPLOAD_MAX_BYTES = 32 * 1024 * 1024
UPLOAD_ENDPOINTS = frozenset({"works.index", "manage_api.add_work"})


def raise_upload_limit(endpoint: str | None, values: Any) -> None:
    """Upload routes take files larger than the app's MAX_CONTENT_LENGTH. Registered as a URL
    value preprocessor, which Flask runs before every before_request hook (the CSRF check reads
    the form, and with it the body, in one of them)."""
    if endpoint in UPLOAD_ENDPOINTS and request.method == "POST":
        request.max_content_length = upload_max_bytes() + 64 * 1024  # the form's other fields


def upload_max_bytes() -> int:
    return int(current_app.config.get("UPLOAD_MAX_BYTES") or UPLOAD_MAX_BYTES)


def work_context() -> Context:
    """A Context on the app's store. Without Redis its index is an empty in-process one: the
    fingerprints go to the store, and every process loads them from there (the app's "check
    this text now" engine reloads when the number of chapters changes)."""
    s = services()
    index = None
    if not s.settings.redis_url:
        from fingerprint.index import MemoryIndex

        ctx = Context(s.settings, store=s.store)
        index = MemoryIndex(ctx.config, ctx.params)
    return Context(s.settings, store=s.store, index=index)


def _text_field(form: Any, name: str, *, required: bool) -> str:
    raw = form.get(name, "")
    if not isinstance(raw, str):
        abort(400, f"{name} must be text")
    raw = " ".join(raw.split())
    if required and not raw:
        abort(400, f"give the work's {name}")
    if len(raw) > MAX_TEXT:
        abort(400, f"{name} is longer than {MAX_TEXT} characters")
    return raw


def _flag(form: Any, name: str) -> bool:
    """A checkbox ("on") or an API's "true"; absent is false."""
    raw = form.get(name, "")
    value = raw.strip().lower() if isinstance(raw, str) else None
    if value in ("on", "true", "1", "yes"):
        return True
    if value in ("", "off", "false", "0", "no"):
        return False
    abort(400, f"{name} must be true or false")


def upload_work(form: Any, files: Any) -> dict[str, Any]:
    """Register the uploaded file `file` as the work `title` (by `author`); its summary.
    With `replace`, the file is a new edition of the registered work `title`.
    A 400 names what is wrong with the title or file, a 409 a title taken already, a 404 a
    work to replace that the organisation does not have."""
    title = _text_field(form, "title", required=True)
    author = _text_field(form, "author", required=False)
    replace = _flag(form, "replace")
    f: FileStorage | None = files.get("file")
    if f is None or not f.filename and not f.content_length:
        abort(400, "choose the file to upload: a .txt file, a .zip of chapter files or an .epub")
    limit = upload_max_bytes()
    source = _spooled(f, limit)
    try:
        upload = read_upload(f.filename or "", source, Limits(max_bytes=limit))
        report = register_upload(work_context(), title, upload, author=author, replace=replace)
    except WorkExists:
        how = "send replace=true" if is_api() else "tick 'Replace the registered edition'"
        raise Conflict(f"a work titled {' '.join(title.split())!r} is registered already; to upload a new edition "
                       f"of it, {how}; else remove it first, or choose another title") from None
    except NoWork as e:
        raise HTTPNotFound(str(e)) from None
    except EditionIncomplete as e:
        error = ServiceUnavailable(str(e))
        error.extra = {"partial": _summary(e.report, "")}  # type: ignore[attr-defined]  # web.errors adds it
        raise error from None
    except InputError as e:  # UploadError, or a title the registry refuses
        abort(400, str(e))
    return _summary(report, upload.kind)


def _spooled(f: FileStorage, limit: int) -> Any:
    """The uploaded file as werkzeug spooled it (to disk past 500 KB), never read whole into memory;
    a 413 past `limit` bytes."""
    stream = f.stream
    try:
        stream.seek(0, 2)
        size = stream.tell()
        stream.seek(0)
    except (AttributeError, OSError, ValueError):  # a stream that cannot seek: read it, within the limit
        stream = f.stream.read(limit + 1)
        size = len(stream)
    if size > limit:
        abort(413, f"the file is larger than {limit:,} bytes; upload at most that (split the work, or zip "
                   "its chapters)")
    return stream


def _summary(report: EditionReport, kind: str) -> dict[str, Any]:
    return {"work": report.work.id, "title": report.work.title, "author": report.work.author, "kind": kind,
            "replaced": report.replaced,
            "chapters": len(report.added) + len(report.changed) + len(report.unchanged) + len(report.empty),
            "added": len(report.added), "changed": len(report.changed), "unchanged": len(report.unchanged),
            "removed": len(report.removed),
            "images": len(report.images.added) + len(report.images.changed) + len(report.images.unchanged),
            "not_indexed": report.empty,
            "skipped": report.skipped.details() + [f"image {n}: {why}" for n, why in report.images.skipped]}


def upload_message(done: dict[str, Any]) -> str:
    """The line the admin shows after an upload."""
    images = f", {done['images']} images" if done["images"] else ""
    images += f", {len(done['not_indexed'])} without text to index" if done["not_indexed"] else ""
    if not done["replaced"]:
        return f"Registered 《{done['title']}》: {done['chapters']} chapters{images} from the {done['kind']} upload."
    return (f"New edition of 《{done['title']}》 from the {done['kind']} upload: {done['added']} chapters added, "
            f"{done['changed']} changed, {done['unchanged']} unchanged, {done['removed']} removed{images}.")


def chapters_data(work_id: str) -> dict[str, Any]:
    """A work and its chapters (without their texts), in order."""
    store = services().store
    w = store.get_work(work_id)  # NotFound: a 404
    rows = [{"chapter": c.key, "title": c.title, "number": c.number, "updated_at": c.updated_at}
            for c in store.chapter_headers(w.id)]
    return {"work": {"work": w.id, "title": w.title, "author": w.author, "registered": w.created_at},
            "chapters": rows}


def remove(work_id: str, confirm: str | None) -> dict[str, Any]:
    """Remove a work when `confirm` repeats its id; 400 otherwise, 404 when there is none."""
    store = services().store
    w = store.get_work(work_id)
    if confirm is None or " ".join(confirm.split()) != w.id:
        abort(400, f"to remove {w.id!r} with its chapters and matches, confirm by giving its title "
                   f"(confirm={w.id})")
    matches = store.count_matches(work=w.id)
    removed = remove_work(work_context(), w.id)
    return {"work": w.id, "removed": True, "chapters": removed, "matches": matches}


__all__ = ["UploadError", "chapters_data", "raise_upload_limit", "remove", "upload_message", "upload_work"]
