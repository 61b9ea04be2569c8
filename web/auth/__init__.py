"""Signing in and who may do what: accounts, sessions, sign-in limits, the cookie key, the access
check before every request.

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import signin

    return (signin.bp,)
