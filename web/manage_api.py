"""The API's writes for works and sites: upload and remove works, add and edit sites, preview
their rules, start, follow and pause their crawls, and check one URL now.

Sign-in and roles are the app's (web.access.guard): every call needs a signed-in user, and
every write an admin. A write authenticated by HTTP Basic that is not JSON (an upload is a
multipart form) must come from no browser page of another origin: a browser replays cached
Basic credentials, and a cross-site form could otherwise post an upload with them.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, g, jsonify, request

from . import uploads

bp = Blueprint("manage_api", __name__, url_prefix="/api")
bp.url_value_preprocessor(uploads.raise_upload_limit)


@bp.before_request
def same_origin_forms() -> None:
    if request.method in ("GET", "HEAD", "OPTIONS") or request.is_json or not g.get("basic_auth"):
        return
    origin = request.headers.get("Origin")
    if origin is not None and origin != request.host_url.rstrip("/"):
        abort(403, "a form sent from another site's page is refused; send the request from a script")


@bp.route("/works", methods=["POST"])
def add_work() -> Any:
    """A multipart form: `title`, `file` (a .txt, a .zip of chapter files, or an .epub), optional `author`."""
    done = uploads.upload_work(request.form, request.files)
    return jsonify(done), 201


@bp.route("/works/<work_id>/chapters")
def work_chapters(work_id: str) -> Any:
    return jsonify(uploads.chapters_data(work_id))


@bp.route("/works/<work_id>", methods=["DELETE"])
def remove_work(work_id: str) -> Any:
    """?confirm=<the work's title>: the work goes with its chapters, index entries and matches."""
    return jsonify(uploads.remove(work_id, request.args.get("confirm")))
