"""Users in the admin: listed, added (a password typed twice, or one generated and shown once),
their role changed, their password reset (generated, shown once) and removed (their sessions
ended at once).

The JSON API under /api/users does the same for scripts signed in as a person (HTTP Basic
or a session); an API token is refused, so a leaked token cannot make accounts that outlive
its revocation.

Admins manage their own organisation's users, through the request's scoped store, so another
organisation's user is a 404 like any of its records; an operator manages every organisation's
and picks the organisation of a new user; viewers get 403. Admins neither make operators nor
change, reset or remove one. Two rules keep every organisation manageable: nobody removes
themselves or changes their own role, and an organisation keeps at least one admin (or
operator) who can sign in.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Blueprint, abort, flash, g, jsonify, redirect, render_template, request, url_for
from flask_login import current_user

from tracker.store import ROLES, NotFound, Store, User
from tracker.store.tenancy import DEFAULT_ORG

from ..auth import sessions
from ..auth.accounts import AccountError, check_name, hash_password, new_user
from ..params import json_body
from ..services import services, store
from .orgs import OPERATOR, org_names

bp = Blueprint("users", __name__, url_prefix="/users")
#: The same as JSON, for people's scripts (HTTP Basic or a session); API tokens are refused.
api = Blueprint("users_api", __name__, url_prefix="/api/users")

#: The roles that manage an organisation; each organisation keeps one of them able to sign in.
MANAGERS = ("admin", OPERATOR)


class NotAllowed(Exception):
    """The signed-in user's role may not do this (a 403); the message says who may."""


@dataclass(frozen=True)
class Actor:
    """Who is asking: the signed-in user's name, role and organisation."""
    name: str
    role: str
    org: str

    @property
    def is_operator(self) -> bool:
        return self.role == OPERATOR


def generate_password() -> str:
    """16 URL-safe characters (96 random bits), well over the minimum length."""
    return secrets.token_urlsafe(12)


def can_sign_in(user: User, at: datetime) -> bool:
    return user.locked_until is None or user.locked_until <= at


def check_role(role: str, actor: Actor) -> str:
    if role not in ROLES:
        raise AccountError(f"unknown role {role!r}; use one of: {', '.join(ROLES)}")
    if role == OPERATOR and not actor.is_operator:
        raise NotAllowed("an admin cannot make operators; ask an operator")
    return role


def _manageable(view: Store, name: str, actor: Actor) -> User:
    """The user `name` as the actor's store sees it (NotFound for another organisation's)."""
    user = view.get_user(name)
    if user.role == OPERATOR and not actor.is_operator:
        raise NotAllowed(f"{name} is an operator: only an operator changes an operator")
    return user


def last_manager(root: Store, user: User, at: datetime) -> str:
    """Why `user` must stay an admin or operator, or "" when another of its organisation can sign in."""
    if user.role not in MANAGERS:
        return ""
    owners = root.owners("user")
    org = owners.get(user.name, DEFAULT_ORG)
    others = [u.name for u in root.users() if u.name != user.name and u.role in MANAGERS
              and owners.get(u.name, DEFAULT_ORG) == org and can_sign_in(u, at)]
    if others:
        return ""
    return (f"{user.name} is the last admin of {org} who can sign in; make another user of {org} "
            "an admin first")


def why_not_removed(root: Store, user: User, actor: Actor, at: datetime) -> str:
    """The reason `user` cannot be removed by `actor`, or ""."""
    if user.name == actor.name:
        return "you cannot remove yourself; ask another admin"
    return last_manager(root, user, at)


def add_user(view: Store, root: Store, actor: Actor, *, name: str, role: str, org: str, password: str = "",
             repeat: str = "", generate: bool = False) -> tuple[User, str]:
    """Add a user; returns it and the generated password ("" when one was typed). An admin's
    new users join the admin's organisation; an operator names one."""
    check_name(name)
    check_role(role, actor)
    if not actor.is_operator:
        org = actor.org
    elif org not in org_names(root):
        raise AccountError(f"no organisation {org!r}; add it on the Organisations page first")
    try:
        root.get_user(name)  # names are unique across organisations
    except NotFound:
        pass
    else:
        raise AccountError(f"the name {name} is taken; choose another")
    if generate:
        password = generate_password()
    elif not password:
        raise AccountError("type a password twice, or have one generated")
    elif password != repeat:
        raise AccountError("the two passwords differ; type the same one twice")
    user = new_user(name, password, role)
    if actor.is_operator:
        root.set_owner("user", name, org)  # first: the new user never shows in another organisation
        user = root.upsert_user(user)
    else:
        user = view.upsert_user(user)  # the scoped store makes it the organisation's
    return user, password if generate else ""


