"""The evidence package of a page, downloaded from the match evidence page (signed-in users:
web.auth.access lets no one else in): the same zip as `fptrack evidence PAGE_URL`, with the
notice's sender and contact (default: the organisation) and include_excerpts as its options."""
from __future__ import annotations

import hashlib
import tempfile
from typing import Any

from flask import Blueprint, Response, abort, request

from ..reports.streams import attachment
from ..review.notices import INCLUDE_HOW, flag_arg, sender_args
from ..services import services, store
from .package import NothingToPack, build_package, select_page
from .signing_key import package_seal

bp = Blueprint("packages", __name__, url_prefix="/evidence")
SPOOL = 8 * 1024 * 1024  # a package up to this size is made in memory, a larger one in a temporary file


def _chunks(f: Any, size: int = 256 * 1024):
    try:
        while chunk := f.read(size):
            yield chunk
    finally:
        f.close()


@bp.route("/package")
def package() -> Response:
    return package_response()


def package_response() -> Response:
    """The zip of page_key's evidence, for the admin's download and GET /api/evidence/package."""
    page = request.args.get("page_key", "")
    if not page:
        abort(400, "name the page: page_key=...")
    s = store()
    try:
        selection = select_page(s, page)
    except NothingToPack as e:
        abort(404, str(e))
    seal = package_seal(s, [m.work for m in selection.matches])
    f = tempfile.SpooledTemporaryFile(max_size=SPOOL)
    try:
        # pdf=None: a PDF when this machine has a browser to make it; the manifest says when not.
        build_package(s, services().catalog.outline(s), selection, f, pdf=None, **sender_args(),
                      include_excerpts=flag_arg("include_excerpts"), include_how=INCLUDE_HOW, seal=seal)
        size = f.tell()
        f.seek(0)
    except BaseException:
        f.close()
        raise
    name = f"evidence-{hashlib.sha256(page.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}.zip"
    return Response(_chunks(f), mimetype="application/zip",
                    headers={"Content-Disposition": attachment(name), "Content-Length": str(size),
                             "Cache-Control": "no-store"})
