"""Organisations in the admin: operators manage the organisations (blueprint orgs).

Each request sees one organisation's data: that scope is web.tenancy.scope's. An operator
(role "operator") sees every organisation.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from tracker.store import NotFound, Store
from tracker.store.scoped import ScopedStore, assign_to
from tracker.store.tenancy import DEFAULT_ORG, Organisation, check_org_name

from ..services import services
from .scope import OPERATOR

bp = Blueprint("orgs", __name__, url_prefix="/orgs")


def add_org(store: Store, name: str) -> Organisation:
    """Raises ValueError with what to fix."""
    return store.upsert_org(Organisation(check_org_name(name)))


def org_names(store: Store) -> list[str]:
    """Every organisation, the default one included even before anyone added it."""
    return sorted({DEFAULT_ORG, *(o.name for o in store.orgs())})


def _operator_only() -> None:
    if current_user.role != OPERATOR:
        abort(403, "only an operator adds organisations")


@bp.route("/")
def index() -> str:
    """Operators: every organisation, and a form to add one; others: their own."""
    root = services().root_store
    shown = org_names(root) if current_user.role == OPERATOR else [current_user.org]
    users = root.owners("user")
    counts = {}
    for org in shown:
        view = ScopedStore(root, org)
        counts[org] = {"work": len(view.work_ids), "site": len(view.sites())}
    members: dict[str, list[str]] = {}
    for u in root.users():
        members.setdefault(users.get(u.name, DEFAULT_ORG), []).append(u.name)
    return render_template("orgs/index.html", orgs=shown, counts=counts, members=members,
                           works=[w.id for w in root.works()], sites=[x.name for x in root.sites()],
                           users=[u.name for u in root.users()])


@bp.route("/assign", methods=["POST"])
def assign() -> Any:
    """Move a work (with its matches), a site or a user to an organisation."""
    _operator_only()
    root = services().root_store
    kind, key, org = (request.form.get(k, "").strip() for k in ("kind", "key", "org"))
    if kind not in ("work", "site", "user") or not key:
        abort(400, "give kind (work, site or user), key and org")
    if org not in org_names(root):
        abort(400, f"no organisation {org!r}")
    try:
        assign_to(root, org, **{kind: (key,)})
    except NotFound:
        abort(404, f"no {kind} {key!r}")
    flash(f"The {kind} {key} now belongs to {org}.", "ok")
    return redirect(url_for("orgs.index"))


@bp.route("/", methods=["POST"])
def add() -> Any:
    _operator_only()
    name = request.form.get("name", "").strip()
    try:
        add_org(services().root_store, name)
    except ValueError as e:
        flash(str(e), "error")
        return redirect(url_for("orgs.index"))
    flash(f"Organisation {name} added.", "ok")
    return redirect(url_for("orgs.index"))
