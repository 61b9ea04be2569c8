"""Follow-up of takedowns: per site, the takedowns sent, the copies removed, the median days
to removal and the pages still up; the matches still open, longest first; the latest events
people are told about (tracker.followup.recheck, tracker.followup.notify); and who is told, which an admin
changes here (web.manage.subscriptions)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, jsonify, redirect, render_template, request, url_for

from tracker.followup.notify import NotifyError
from tracker.followup.recheck import open_takedowns, stats
from tracker.store import NotFound

from ..errors import sentence
from ..manage import subscriptions as subs
from ..params import text_arg
from ..services import services, store

bp = Blueprint("followup", __name__)
OPEN_LIMIT = 200
EVENTS = 20


def data() -> dict[str, Any]:
    site = text_arg("site")
    clock = services().clock
    events = store().events(site=site, limit=EVENTS)
    return {
        "site": site,
        "sites": stats(store(), site=site, clock=clock),
        "open": open_takedowns(store(), site=site, clock=clock, limit=OPEN_LIMIT),
        "events": [{"kind": e.kind, "at": e.at, "site": e.site, "work": e.work, "page": e.page,
                    "chapter": e.chapter, "summary": e.summary} for e in events],
        "subscriptions": subs.rows(),
    }


def _page(status: int = 200, *, error: str = "", form: dict[str, Any] | None = None) -> Any:
    return render_template("followup/index.html", **data(), **subs.choices(), error=error,
                           form=form or {}), status


@bp.route("/followup/")
def index() -> Any:
    return _page()


@bp.route("/followup/subscriptions", methods=["POST"])
def add_subscription() -> Any:
    """The add form; a refusal comes back on the page (400) with what to fix and the values kept
    (not the secret)."""
    f = request.form
    kinds = f.getlist("kinds")
    try:
        sub, updated = subs.add(f, kinds)
    except NotifyError as e:
        form = {k: f.get(k, "") for k in ("channel", "target", "work", "site")}
        return _page(400, error=sentence(str(e)), form={**form, "kinds": kinds, "sent": True})
    flash(f"{'Updated' if updated else 'Added'}: {subs.describe(sub)}.", "ok")
    return redirect(url_for("followup.index") + "#who-is-told")


@bp.route("/followup/subscriptions/<sub_id>/remove", methods=["POST"])
def remove_subscription(sub_id: str) -> Any:
    try:
        sub = subs.remove(sub_id)
    except NotFound:
        abort(404, f"no subscription {sub_id!r}")
    flash(f"Removed: {subs.describe(sub)}.", "ok")
    return redirect(url_for("followup.index") + "#who-is-told")


@bp.route("/followup/subscriptions/<sub_id>/test", methods=["POST"])
def test_subscription(sub_id: str) -> Any:
    try:
        sub, ok, detail = subs.test(sub_id)
    except NotFound:
        abort(404, f"no subscription {sub_id!r}")
    if ok:
        flash(f"Test sent: {subs.describe(sub)} ({detail}).", "ok")
    else:
        flash(f"The test did not reach {subs.shown_target(sub)}: {sentence(detail)}", "error")
    return redirect(url_for("followup.index") + "#who-is-told")


@bp.route("/api/followup")
def api() -> Any:
    return jsonify(data())
