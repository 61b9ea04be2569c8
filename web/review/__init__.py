"""Reviewing matches: the list, one match's evidence with its passages and pictures, the status
workflow, and takedown notices (blueprints matches, notices).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import matches, notices

    return (matches.bp, notices.bp)
