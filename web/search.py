"""Search works, sites and URLs; and "check this text now" against the registered originals."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from .auth.access import reads_only
from .busy import RETRY_AFTER, Busy
from .params import paging, replace_surrogates, text_arg
from .review.evidence import check_text
from .review.highlight import side_spans
from .services import reports, services

bp = Blueprint("search", __name__)
BUSY = "busy checking another text; try again in a few seconds"


class TextTooLong(RequestEntityTooLarge):
    """A text over CHECK_MAX_CHARS: a 413 whose JSON names the limit."""

    def __init__(self, chars: int, limit: int):
        super().__init__(f"the text has {chars:,} characters; check at most {limit:,} at a time (split it)")
        self.extra = {"chars": chars, "limit": limit}


def search_data() -> dict[str, Any]:
    q = text_arg("q")
    if q is None:
        return {"q": "", "works": [], "sites": [], "page": None, "pages": [], "paging": None}
    return reports().search(q, paging())


def check_data(text: Any) -> dict[str, Any]:
    """Which chapters a pasted text copies. Raises a 400 for no text, TextTooLong over
    CHECK_MAX_CHARS, Busy while this process checks another text (rather than queueing)."""
    if not isinstance(text, str) or not text.strip():
        abort(400, "paste the text to check")
    limit = current_app.config["CHECK_MAX_CHARS"]
    if len(text) > limit:
        raise TextTooLong(len(text), limit)
    text, replaced = replace_surrogates(text)
    s = services()
    with s.check_slots.take(BUSY), s.engine() as tracker:
        result = check_text(tracker, s.store, s.catalog.outline(s.store), text)
    return {**result, "surrogates_replaced": replaced}


@bp.route("/search")
def search() -> str:
    return render_template("search/search.html", **search_data())


@bp.route("/check", methods=["GET", "POST"])
@reads_only
def check() -> Any:
    if request.method == "GET":
        return render_template("search/check.html", text="", result=None, error=None)
    text = request.form.get("text", "")
    try:
        result = check_data(text)
    except (TextTooLong, Busy) as e:  # the form again, with the text, to trim or send again
        headers = {"Retry-After": str(RETRY_AFTER)} if isinstance(e, Busy) else {}
        error = (e.description or "")[:1].upper() + (e.description or "")[1:] + "."
        return render_template("search/check.html", text=text, result=None, error=error), e.code, headers
    spans = [span for m in result["matches"] for span in side_spans(m["spans"], "page")]
    return render_template("search/check.html", text=text, result=result, text_spans=spans, error=None)
