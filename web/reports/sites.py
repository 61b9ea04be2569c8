"""Sites: the list, and per site what it copies, how its crawls went and what failed."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.exceptions import HTTPException

from ..errors import sentence
from ..manage import sites as site_admin
from ..params import MAX_TEXT, SCOPES, paging, scope_arg
from ..services import reports, services

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


@bp.route("/", methods=["GET", "POST"])
def index() -> Any:
    """The sites; an admin adds one by URL here (a POST of the add form)."""
    if request.method == "GET":
        return _index_page(list_data(), form={}, error=None)
    try:
        site = site_admin.add_site(request.form.get("url"), request.form.get("name"))
    except HTTPException as e:
        if e.code not in (400, 409):
            raise
        form = {k: request.form.get(k, "") for k in ("url", "name")}
        return _index_page(list_data(), form=form, error=sentence(e.description or "")), e.code
    flash(f"Added site {site['site']}: check its rules with a sample page, then start its crawl.", "ok")
    return redirect(url_for("sites.manage", name=site["site"]))


def _index_page(d: dict[str, Any], **form: Any) -> str:
    sites = d["sites"]
    table = services().fragments.render("sites/_table.html", sites, lambda: {"sites": sites},
                                        admin=bool(current_user.is_authenticated and current_user.is_admin))
    return render_template("sites/index.html", **d, scopes=SCOPES, table=table, **form)


def _name() -> str:
    if "name" not in request.args:
        abort(400, "name the site: ?name=...")
    return site_admin.site_name_arg(request.args["name"])


def _manage_page(name: str, *, form: dict[str, Any] | None = None, preview: dict[str, Any] | None = None,
                 error: str | None = None, status: int = 200) -> Any:
    site = services().store.get_site(name)
    data = site_admin.site_data(site)
    rules = {**data["rules"], "start_urls": data["start_urls"], "recrawl": data["recrawl"], "hour": site.hour,
             "every": site.every}
    return render_template("sites/manage.html", site=data, rules=form if form is not None else rules,
                           default_hour=services().settings.recrawl_hour,
                           crawl=site_admin.crawl_state(name), preview=preview, error=error,
                           sample=request.form.get("sample_url", "") if request.method == "POST" else "",
                           pasted=request.form.get("sample_html", "") if request.method == "POST" else ""), status


@bp.route("/manage", methods=["GET", "POST"])
def manage() -> Any:
    """A site's rules (save, or preview them on a sample page without saving), schedule and crawl."""
    name = _name()
    if request.method == "GET":
        return _manage_page(name)
    values = site_admin.values_from_form(request.form)
    form = dict(values.items())
    try:
        rules = site_admin.rules_with(name, values, services().store.get_site(name))
        if request.form.get("action") == "preview":
            result = site_admin.preview(rules, request.form.get("sample_url"), request.form.get("sample_html"))
            return _manage_page(name, form=form, preview=result)
        site_admin.update_site(name, values)
    except HTTPException as e:
        if e.code != 400:
            raise
        return _manage_page(name, form=form, error=sentence(e.description or ""), status=400)
    flash(f"Saved the rules of {name}.", "ok")
    return redirect(url_for("sites.manage", name=name))


@bp.route("/crawl", methods=["POST"])
def crawl() -> Any:
    """Start (action=start) or pause (action=pause) the site's crawl."""
    name = _name()
    if request.form.get("action") == "pause":
        site_admin.pause_crawl(name)
        flash(f"Pausing the crawl of {name}: it stops after the pages in flight; start it again to resume.", "ok")
    else:
        site_admin.start_crawl(name)
        flash(f"Started a crawl of {name}; this page shows its progress.", "ok")
    return redirect(url_for("sites.manage", name=name))


@bp.route("/view")
def report() -> str:
    return render_template("sites/report.html", **site_data(), scopes=SCOPES)
