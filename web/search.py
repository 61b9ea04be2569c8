"""Search works, sites and URLs; and "check this text now" against the registered originals."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template, request

from .access import reads_only
from .evidence import MAX_CHECK_CHARS, check_text
from .highlight import side_spans
from .params import paging, text_arg
from .services import reports, services, store

bp = Blueprint("search", __name__)


def search_data() -> dict[str, Any]:
    q = text_arg("q")
    if q is None:
        return {"q": "", "works": [], "sites": [], "page": None, "pages": [], "paging": None}
    return reports().search(q, paging())


def check_data(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        abort(400, "paste the text to check")
    if len(text) > MAX_CHECK_CHARS:
        abort(400, f"the text has {len(text):,} characters; check at most {MAX_CHECK_CHARS:,} at a time")
    s = services()
    with s.engine() as tracker:
        return check_text(tracker, s.store, s.catalog.outline(store()), text)


@bp.route("/search")
def search() -> str:
    return render_template("search/search.html", **search_data())


@bp.route("/check", methods=["GET", "POST"])
@reads_only
def check() -> str:
    if request.method == "GET":
        return render_template("search/check.html", text="", result=None)
    text = request.form.get("text", "")
    result = check_data(text)
    spans = [span for m in result["matches"] for span in side_spans(m["spans"], "page")]
    return render_template("search/check.html", text=text, result=result, text_spans=spans)
