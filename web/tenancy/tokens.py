"""API tokens in the admin: an organisation's tokens, made (the token shown once, on the
page that answers the form) and revoked. Admins manage their organisation's; an operator
any organisation's."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from tracker.store import NotFound
from tracker.store.tenancy import TOKEN_SCOPES
from tracker.tenancy.tokens import create_token

from ..services import services, store
from .orgs import OPERATOR, org_names

bp = Blueprint("tokens", __name__, url_prefix="/tokens")


def _page(new: dict[str, Any] | None = None, status: int = 200) -> Any:
    operator = current_user.role == OPERATOR
    tokens = store().tokens() if operator else store().tokens(current_user.org)
    return render_template("tokens/index.html", tokens=tokens, scopes=TOKEN_SCOPES, new=new,
                           orgs=org_names(services().root_store) if operator else [current_user.org]), status


@bp.route("/")
def index() -> Any:
    return _page()


@bp.route("/", methods=["POST"])
def create() -> Any:
    """The answer shows the token, once; it is not kept anywhere it could be shown again."""
    scope = request.form.get("scope", "")
    if scope not in TOKEN_SCOPES:
        abort(400, f"scope must be one of: {', '.join(TOKEN_SCOPES)}")
    org = request.form.get("org") or current_user.org
    if current_user.role != OPERATOR:
        org = current_user.org
    try:
        record, token = create_token(services().root_store, org, scope, request.form.get("name", "").strip(),
                                     created_by=current_user.name)
    except NotFound:
        abort(400, f"no organisation {org!r}")
    return _page({"id": record.id, "token": token, "scope": record.scope, "org": record.org}, 201)


@bp.route("/<token_id>/revoke", methods=["POST"])
def revoke(token_id: str) -> Any:
    try:
        store().delete_token(token_id)  # the organisation's view: another's token is not found
    except NotFound:
        abort(404, f"no token {token_id!r}")
    flash(f"Token {token_id} revoked.", "ok")
    return redirect(url_for("tokens.index"))