def change_role(view: Store, root: Store, actor: Actor, name: str, role: str, at: datetime) -> User:
    user = _manageable(view, name, actor)
    check_role(role, actor)
    if name == actor.name:
        raise AccountError("you cannot change your own role; ask another admin")
    if role == user.role:
        return user
    if role not in MANAGERS and (why := last_manager(root, user, at)):
        raise AccountError(why)
    user.role = role
    return view.upsert_user(user)  # takes effect on the user's next request: the role is read each time


def reset_password(view: Store, root: Store, actor: Actor, name: str) -> tuple[str, int]:
    """A new generated password (which also unlocks the account); returns it and how many
    sessions it ended (whoever knew the old one is signed out)."""
    user = _manageable(view, name, actor)
    password = generate_password()
    user.password_hash = hash_password(password)
    user.failed_logins, user.locked_until = 0, None
    view.upsert_user(user)
    return password, sessions.end_all(root, name)


def remove_user(view: Store, root: Store, actor: Actor, name: str, confirm: str, at: datetime) -> int:
    """Remove a user and end its sessions; returns how many were ended."""
    user = _manageable(view, name, actor)
    if why := why_not_removed(root, user, actor, at):
        raise AccountError(why)
    if confirm != name:
        raise AccountError(f"type the name, {name}, exactly to confirm")
    view.delete_user(name)
    return sessions.end_all(root, name)


# ---- views -----------------------------------------------------------------------------------


def _actor() -> Actor:
    return Actor(current_user.name, current_user.role, current_user.org)


@bp.before_request
def admins_only() -> None:
    if not current_user.is_admin:
        abort(403, "only admins and operators manage users; ask an admin")


def _page(status: int = 200, *, error: str = "", form: dict[str, str] | None = None,
          new: dict[str, Any] | None = None) -> Any:
    actor, root = _actor(), services().root_store
    owners = root.owners("user")
    org = request.args.get("org", "") if actor.is_operator else ""
    users = [u for u in store().users() if not org or owners.get(u.name, DEFAULT_ORG) == org]
    rows = [{"user": u, "org": owners.get(u.name, DEFAULT_ORG)} for u in users]
    return render_template("users/index.html", rows=rows,
                           roles=[r for r in ROLES if actor.is_operator or r != OPERATOR],
                           orgs=org_names(root) if actor.is_operator else [actor.org], org=org,
                           error=error, form=form or {}, new=new), status


def _refused(e: NotAllowed) -> Any:
    abort(403, str(e))


def _sentence(e: Exception) -> str:
    return str(e)[:1].upper() + str(e)[1:] + "."


@bp.route("/")
def index() -> Any:
    return _page()


@bp.route("/", methods=["POST"])
def create() -> Any:
    """A typed password: back to the list. A generated one: shown on the page that answers, once."""
    f = request.form
    form = {"name": f.get("name", "").strip(), "role": f.get("role", ""), "org": f.get("org", "")}
    try:
        user, password = add_user(store(), services().root_store, _actor(), name=form["name"], role=form["role"],
                                  org=form["org"], password=f.get("password", ""), repeat=f.get("repeat", ""),
                                  generate=bool(f.get("generate")))
    except NotAllowed as e:
        return _refused(e)
    except AccountError as e:
        return _page(400, error=_sentence(e), form=form)
    org = services().root_store.owner("user", user.name)
    if password:
        return _page(201, new={"name": user.name, "role": user.role, "org": org, "password": password})
    flash(f"User {user.name} ({user.role}, {org}) added.", "ok")
    return redirect(url_for("users.index"))


def _user_page(name: str, status: int = 200, *, error: str = "", password: str = "") -> Any:
    actor, root = _actor(), services().root_store
    user = store().get_user(name)
    return render_template("users/view.html", user=user, org=root.owner("user", name),
                           sessions=len(root.sessions(name)), roles=[r for r in ROLES if actor.is_operator or
                                                                     r != OPERATOR],
                           managed=actor.is_operator or user.role != OPERATOR, error=error, password=password,
                           myself=name == actor.name), status


@bp.route("/view")
def view() -> Any:
    return _user_page(request.args.get("name", ""))


@bp.route("/role", methods=["POST"])
def role() -> Any:
    name = request.form.get("name", "")
    try:
        user = change_role(store(), services().root_store, _actor(), name, request.form.get("role", ""),
                           services().clock())
    except NotAllowed as e:
        return _refused(e)
    except AccountError as e:
        return _user_page(name, 400, error=_sentence(e))
    flash(f"{user.name} is now {user.role}.", "ok")
    return redirect(url_for("users.view", name=name))


