"""The dashboard: totals, matches found per day, top sites, recent failures."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template

from ..params import int_arg
from ..services import reports
from .charts import bar_chart, day_chart

bp = Blueprint("dashboard", __name__)


def data() -> dict[str, Any]:
    return reports().dashboard(days=int_arg("days", 30, 1, 366))


@bp.route("/")
def index() -> str:
    d = data()
    per_day = day_chart([(r["day"], r["matches"]) for r in d["per_day"]],
                        title=f"Matches found per day, last {len(d['per_day'])} days")
    top = bar_chart([(r["site"], r["matches"]) for r in d["top_sites"]], title="Sites with the most matches")
    return render_template("dashboard/index.html", **d, per_day_chart=per_day, top_sites_chart=top)
