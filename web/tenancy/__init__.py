"""Organisations, their users and their API tokens, managed in the admin and the API (blueprints
orgs, users, users_api, tokens).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import orgs, tokens, users

    return (orgs.bp, tokens.bp, users.bp, users.api)
