"""Takedown notices from confirmed matches, per work and/or site: to read, copy or download,
and, once sent, to move those matches to takedown-sent. Excerpts (short quotations, which may
be fair use) are named only when include_excerpts is given (web.review.takedown.in_notice)."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from tracker.store.tenancy import DEFAULT_ORG

from ..params import text_arg
from ..reports.streams import attachment
from ..services import services, store
from .takedown import MAX_ITEMS, nothing_to_notice, notice_items, notice_matches, notice_text

INCLUDE_HOW = "tick \"Include excerpts\" (include_excerpts=1 in the API)"

bp = Blueprint("notices", __name__)


def flag_arg(name: str, source: Any = None) -> bool:
    """A yes/no value: JSON true/false, or 1/0, true/false, yes/no, on/off in a query or form (absent: no)."""
    raw = (source if source is not None else request.args).get(name)
    if raw is None or isinstance(raw, bool) or (type(raw) is int and raw in (0, 1)):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("", "0", "false", "no", "off"):
        return False
    if isinstance(raw, str) and raw.strip().lower() in ("1", "true", "yes", "on"):
        return True
    abort(400, f"{name} is 1 or 0 (true or false), not {raw!r}")


def notice_args(source: Any = None) -> dict[str, Any]:
    return {"work": text_arg("work", source), "site": text_arg("site", source),
            "include_excerpts": flag_arg("include_excerpts", source)}


def default_sender() -> str:
    """The rights holder a notice names when none is given: the user's organisation, but the
    unnamed default one."""
    org = getattr(current_user, "org", DEFAULT_ORG) or DEFAULT_ORG
    return "" if org == DEFAULT_ORG else org


def sender_args(source: Any = None) -> dict[str, str]:
    """The sender and contact of a notice, as given or by default (users have no stored e-mail:
    the contact stays a placeholder to fill in)."""
    return {"sender": text_arg("sender", source) or default_sender(), "contact": text_arg("contact", source) or ""}


def notice_data() -> dict[str, Any]:
    args = notice_args()
    items, more = notice_items(store(), services().catalog.outline(store()), **args)
    empty = "" if items else nothing_to_notice(store(), work=args["work"], site=args["site"],
                                               include_excerpts=args["include_excerpts"], include_how=INCLUDE_HOW)
    text = notice_text(items, **sender_args(), more=more, empty=empty)
    return {**args, "items": items, "more": more, "text": text}


def choices(work: str | None, site: str | None) -> list[dict[str, Any]]:
    """(site, work) pairs that have confirmed matches, to pick a notice from."""
    return store().match_totals(["site", "work"], work=work, site=site, status="confirmed")


def mark_sent(work: str | None, site: str | None, by: str, include_excerpts: bool = False) -> int:
    """Move the matches the notice lists (the same query and limit) from confirmed to takedown-sent;
    returns how many."""
    listed, _ = notice_matches(store(), work=work, site=site, include_excerpts=include_excerpts, limit=MAX_ITEMS)
    for m in listed:
        store().set_match_status(m.page, m.chapter, "takedown-sent", by=by)
    return len(listed)


@bp.route("/takedown")
def notice() -> str:
    d = notice_data()
    return render_template("notices/notice.html", **d, choices=choices(d["work"], d["site"]), **sender_args())


@bp.route("/takedown.txt")
def download() -> Response:
    d = notice_data()
    stamp = datetime.now(UTC).strftime("%Y%m%d")
    name = "-".join(x for x in ("takedown", d["work"], d["site"], stamp) if x) + ".txt"
    return Response(d["text"], mimetype="text/plain", headers={"Content-Disposition": attachment(name)})


@bp.route("/takedown/sent", methods=["POST"])
def sent() -> Any:
    args = notice_args(request.form)
    n = mark_sent(args["work"], args["site"], current_user.name, args["include_excerpts"])
    flash(f"{n} match{'es' if n != 1 else ''} moved from confirmed to takedown-sent.", "ok")
    where = {k: args[k] for k in ("work", "site") if args[k]}
    return redirect(url_for("matches.index", status="takedown-sent", **where))
