"""Who may do what, checked before every request.

Every page needs a signed-in user (a session kept in the store, see web.auth.sessions;
or, on /api/ for scripts, an API token sent as Bearer (tracker.tenancy.tokens) or HTTP Basic,
checked on every call). A token signs in as its organisation: a write token as an admin
of it, a read token as a viewer. Every request that is
not GET/HEAD/OPTIONS carries a CSRF token, except an API call authenticated by
a token or Basic: a browser does not add that header to a forged cross-site request, and
API writes also require a JSON body, which a cross-site form cannot send.
Viewers read only: any such request from a viewer is refused with 403 unless
its view is marked `reads_only` (a search form that changes nothing).
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from flask import Flask, abort, current_app, g, jsonify, redirect, request, url_for
from flask.sessions import SecureCookieSessionInterface
from flask_login import LoginManager, UserMixin, current_user
from flask_wtf.csrf import CSRFProtect

from tracker.store import StoreError, User
from tracker.store.tenancy import DEFAULT_ORG
from tracker.tenancy.tokens import check_token

from ..services import services
from ..tenancy.scope import OPERATOR, set_scope
from . import sessions
from .accounts import sign_in

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC = frozenset({"auth.login", "auth.healthz", "static"})
API_PREFIX = "/api/"

csrf = CSRFProtect()
login_manager = LoginManager()

F = TypeVar("F", bound=Callable[..., Any])


def reads_only(view: F) -> F:
    """Mark a POST view that changes nothing, so viewers may use it."""
    view.reads_only = True  # type: ignore[attr-defined]
    return view


class SignedIn(UserMixin):
    """The signed-in user as Flask-Login sees it."""

    def __init__(self, user: User, secret: str = "", org: str = DEFAULT_ORG):
        self.name, self.role = user.name, user.role
        self.secret = secret  # the session's, kept in the cookie; "" when signed in by Basic for one call
        self.org = org  # the organisation whose data this user sees (an operator sees all)

    def get_id(self) -> str:
        return self.secret

    @property
    def is_admin(self) -> bool:
        return self.role in ("admin", OPERATOR)


class SessionInterface(SecureCookieSessionInterface):
    """No session cookie for a call authenticated by Basic: a script has no use for one."""

    def save_session(self, app: Flask, session: Any, response: Any) -> None:
        if g.get("basic_auth"):
            return None
        return super().save_session(app, session, response)


def is_api() -> bool:
    return request.path.startswith(API_PREFIX)


def client_address() -> str:
    return request.remote_addr or "unknown"


def _store_errors_kept(loader: Callable[[Any], SignedIn | None]) -> Callable[[Any], SignedIn | None]:
    """A store error while loading the user is kept for `guard` to raise: raised here, Flask-Login
    would try again (and fail again) while the error page is rendered."""

    def wrapper(arg: Any) -> SignedIn | None:
        try:
            return loader(arg)
        except StoreError as e:
            g.user_store_error = e
            return None

    return wrapper


@login_manager.user_loader
@_store_errors_kept
def load_user(secret: str) -> SignedIn | None:
    s = services()
    user = sessions.resume(s.root_store, secret, s.session_limits, s.clock())
    return None if user is None else SignedIn(user, secret, s.root_store.owner("user", user.name))


def load_token_user(token: str) -> SignedIn | None:
    """An API token (`Authorization: Bearer ...`) signs in as its organisation, for one call: a
    write token as an admin of it, a read token as a viewer."""
    limiter, address = services().login_limiter, client_address()
    if limiter.blocked(address):  # as for passwords: guessing costs the address its access for a while
        g.auth_refused = (429, "too many failed sign-ins from this address; try again later",
                          limiter.retry_after(address))
        return None
    record = check_token(services().root_store, token, services().clock())
    if record is None:
        limiter.fail(address)
        g.auth_refused = (401, "unknown or revoked token; make one with `fptrack token create` or on the "
                               "Tokens page", 0)
        return None
    g.basic_auth = True  # as with Basic: no cookie, no CSRF token
    g.api_token = record
    user = User(name=f"token:{record.id}", password_hash="", role="admin" if record.scope == "write" else "viewer")
    return SignedIn(user, org=record.org)


@login_manager.request_loader
@_store_errors_kept
def load_basic_user(req: Any) -> SignedIn | None:
    if not is_api():
        return None
    auth = req.authorization
    if auth is not None and auth.type == "bearer":
        return load_token_user(auth.token or "")
    if auth is None or auth.type != "basic":
        return None
    limiter = services().login_limiter
    address = client_address()
    if limiter.blocked(address):
        g.auth_refused = (429, "too many failed sign-ins from this address; try again later",
                          limiter.retry_after(address))
        return None
    cfg = current_app.config
    result = sign_in(services().store, auth.username or "", auth.password or "",
                     max_failures=int(cfg["LOGIN_MAX_FAILURES"]),
                     lock_for=timedelta(minutes=float(cfg["LOGIN_LOCK_MINUTES"])), at=services().clock())
    if result.user is None:
        limiter.fail(address)
        g.auth_refused = (401, result.message, 0)
        return None
    g.basic_auth = True
    return SignedIn(result.user, org=services().root_store.owner("user", result.user.name))


@login_manager.unauthorized_handler
def unauthorized() -> Any:
    if is_api():
        status, message, retry = g.get("auth_refused", (401, "sign in: send an API token (Authorization: Bearer "
                                                             "TOKEN), HTTP Basic credentials (a user's name and "
                                                             "password) or a session cookie", 0))
        response = jsonify(error="unauthorized" if status == 401 else "too many requests", message=message)
        response.status_code = status
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Basic realm="fptrack", charset="UTF-8"'
            response.headers.add("WWW-Authenticate", 'Bearer realm="fptrack"')
        if retry:
            response.headers["Retry-After"] = str(retry)
        return response
    return redirect(url_for("auth.login", next=request.full_path if request.query_string else request.path))


def guard() -> Any:
    """Sign-in, CSRF and role, in that order (an anonymous API call is a 401, not a CSRF error)."""
    if request.endpoint in PUBLIC:
        if request.method not in SAFE_METHODS:
            csrf.protect()
        return None
    if not current_user.is_authenticated:
        if g.get("user_store_error") is not None:
            raise g.user_store_error
        return login_manager.unauthorized()
    set_scope(services().root_store, current_user.org, current_user.role)
    if request.method in SAFE_METHODS:
        return None
    if not g.get("basic_auth"):
        csrf.protect()
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    if view is not None and not getattr(view, "reads_only", False) and not current_user.is_admin:
        if g.get("api_token") is not None:
            abort(403, "this token's scope is read: it cannot change anything; use a write token")
        abort(403, "viewers can read but not change anything; ask an admin")
    return None


def security_headers(response: Any) -> Any:
    """No script runs anywhere in the admin; crawled text cannot add any either."""
    h = response.headers
    h.setdefault("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                                            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    h.setdefault("X-Content-Type-Options", "nosniff")
    h.setdefault("X-Frame-Options", "DENY")
    h.setdefault("Referrer-Policy", "no-referrer")  # links to pirate sites must not reveal the admin's URLs
    if request.endpoint != "static":
        h.setdefault("Cache-Control", "no-store")
    return response


def me() -> dict[str, Any]:
    """The signed-in user for templates, or None."""
    if current_user.is_authenticated:
        return {"me": {"name": current_user.name, "role": current_user.role, "is_admin": current_user.is_admin,
                       "org": current_user.org, "is_operator": current_user.role == OPERATOR}}
    return {"me": None}


def forget_snapshots(response):
    """A change made through the admin shows at once on the summaries."""
    if request.method not in ("GET", "HEAD", "OPTIONS") and response.status_code < 400:
        from ..services import services

        services().snapshots.clear()
    return response


def init_app(app: Flask) -> None:
    app.session_interface = SessionInterface()
    csrf.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    app.before_request(guard)
    app.after_request(security_headers)
    app.after_request(forget_snapshots)
    app.context_processor(me)
