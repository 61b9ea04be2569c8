"""Managing what is watched: works uploaded, sites added and edited, who is told, discovery started
(blueprints discovery, subscriptions; their pages hang off works and sites).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import discovery, subscriptions

    return (discovery.bp, subscriptions.bp)
