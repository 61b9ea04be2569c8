"""Follow-up of takedowns: per site, the takedowns sent, the copies removed, the median days
to removal and the pages still up; the matches still open, longest first; and the latest
events people are told about (tracker.followup, tracker.notify)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template

from tracker.followup import open_takedowns, stats

from .params import text_arg
from .services import services, store

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
    }


@bp.route("/followup/")
def index() -> str:
    return render_template("followup/index.html", **data())


@bp.route("/api/followup")
def api() -> Any:
    return jsonify(data())
