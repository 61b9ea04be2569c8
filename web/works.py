"""Works: the list, and per work where its chapters are copied."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template

from .charts import bar_chart
from .params import SCOPES, scope_arg
from .reports import MATRIX_SITES
from .services import reports

bp = Blueprint("works", __name__, url_prefix="/works")


def list_data() -> dict[str, Any]:
    s = scope_arg()
    return {"scope": s, "works": reports().works(scope=s)}


def report_data(work_id: str) -> dict[str, Any]:
    return reports().work(work_id, scope=scope_arg())


@bp.route("/")
def index() -> str:
    return render_template("works/index.html", **list_data(), scopes=SCOPES)


@bp.route("/<work_id>")
def report(work_id: str) -> str:
    d = report_data(work_id)
    chart = bar_chart([(s["site"], s["copied"]) for s in d["sites"][:10]], title="Chapters copied, per site")
    return render_template("works/report.html", **d, scopes=SCOPES, sites_chart=chart,
                           more_sites=max(0, len(d["sites"]) - MATRIX_SITES))
