"""Follow-up of takedowns: per site, the takedowns sent, the copies removed, the median days
to removal and the pages still up; the matches still open, longest first; and the latest
events people are told about (tracker.followup, tracker.notify)."""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

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
        "subscriptions": subscriptions(),
    }


def subscriptions() -> list[dict[str, Any]]:
    """Who is told, and how many events wait for each. A webhook's URL often is a secret itself
    (chat services put the key in the path): only its scheme and host are shown."""
    pending: dict[str, int] = {}
    for d in store().deliveries(status="pending"):
        pending[d.subscription] = pending.get(d.subscription, 0) + 1
    out = []
    for s in store().subscriptions():
        target = s.target
        if s.channel == "webhook":
            parts = urlsplit(s.target)
            target = f"{parts.scheme}://{parts.hostname or ''}/…"
        out.append({"id": s.id, "channel": s.channel, "target": target, "work": s.work, "site": s.site,
                    "kinds": s.kinds, "pending": pending.get(s.id, 0), "since": s.created_at})
    return out


@bp.route("/followup/")
def index() -> str:
    return render_template("followup/index.html", **data())


@bp.route("/api/followup")
def api() -> Any:
    return jsonify(data())
