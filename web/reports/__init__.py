"""What the admin reports: the dashboard, works, sites, images, follow-up, their charts, shared
summaries and CSV/JSON exports (blueprints dashboard, works, sites, images, followup, export).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import dashboard, export, followup, images, sites, works

    return (dashboard.bp, works.bp, sites.bp, images.bp, followup.bp, export.bp)
