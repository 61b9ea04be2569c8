"""The key that signs the organisation's evidence packages: the seal of the packages the
admin makes, and its public half for their recipients, GET /api/evidence/public-key (the
same key and fingerprint as `fptrack evidence --public-key`)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, jsonify
from flask_login import current_user

from tracker.egress import EgressPolicy
from tracker.evidence.signing import SigningError, fingerprint, make_seal, org_signer, package_org, public_pem

from ..services import services, store

bp = Blueprint("evidence_keys", __name__, url_prefix="/api/evidence")


def package_seal(s: Any, works: list[str]) -> Any:
    """The seal of a package of these works' matches (their organisation's key, opened with the
    app's secret key; a timestamp with FPT_TSA_URL); a key or authority that fails is a 503."""
    try:
        seal = make_seal(s, package_org(s, works), current_app.config["SECRET_KEY"],
                         policy=EgressPolicy.load(services().settings))
    except SigningError as e:
        abort(503, str(e))
    stamp = seal.timestamper
    if stamp is not None:
        def answered(manifest: bytes) -> bytes:  # asked while the package is written
            try:
                return stamp(manifest)
            except SigningError as e:
                abort(503, str(e))

        seal.timestamper = answered
    return seal


@bp.route("/public-key")
def public_key() -> Any:
    org = current_user.org
    try:  # made now when the organisation has signed nothing yet, as its first package would
        raw = org_signer(store(), org, current_app.config["SECRET_KEY"]).public_key
    except SigningError as e:
        abort(503, str(e))
    return jsonify(org=org, algorithm="Ed25519", fingerprint=fingerprint(raw), public_key=public_pem(raw))
