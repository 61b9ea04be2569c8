"""Matches: a filtered, sorted page of them; one match's evidence; the status workflow."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from tracker.store import MATCH_SORTS, MATCH_STATUSES, MatchRecord, NotFound

from ..auth.signin import safe_next
from ..params import match_filters, paging, sort_arg
from ..services import reports, services, store
from .evidence import match_evidence
from .highlight import side_spans
from .notices import sender_args

bp = Blueprint("matches", __name__, url_prefix="/matches")

MAX_BATCH = 500  # matches changed by one request


def list_data() -> dict[str, Any]:
    return reports().matches(match_filters(), sort_arg(), paging())


def detail_data() -> dict[str, Any]:
    page, chapter = request.args.get("page_key", ""), request.args.get("chapter", "")
    if not page or not chapter:
        abort(400, "name the match: page_key=...&chapter=...")
    return match_evidence(store(), services().catalog.outline(store()), page, chapter)


def set_status(pairs: Sequence[tuple[str, str]], status: str, by: str) -> list[MatchRecord]:
    """Move matches to a status, each with a history entry saying who and when. Raises NotFound."""
    if status not in MATCH_STATUSES:
        abort(400, f"status must be one of: {', '.join(MATCH_STATUSES)}; not {status!r}")
    if not pairs:
        abort(400, "choose at least one match")
    if len(pairs) > MAX_BATCH:
        abort(400, f"change at most {MAX_BATCH} matches at once")
    return [store().set_match_status(page, chapter, status, by=by) for page, chapter in pairs]


def _pair(raw: str) -> tuple[str, str]:
    try:
        page, chapter = json.loads(raw)
    except (ValueError, TypeError):
        abort(400, "a match is given as a JSON pair [page, chapter]")
    if not isinstance(page, str) or not isinstance(chapter, str):
        abort(400, "a match is given as a JSON pair [page, chapter]")
    return page, chapter


@bp.route("/")
def index() -> str:
    d = list_data()
    s = services()
    return render_template("matches/index.html", **d, statuses=MATCH_STATUSES, sorts=MATCH_SORTS,
                           works=[w.id for w in s.store.works()])


@bp.route("/view")
def detail() -> str:
    d = detail_data()
    for p in d["pictures"]:  # a chapter posted as pictures: each drawn by the images blueprint
        p["src"] = url_for("images.picture", key=p["key"])
    spans = d["match"]["spans"]
    return render_template("matches/detail.html", **d, statuses=MATCH_STATUSES, **sender_args(),
                           page_spans=side_spans(spans, "page"), original_spans=side_spans(spans, "original"))


@bp.route("/status", methods=["POST"])
def status() -> Any:
    pairs = [_pair(raw) for raw in request.form.getlist("match")]
    new = request.form.get("status", "")
    try:
        changed = set_status(pairs, new, current_user.name)
    except NotFound as e:
        abort(404, str(e.args[0]) if e.args else "no such match")
    flash(f"{len(changed)} match{'es' if len(changed) != 1 else ''} set to {new}.", "ok")
    if len(pairs) == 1 and not request.form.get("next"):
        return redirect(url_for("matches.detail", page_key=pairs[0][0], chapter=pairs[0][1]))
    return redirect(safe_next(request.form.get("next")))
