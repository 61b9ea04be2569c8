"""Error pages and JSON errors: a status and a message that says what to do, never a traceback."""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, jsonify, render_template
from werkzeug.exceptions import HTTPException, InternalServerError

from tracker.settings import SettingsError
from tracker.store import NotFound, StoreError

from .auth.access import is_api

TITLES = {400: "Bad request", 401: "Sign in", 403: "Not allowed", 404: "Not found", 405: "Method not allowed",
          413: "Too large", 429: "Too many requests", 500: "Something went wrong", 503: "Store unavailable"}


def error_response(status: int, message: str, title: str | None = None, extra: dict[str, Any] | None = None) -> Any:
    """`extra` adds fields to a JSON answer (the limit a text went over, say)."""
    title = title or TITLES.get(status, "Error")
    if is_api():
        response = jsonify(error=title.lower(), message=message, **(extra or {}))
        response.status_code = status
        return response
    return render_template("errors/error.html", status=status, title=title, message=message), status


def sentence(text: str) -> str:
    """A message shown on a page as a sentence: a capital first letter and a full stop at the end."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def http_error(e: HTTPException) -> Any:
    if e.code is None or e.code < 400:
        return e
    response = current_app.make_response(error_response(e.code, e.description or "", getattr(e, "title", None),
                                                        getattr(e, "extra", None)))
    if e.code == 405 and hasattr(e, "valid_methods") and e.valid_methods:
        response.headers["Allow"] = ", ".join(e.valid_methods)
    retry = getattr(e, "retry_after", None)  # werkzeug's 429 and 503 carry one
    if isinstance(retry, int) and retry > 0:
        response.headers["Retry-After"] = str(retry)
    return response


def store_error(e: Exception) -> Any:
    return error_response(503, f"{e} (the admin retries on the next request)")


def not_found(e: NotFound) -> Any:
    return error_response(404, str(e.args[0]) if e.args else "no such record")


def internal_error(e: InternalServerError) -> Any:
    current_app.logger.error("unhandled error", exc_info=e.original_exception or e)
    return error_response(500, "the error was logged; try again, and tell an admin if it keeps happening")


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(StoreError, store_error)
    app.register_error_handler(SettingsError, store_error)
    app.register_error_handler(NotFound, not_found)
    app.register_error_handler(InternalServerError, internal_error)
