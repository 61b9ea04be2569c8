"""Works: the list, and per work where its chapters are copied."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from ..manage import works as uploads
from ..params import SCOPES, scope_arg
from ..services import reports, services
from .charts import bar_chart
from .queries import MATRIX_SITES

bp = Blueprint("works", __name__, url_prefix="/works")
bp.url_value_preprocessor(uploads.raise_upload_limit)


def list_data() -> dict[str, Any]:
    s = scope_arg()
    return {"scope": s, "works": reports().works(scope=s)}


def report_data(work_id: str) -> dict[str, Any]:
    return reports().work(work_id, scope=scope_arg())


@bp.route("/", methods=["GET", "POST"])
def index() -> Any:
    """The works; an admin uploads a novel here (a POST of the upload form)."""
    if request.method == "GET":
        return render_template("works/index.html", **list_data(), scopes=SCOPES, form={}, error=None)
    try:
        done = uploads.upload_work(request.form, request.files)
    except HTTPException as e:  # the form again, with what to fix
        if e.code not in (400, 404, 409, 413, 503):
            raise
        error = (e.description or "")[:1].upper() + (e.description or "")[1:] + "."
        form = {k: request.form.get(k, "") for k in ("title", "author", "replace")}
        return render_template("works/index.html", **list_data(), scopes=SCOPES, form=form, error=error), e.code
    flash(uploads.upload_message(done), "ok")
    return redirect(url_for("works.chapters", work_id=done["work"]))


@bp.route("/<work_id>/chapters")
def chapters(work_id: str) -> str:
    return render_template("works/chapters.html", **uploads.chapters_data(work_id))


@bp.route("/<work_id>/remove", methods=["GET", "POST"])
def remove(work_id: str) -> Any:
    """A confirmation page; its form (the title typed again) removes the work."""
    if request.method == "GET":
        return render_template("works/remove.html", **uploads.chapters_data(work_id),
                               matches=reports().store.count_matches(work=work_id), error=None)
    try:
        done = uploads.remove(work_id, request.form.get("confirm"))
    except HTTPException as e:
        if e.code != 400:
            raise
        return render_template("works/remove.html", **uploads.chapters_data(work_id),
                               matches=reports().store.count_matches(work=work_id),
                               error="Type the title exactly to confirm the removal."), 400
    flash(f"Removed 《{done['work']}》: {done['chapters']} chapters and {done['matches']} matches.", "ok")
    return redirect(url_for("works.index"))


@bp.route("/<work_id>")
def report(work_id: str) -> str:
    d = report_data(work_id)

    def tables() -> dict[str, Any]:
        chart = bar_chart([(s["site"], s["copied"]) for s in d["sites"][:10]],
                          title="Chapters copied in full, per site")
        return {**d, "sites_chart": chart, "more_sites": max(0, len(d["sites"]) - MATRIX_SITES)}

    return render_template("works/report.html", **d, scopes=SCOPES,
                           tables=services().fragments.render("works/_report_tables.html", d, tables))