@bp.route("/password", methods=["POST"])
def password() -> Any:
    """The new password is on the page that answers, once; the old one's sessions are ended."""
    name = request.form.get("name", "")
    try:
        new, _ = reset_password(store(), services().root_store, _actor(), name)
    except NotAllowed as e:
        return _refused(e)
    return _user_page(name, password=new)


@bp.route("/remove", methods=["GET", "POST"])
def remove() -> Any:
    """A confirmation page (or why the user cannot be removed); its form removes the user."""
    actor, root = _actor(), services().root_store
    name = request.values.get("name", "")
    user = _manageable_or_403(name, actor)
    if request.method == "GET":
        return render_template("users/remove.html", user=user, org=root.owner("user", name),
                               why=why_not_removed(root, user, actor, services().clock()), error="")
    try:
        ended = remove_user(store(), root, actor, name, request.form.get("confirm", ""), services().clock())
    except AccountError as e:
        why = why_not_removed(root, user, actor, services().clock())
        return render_template("users/remove.html", user=user, org=root.owner("user", name), why=why,
                               error="" if why else _sentence(e)), 400
    flash(f"User {name} removed" + (f"; {ended} session{'s' if ended != 1 else ''} ended." if ended else "."), "ok")
    return redirect(url_for("users.index"))


def _manageable_or_403(name: str, actor: Actor) -> User:
    try:
        return _manageable(store(), name, actor)
    except NotAllowed as e:
        return _refused(e)


# ---- the JSON API --------------------------------------------------------------------------------


@api.before_request
def people_only() -> None:
    if g.get("api_token") is not None:
        abort(403, "an API token cannot manage users; sign in as an admin (HTTP Basic) or use the Users page")
    admins_only()


def _json(user: User, **more: Any) -> dict[str, Any]:
    return {"name": user.name, "role": user.role, "org": services().root_store.owner("user", user.name),
            "created_at": user.created_at, "last_login": user.last_login, "locked_until": user.locked_until,
            "failed_logins": user.failed_logins, **more}


def _api_call(fn: Any, *args: Any, **kw: Any) -> Any:
    """Run one of the functions above; its refusals as 403 and 400 with their message."""
    try:
        return fn(*args, **kw)
    except NotAllowed as e:
        abort(403, str(e))
    except AccountError as e:
        abort(400, str(e))


@api.route("")
def api_list() -> Any:
    """Operators: ?org= for one organisation's users."""
    owners = services().root_store.owners("user")
    org = request.args.get("org", "") if _actor().is_operator else ""
    return jsonify(users=[_json(u) for u in store().users() if not org or owners.get(u.name, DEFAULT_ORG) == org])


@api.route("", methods=["POST"])
def api_add() -> Any:
    """{"name", "role", "org" (operators), "password"}; without a password one is generated and
    answered, once."""
    body = json_body()
    typed = str(body.get("password") or "")
    user, generated = _api_call(add_user, store(), services().root_store, _actor(), name=str(body.get("name", "")),
                                role=str(body.get("role", "viewer")), org=str(body.get("org", "")),
                                password=typed, repeat=typed, generate=not typed)
    return jsonify(user=_json(user), **({"password": generated} if generated else {})), 201


@api.route("/<name>")
def api_user(name: str) -> Any:
    user = store().get_user(name)
    return jsonify(user=_json(user, sessions=len(services().root_store.sessions(name))))


@api.route("/<name>", methods=["PATCH"])
def api_role(name: str) -> Any:
    """{"role": ...}"""
    role = str(json_body().get("role", ""))
    user = _api_call(change_role, store(), services().root_store, _actor(), name, role, services().clock())
    return jsonify(user=_json(user))


@api.route("/<name>/password", methods=["POST"])
def api_password(name: str) -> Any:
    """A new generated password, answered once; the user's sessions end. The body is a JSON object
    ({}), which no cross-site form can send with a browser's cached Basic credentials."""
    json_body()
    password, ended = _api_call(reset_password, store(), services().root_store, _actor(), name)
    return jsonify(user=_json(store().get_user(name)), password=password, sessions_ended=ended)


@api.route("/<name>", methods=["DELETE"])
def api_remove(name: str) -> Any:
    """?confirm=<the name>: the user goes, and its sessions end."""
    ended = _api_call(remove_user, store(), services().root_store, _actor(), name, request.args.get("confirm", ""),
                      services().clock())
    return jsonify(removed=name, sessions_ended=ended)
