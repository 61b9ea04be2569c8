"""Takedown notices from confirmed matches, per work and/or site: to read, copy or download,
and, once sent, to move those matches to takedown-sent."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from flask import Blueprint, Response, flash, redirect, render_template, request, url_for
from flask_login import current_user

from .params import text_arg
from .services import services, store
from .streams import attachment
from .takedown import MAX_ITEMS, notice_items, notice_text

bp = Blueprint("notices", __name__)


def notice_args(source: Any = None) -> dict[str, str | None]:
    return {"work": text_arg("work", source), "site": text_arg("site", source)}


def notice_data() -> dict[str, Any]:
    args = notice_args()
    items, more = notice_items(store(), services().catalog.outline(store()), **args)
    text = notice_text(items, sender=text_arg("sender") or "", contact=text_arg("contact") or "", more=more)
    return {**args, "items": items, "more": more, "text": text}


def choices(work: str | None, site: str | None) -> list[dict[str, Any]]:
    """(site, work) pairs that have confirmed matches, to pick a notice from."""
    return store().match_totals(["site", "work"], work=work, site=site, status="confirmed")


def mark_sent(work: str | None, site: str | None, by: str) -> int:
    """Move the matches the notice lists (the same query and limit) from confirmed to takedown-sent;
    returns how many."""
    listed = store().matches(work=work, site=site, status="confirmed", sort="site", limit=MAX_ITEMS)
    for m in listed:
        store().set_match_status(m.page, m.chapter, "takedown-sent", by=by)
    return len(listed)


@bp.route("/takedown")
def notice() -> str:
    d = notice_data()
    return render_template("notices/notice.html", **d, choices=choices(d["work"], d["site"]),
                           sender=text_arg("sender") or "", contact=text_arg("contact") or "")


@bp.route("/takedown.txt")
def download() -> Response:
    d = notice_data()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d")
    name = "-".join(x for x in ("takedown", d["work"], d["site"], stamp) if x) + ".txt"
    return Response(d["text"], mimetype="text/plain", headers={"Content-Disposition": attachment(name)})


@bp.route("/takedown/sent", methods=["POST"])
def sent() -> Any:
    args = notice_args(request.form)
    n = mark_sent(args["work"], args["site"], current_user.name)
    flash(f"{n} match{'es' if n != 1 else ''} moved from confirmed to takedown-sent.", "ok")
    return redirect(url_for("matches.index", status="takedown-sent", **{k: v for k, v in args.items() if v}))
