"""The Flask admin: piracy reports with evidence.

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider

DEFAULTS: dict[str, Any] = {
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "SESSION_COOKIE_SECURE": False,  # FPT_WEB_SESSION_COOKIE_SECURE=true behind HTTPS
    "SESSION_COOKIE_NAME": "fptrack_session",
    "MAX_CONTENT_LENGTH": 2 * 1024 * 1024,
    "WTF_CSRF_CHECK_DEFAULT": False,  # checked in access.guard, which knows when Basic auth exempts an API call
    "WTF_CSRF_TIME_LIMIT": None,  # the token lives as long as the session
    "LOGIN_MAX_FAILURES": 5,  # per account, then locked for LOGIN_LOCK_MINUTES
    "LOGIN_LOCK_MINUTES": 15,
    "LOGIN_IP_MAX_FAILURES": 30,  # per client address in LOGIN_IP_WINDOW seconds
    "LOGIN_IP_WINDOW": 900,
    "PROXY_HOPS": 0,  # proxies in front of the app whose X-Forwarded-For to trust (for the address limit)
    "PER_PAGE": 50,
    "SUMMARY_TTL": 10,  # seconds the dashboard, works and sites summaries are shared between requests
    "SESSION_IDLE": 30 * 60,  # seconds without a request after which a session ends
    "SESSION_LIFETIME": 12 * 3600,  # seconds after sign-in after which a session ends, however active
    "CHECK_MAX_CHARS": 100_000,  # characters "check this text now" takes at once
    "FETCH_DEADLINE": 5.0,  # seconds a preview's or /api/check-url's fetch takes in all (docs/security.md)
}


class JSONProvider(DefaultJSONProvider):
    """ISO 8601 times and readable Chinese in JSON answers."""

    ensure_ascii = False
    sort_keys = False

    @staticmethod
    def default(o: Any) -> Any:
        if isinstance(o, (datetime, date)):
            return o.isoformat()
        return DefaultJSONProvider.default(o)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """The admin app. test_config may hold SETTINGS (tracker Settings), STORE (an open Store) and
    CLOCK (a function giving the current UTC time, for tests); without them settings come from
    FPT_* and the store opens on first use. Flask settings can be given as FPT_WEB_* variables
    (FPT_WEB_SESSION_COOKIE_SECURE=true, FPT_WEB_SESSION_IDLE=900)."""
    # Imported here, not at the top: `fptrack` imports web.cli for every command, and need not
    # load the blueprints, Flask-Login and Flask-WTF to print its help.
    from tracker.settings import Settings
    from tracker.store import now

    from . import api, auth, errors, evidence, filters, manage, reports, review, search, tenancy
    from .auth import access
    from .auth.secret import secret_key
    from .auth.sessions import Limits
    from .services import Services

    app = Flask(__name__)
    app.json = JSONProvider(app)
    app.config.from_mapping(DEFAULTS)
    app.config.from_prefixed_env("FPT_WEB")
    if test_config:
        app.config.from_mapping(test_config)
    settings = app.config.get("SETTINGS") or Settings.load()
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key(settings.home)
    if app.config["PROXY_HOPS"]:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = int(app.config["PROXY_HOPS"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)
    app.extensions["fptrack"] = Services(settings, app.config.get("STORE"),
                                         login_ip_failures=int(app.config["LOGIN_IP_MAX_FAILURES"]),
                                         login_ip_window=float(app.config["LOGIN_IP_WINDOW"]),
                                         summary_ttl=float(app.config["SUMMARY_TTL"]),
                                         session_limits=Limits(
                                             idle=timedelta(seconds=_positive(app, "SESSION_IDLE")),
                                             lifetime=timedelta(seconds=_positive(app, "SESSION_LIFETIME"))),
                                         clock=app.config.get("CLOCK") or now)
    app.config["CHECK_MAX_CHARS"] = int(_positive(app, "CHECK_MAX_CHARS"))
    filters.init_app(app)
    access.init_app(app)
    errors.init_app(app)
    for area in (auth, reports, review, evidence, manage, api, tenancy):
        for blueprint in area.blueprints():
            app.register_blueprint(blueprint)
    app.register_blueprint(search.bp)
    return app


def _positive(app: Flask, key: str) -> float:
    """A number setting above 0 (seconds, characters); else a SettingsError that names it."""
    from tracker.settings import SettingsError

    raw = app.config[key]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = 0.0
    if not 0 < value < 1e12:  # NaN and infinity fail too
        raise SettingsError(f"FPT_WEB_{key} must be a number above 0, not {raw!r}")
    return value
