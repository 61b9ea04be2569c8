"""The API's writes for works and sites: upload and remove works, add and edit sites (their rules
and schedules), preview their rules, start, follow and pause their crawls, and check one URL now.

Sign-in and roles are the app's (web.auth.access.guard): every call needs a signed-in user, and
every write an admin. A write authenticated by HTTP Basic that is not JSON (an upload is a
multipart form) must come from no browser page of another origin: a browser replays cached
Basic credentials, and a cross-site form could otherwise post an upload with them.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, g, jsonify, request

from ..auth.access import reads_only
from ..manage import sites as site_admin
from ..manage import works as uploads
from ..params import json_body

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
    """A multipart form: `title`, `file` (a .txt, a .zip of chapter files, or an .epub), optional `author`,
    and `replace=true` for a new edition of the registered work `title`."""
    done = uploads.upload_work(request.form, request.files)
    return jsonify(done), 201


@bp.route("/works/<work_id>/chapters")
def work_chapters(work_id: str) -> Any:
    return jsonify(uploads.chapters_data(work_id))


@bp.route("/works/<work_id>", methods=["DELETE"])
def remove_work(work_id: str) -> Any:
    """?confirm=<the work's title>: the work goes with its chapters, index entries and matches."""
    return jsonify(uploads.remove(work_id, request.args.get("confirm")))


@bp.route("/sites", methods=["POST"])
def add_site() -> Any:
    """{"url": ..., "name": optional, "rules": optional {content, title, follow, recrawl, ...},
    "schedule": optional {"hour": 0-23 (UTC), "every": 1-30 (days), "paused": true or false}}."""
    body = json_body()
    return jsonify(site_admin.add_site(body.get("url"), body.get("name"), site_admin.json_values(body))), 201


@bp.route("/sites/<name>", methods=["PATCH"])
def edit_site(name: str) -> Any:
    """Rule values to change ({"content": "#text", "hour": 4, "every": 2, "recrawl": false, ...}), and/or
    "schedule": {"hour", "every", "paused"}; null puts a default back (hour: the deployment's)."""
    name = site_admin.site_name_arg(name)
    return jsonify(site_admin.update_site(name, site_admin.json_values(json_body())))


@bp.route("/sites/<name>/preview", methods=["POST"])
def preview_site(name: str) -> Any:
    """{"url": a sample page, or "html": its HTML, "rules": optional values to try instead of the stored ones}."""
    name = site_admin.site_name_arg(name)
    body = json_body()
    from ..services import services

    rules = site_admin.rules_with(name, site_admin.json_values(body), services().store.get_site(name))
    return jsonify(site_admin.preview(rules, body.get("url"), body.get("html")))


@bp.route("/sites/<name>/crawl", methods=["GET", "POST"])
def crawl_site(name: str) -> Any:
    """GET: the crawl's progress; POST ({"max_pages": optional}): start it (202), or resume a paused one."""
    name = site_admin.site_name_arg(name)
    if request.method == "GET":
        return jsonify(site_admin.crawl_state(name))
    body = json_body() if request.content_length else {}
    return jsonify(site_admin.start_crawl(name, body.get("max_pages"))), 202


@bp.route("/sites/<name>/pause", methods=["POST"])
def pause_site(name: str) -> Any:
    return jsonify(site_admin.pause_crawl(site_admin.site_name_arg(name)))


@bp.route("/check-url", methods=["POST"])
@reads_only
def check_url() -> Any:
    """{"url": ...}: fetch the page, take its text as the crawler would, and match it now (nothing is
    stored). Admins and write tokens only: a viewer may check a text, but not make the server fetch."""
    return jsonify(site_admin.check_url(json_body().get("url")))
