"""Signing in and out."""
from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, current_app, redirect, render_template, request, session, url_for
from flask_login import current_user, login_user, logout_user

from ..services import services
from . import sessions
from .access import SignedIn, client_address, reads_only
from .accounts import sign_in

bp = Blueprint("auth", __name__)


def safe_next(target: str | None) -> str:
    """Only a path on this site: never another host (an open redirect), scheme or protocol-relative URL."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return url_for("dashboard.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in target):
        return url_for("dashboard.index")
    return target


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    next_url = request.values.get("next", "")
    if request.method == "GET":
        return render_template("auth/login.html", next=next_url, error=None, name="")
    name = request.form.get("name", "").strip()
    password = request.form.get("password", "")
    limiter = services().login_limiter
    address = client_address()
    if limiter.blocked(address):
        minutes = max(1, limiter.retry_after(address) // 60)
        return render_template("auth/login.html", next=next_url, name=name,
                               error=f"Too many failed sign-ins from your address; try again in {minutes} "
                                     "minutes."), 429
    cfg, s = current_app.config, services()
    at = s.clock()
    result = sign_in(s.store, name, password, max_failures=int(cfg["LOGIN_MAX_FAILURES"]),
                     lock_for=timedelta(minutes=float(cfg["LOGIN_LOCK_MINUTES"])), at=at)
    if result.user is None:
        limiter.fail(address)
        return render_template("auth/login.html", next=next_url, name=name,
                               error=result.message[:1].upper() + result.message[1:] + "."), 401
    session.clear()  # a new session on sign-in: a session planted before it is worthless
    sessions.purge(s.store, s.session_limits, at)  # here, not per request: sign-ins are rare
    login_user(SignedIn(result.user, sessions.start(s.store, result.user, at)))
    return redirect(safe_next(next_url))


@bp.route("/healthz")
def healthz() -> Any:
    """For load balancers and container health checks: the app answers and its store does too."""
    services().store.counts()  # a store that cannot be reached becomes the 503 page
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"}


@bp.route("/logout", methods=["POST"])
@reads_only
def logout() -> Any:
    """End the session in the store, not only in this browser: a copy of the cookie is worthless after."""
    if current_user.is_authenticated and current_user.secret:
        sessions.end(services().store, current_user.secret)
    logout_user()
    session.clear()
    return redirect(url_for("auth.login"))
