"""Evidence packages: made for a page or a work on a site, downloaded, sealed with the
organisation's key, `fptrack evidence` (blueprints packages, evidence_keys).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import downloads
    from . import signing_key as keys

    return (downloads.bp, keys.bp)
