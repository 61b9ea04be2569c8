"""The JSON API: the same data as each HTML page, from the same functions.

Scripts authenticate with HTTP Basic (a user's name and password); a browser
session works too, with the CSRF token (from /api/me) in an X-CSRFToken header
on POST. Writes need an admin and a JSON body.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, jsonify
from flask_login import current_user
from flask_wtf.csrf import generate_csrf

from tracker.store import NotFound

from .. import search
from ..auth.access import reads_only
from ..evidence import downloads as packages
from ..params import json_body
from ..reports import dashboard, images, sites, works
from ..review import matches, notices

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.route("/me")
def me() -> Any:
    return jsonify(name=current_user.name, role=current_user.role, csrf_token=generate_csrf())


@bp.route("/dashboard")
def dashboard_() -> Any:
    return jsonify(dashboard.data())


@bp.route("/works")
def works_() -> Any:
    return jsonify(works.list_data())


@bp.route("/works/<work_id>")
def work(work_id: str) -> Any:
    return jsonify(works.report_data(work_id))


@bp.route("/sites")
def sites_() -> Any:
    return jsonify(sites.list_data())


@bp.route("/sites/view")
def site() -> Any:
    return jsonify(sites.site_data())


@bp.route("/matches")
def matches_() -> Any:
    return jsonify(matches.list_data())


@bp.route("/matches/view")
def match() -> Any:
    return jsonify(matches.detail_data())


@bp.route("/images")
def images_() -> Any:
    return jsonify(images.list_data())


@bp.route("/images/view")
def image() -> Any:
    return jsonify(images.detail_data())


@bp.route("/images/status", methods=["POST"])
def image_status() -> Any:
    """{"status": ..., "image": ..., "original": ...}."""
    body = json_body()
    image, original, status = body.get("image"), body.get("original"), body.get("status")
    if not all(isinstance(v, str) and v for v in (image, original, status)):
        abort(400, 'give "image", "original" and "status"')
    m = images.set_status(image, original, status, current_user.name)
    return jsonify(images.match_row(m))


@bp.route("/matches/status", methods=["POST"])
def match_status() -> Any:
    """{"status": ..., "page": ..., "chapter": ...} or {"status": ..., "matches": [{"page", "chapter"}, ...]}."""
    body = json_body()
    items = body.get("matches", [{"page": body.get("page"), "chapter": body.get("chapter")}])
    if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get("page"), str) and isinstance(i.get("chapter"), str)
            for i in items):
        abort(400, 'give "page" and "chapter", or "matches": a list of {"page", "chapter"}')
    status = body.get("status")
    if not isinstance(status, str):
        abort(400, 'give "status"')
    try:
        changed = matches.set_status([(i["page"], i["chapter"]) for i in items], status, current_user.name)
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such match")
    return jsonify(changed=[{"page": m.page, "chapter": m.chapter, "status": m.status, "history": m.history}
                            for m in changed])


@bp.route("/takedown")
def takedown() -> Any:
    return jsonify(notices.notice_data())


@bp.route("/takedown/sent", methods=["POST"])
def takedown_sent() -> Any:
    """{"work": ..., "site": ..., "include_excerpts": false}: the matches the notice lists move to takedown-sent."""
    body = json_body()
    args = notices.notice_args(body)
    return jsonify(changed=notices.mark_sent(args["work"], args["site"], current_user.name, args["include_excerpts"]))


@bp.route("/evidence/package")
def evidence_package() -> Any:
    """page_key, sender, contact, include_excerpts: the page's evidence package (a zip), as the admin's download."""
    return packages.package_response()


@bp.route("/search")
def search_() -> Any:
    return jsonify(search.search_data())


@bp.route("/check", methods=["POST"])
@reads_only
def check() -> Any:
    """{"text": ...}: which registered chapters the text copies, with the passages. Lone surrogates
    in the text are replaced by U+FFFD and counted (surrogates_replaced)."""
    return jsonify(search.check_data(json_body(surrogates_in="text").get("text")))
