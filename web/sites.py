"""Sites: the list, and per site what it copies, how its crawls went and what failed."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template, request

from .params import MAX_TEXT, SCOPES, paging, scope_arg
from .services import reports

bp = Blueprint("sites", __name__, url_prefix="/sites")


def list_data() -> dict[str, Any]:
    s = scope_arg()
    return {"scope": s, "sites": reports().sites(scope=s)}


def site_data() -> dict[str, Any]:
    if "name" not in request.args:
        abort(400, "name the site: /sites/view?name=...")
    name = request.args["name"].strip()  # may be empty: pages stored with no site
    if len(name) > MAX_TEXT:
        abort(400, f"name is longer than {MAX_TEXT} characters")
    return reports().site(name, paging(), scope=scope_arg())


@bp.route("/")
def index() -> str:
    return render_template("sites/index.html", **list_data(), scopes=SCOPES)


@bp.route("/view")
def report() -> str:
    return render_template("sites/report.html", **site_data(), scopes=SCOPES)
