"""Images: copies of a work's registered covers and illustrations found on pages, each shown
beside the registered image, with the same status workflow as the text matches.

The images themselves are served drawn anew as PNG thumbnails (fingerprint.image.thumbnail),
never as the bytes a pirate site served: a crawled "image" can be a polyglot file or carry a
script, and the admin's origin must not serve it."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from fingerprint.errors import InputError
from fingerprint.image import thumbnail
from tracker.store import IMAGE_MATCH_SORTS, MATCH_STATUSES, ImageMatch, NotFound

from ..auth.signin import safe_next
from ..params import ACTIVE, SCOPES, choice_arg, paging, text_arg
from ..services import store
from .queries import statuses_of

bp = Blueprint("images", __name__, url_prefix="/images")

THUMB_SIDE = 480  # pixels on the longer side of an image as the admin shows it
KINDS = ("registered", "found")


def match_row(m: ImageMatch) -> dict[str, Any]:
    return {"image": m.image, "original": m.work_image, "work": m.work, "site": m.site, "found_on": m.found_on,
            "distance": m.distance, "similarity": round(1 - m.distance / 64, 4),
            "colour_agreement": m.colour_agreement, "status": m.status, "first_seen": m.first_seen,
            "last_seen": m.last_seen, "history": m.history}


def list_data() -> dict[str, Any]:
    scope = choice_arg("status", SCOPES, ACTIVE)
    status = statuses_of(scope)
    work, site = text_arg("work"), text_arg("site")
    sort = choice_arg("sort", [*IMAGE_MATCH_SORTS, *(f"-{s}" for s in IMAGE_MATCH_SORTS)], "distance")
    p = paging()
    s = store()
    p.total = s.count_image_matches(work=work, site=site, status=status)
    rows = s.image_matches(work=work, site=site, status=status, limit=p.per_page, offset=p.offset, sort=sort)
    return {"matches": [match_row(m) for m in rows], "paging": p.to_json(), "status": scope, "work": work,
            "site": site, "sort": sort}


def detail_data() -> dict[str, Any]:
    image, original = text_arg("image"), text_arg("original")
    if not image or not original:
        abort(400, "name the image match: image=...&original=...")
    s = store()
    try:
        m = s.get_image_match(image, original)
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such image match")
    found = registered = None
    try:
        img = s.get_page_image(image)
        found = {"key": img.key, "url": img.url, "site": img.site, "found_on": img.found_on, "sha256": img.sha256,
                 "media_type": img.media_type, "bytes": len(img.data), "fetched_at": img.fetched_at,
                 "width": img.fingerprint.get("width"), "height": img.fingerprint.get("height")}
    except NotFound:
        pass
    try:
        w = s.get_work_image(original)
        registered = {"key": w.key, "work": w.work, "name": w.name, "sha256": w.sha256, "media_type": w.media_type,
                      "bytes": len(w.data), "width": w.fingerprint.get("width"), "height": w.fingerprint.get("height")}
    except NotFound:
        pass
    return {"match": match_row(m), "found": found, "registered": registered}


def set_status(image: str, original: str, status: str, by: str) -> ImageMatch:
    if status not in MATCH_STATUSES:
        abort(400, f"status must be one of: {', '.join(MATCH_STATUSES)}; not {status!r}")
    try:
        return store().set_image_match_status(image, original, status, by=by)
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such image match")


@bp.route("/")
def index() -> str:
    return render_template("images/index.html", **list_data(), scopes=SCOPES, sorts=IMAGE_MATCH_SORTS,
                           works=[w.id for w in store().works()])


@bp.route("/view")
def detail() -> str:
    return render_template("images/detail.html", **detail_data(), statuses=MATCH_STATUSES)


@bp.route("/status", methods=["POST"])
def status() -> Any:
    image, original = text_arg("image", request.form), text_arg("original", request.form)
    if not image or not original:
        abort(400, "name the image match: image and original")
    new = request.form.get("status", "")
    set_status(image, original, new, current_user.name)
    flash(f"Image match set to {new}.", "ok")
    if request.form.get("next"):
        return redirect(safe_next(request.form.get("next")))
    return redirect(url_for("images.detail", image=image, original=original))


@bp.route("/picture")
def picture() -> Response:
    """A crawled picture that holds text (a chapter posted as pictures), drawn anew as a PNG at most
    web.review.pictures.PICTURE_WIDTH wide, for the match page's boxes to sit on."""
    from ..review.pictures import picture_png

    key = text_arg("key")
    if not key:
        abort(400, "name the picture: key=...")
    try:
        data = store().get_page_image(key).data
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such picture")
    return _png("p" + hashlib.sha256(data).hexdigest()[:32], lambda: picture_png(data), "picture")


@bp.route("/file/<kind>")
def file(kind: str) -> Response:
    """A registered or found image, drawn anew as a PNG thumbnail."""
    if kind not in KINDS:
        abort(404, f"images are {' or '.join(KINDS)}")
    key = text_arg("key")
    if not key:
        abort(400, "name the image: key=...")
    s = store()
    try:
        data = s.get_work_image(key).data if kind == "registered" else s.get_page_image(key).data
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such image")
    return _png(hashlib.sha256(data).hexdigest()[:32], lambda: thumbnail(data, THUMB_SIDE), "image")


def _png(etag: str, draw: Callable[[], bytes], what: str) -> Response:
    """The PNG `draw` makes, served under `etag` (a 304 when the browser has it already); a 422
    when the stored `what` cannot be drawn."""
    if request.if_none_match.contains(etag):
        return Response(status=304, headers={"ETag": f'"{etag}"'})
    try:
        png = draw()
    except InputError as e:
        abort(422, f"the stored {what} cannot be shown: {e}")
    return Response(png, mimetype="image/png", headers={
        "ETag": f'"{etag}"', "Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'", "Content-Disposition": "inline"})
