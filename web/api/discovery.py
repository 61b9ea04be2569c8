"""The API of discovery: the recent runs, one run's queries, and starting discovery for a work
(or only listing the queries it would send). Sign-in, scopes and roles are the app's
(web.auth.access.guard): reading needs a read token, starting a write token."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, jsonify, request

from ..manage import discovery
from ..params import json_body

bp = Blueprint("discovery_api", __name__, url_prefix="/api")


@bp.route("/discovery/runs")
def runs() -> Any:
    """?work= (an id or title), ?limit= (1 to 500, 50 by default)."""
    return jsonify(discovery.runs_data())


@bp.route("/discovery/runs/<int:run_id>")
def run(run_id: int) -> Any:
    return jsonify(discovery.run_data(run_id))


@bp.route("/works/<work_id>/discover", methods=["POST"])
def discover(work_id: str) -> Any:
    """Start discovery for the work (its id or title) in the background: 202 with its state.
    {"dry_run": true}: only the queries it would send (200), no search API needed."""
    body = json_body() if request.content_length else {}
    dry = body.get("dry_run", False)
    if not isinstance(dry, bool):
        abort(400, '"dry_run" must be true or false')
    if dry:
        return jsonify(discovery.dry_run(work_id))
    return jsonify(discovery.start(work_id)), 202
