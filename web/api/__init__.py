"""The JSON API: reads that mirror the pages, writes for works and sites, discovery, and the OpenAPI
description (blueprints api, manage_api, discovery_api, openapi).

May import: fingerprint, pagetext, ocr, clikit, tracker, crawler and web.
"""
from __future__ import annotations

from flask import Blueprint


def blueprints() -> tuple[Blueprint, ...]:
    """The area's blueprints, for the app factory (their modules load only when an app is made)."""
    from . import discovery, manage, openapi, reads

    return (reads.bp, manage.bp, openapi.bp, discovery.bp)
