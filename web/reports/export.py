"""Every list as a CSV or JSON download, streamed: /export/<list>.csv or .json, with the
same filters as the page the list is on (also under /api/export/ for scripts)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, request

from fingerprint.errors import InputError
from tracker.safe_names import clean_site_name

from ..params import match_filters, page_filters, scope_arg, sort_arg, text_arg
from ..services import reports
from .queries import MATCH_COLUMNS, PAGE_COLUMNS, RUN_COLUMNS, Paging, Reports, run_row
from .streams import attachment, csv_lines, json_lines

bp = Blueprint("export", __name__)

Rows = tuple[list[str], Iterable[dict[str, Any]]]

# "copied" is chapters copied in full; "in_part" and "excerpted" are counted apart (web.reports.queries.kind_fields)
WORK_COLUMNS = ["work", "title", "author", "chapters", "copied", "in_part", "excerpted", "coverage", "matches", "sites",
                "first_seen", "last_seen", "registered"]
WORK_SITE_COLUMNS = ["site", "copied", "in_part", "excerpted", "coverage", "matches", "first_seen", "last_seen"]
WORK_CHAPTER_COLUMNS = ["chapter", "title", "number", "registered", "kind", "matches", "sites", "first_seen",
                        "last_seen"]
SITE_COLUMNS = ["site", "configured", "recrawl", "pages", "queued", "done", "failed", "last_fetched", "works",
                "matches", "first_seen", "last_seen", "last_crawl", "last_outcome"]
SITE_WORK_COLUMNS = ["work", "chapters", "copied", "in_part", "excerpted", "coverage", "matches", "first_seen",
                     "last_seen"]
SITE_CHAPTER_COLUMNS = ["chapter", "title", "work", "kind", "matches", "first_seen", "last_seen"]
DAY_COLUMNS = ["day", "matches", "pages", "chapters", "first_seen", "last_seen"]


def _required(name: str) -> str:
    value = text_arg(name)
    if value is None:
        abort(400, f"this list needs {name}=...")
    return value


def _site_name() -> str:
    if "site" not in request.args:
        abort(400, "this list needs site=...")
    try:
        return clean_site_name(request.args["site"])  # spelled as the pipeline stores it
    except InputError as e:
        abort(400, str(e))


def _work_report(r: Reports, key: str) -> Rows:
    d = r.work(_required("work"), scope=scope_arg())
    if key == "sites":
        return WORK_SITE_COLUMNS, d["sites"]
    # One column per site, as in the matrix; "site:" keeps a site's name from clashing with a field.
    sites = [f"site:{s['site']}" for s in d["sites"]]
    rows = ({**{k: v for k, v in c.items() if k != "by_site"}, **{f"site:{k}": v for k, v in c["by_site"].items()}}
            for c in d["chapters"])
    return WORK_CHAPTER_COLUMNS + sites, rows


def _site_report(r: Reports, key: str) -> Rows:
    d = r.site(_site_name(), Paging(1, 1), scope=scope_arg())
    return (SITE_WORK_COLUMNS, d["works"]) if key == "works" else (SITE_CHAPTER_COLUMNS, d["chapters"])


def _days(r: Reports) -> Rows:
    rows = sorted(r.store.match_summary(["day"]), key=lambda x: x["day"])
    return DAY_COLUMNS, rows


LISTS: dict[str, Callable[[Reports], Rows]] = {
    "matches": lambda r: (MATCH_COLUMNS, r.iter_matches(match_filters(), sort_arg())),
    "pages": lambda r: (PAGE_COLUMNS, r.iter_pages(page_filters())),
    "works": lambda r: (WORK_COLUMNS, r.works(scope=scope_arg())),
    "work-sites": lambda r: _work_report(r, "sites"),
    "work-chapters": lambda r: _work_report(r, "chapters"),
    "sites": lambda r: (SITE_COLUMNS, r.sites(scope=scope_arg())),
    "site-works": lambda r: _site_report(r, "works"),
    "site-chapters": lambda r: _site_report(r, "chapters"),
    "crawls": lambda r: (RUN_COLUMNS, (run_row(x) for x in r.store.crawl_runs(site=text_arg("site"), limit=None))),
    "days": _days,
}


@bp.route("/export/<name>.<fmt>")
@bp.route("/api/export/<name>.<fmt>", endpoint="api_download")
def download(name: str, fmt: str) -> Response:
    if name not in LISTS:
        abort(404, f"no list named {name!r}; lists: {', '.join(LISTS)}")
    if fmt not in ("csv", "json"):
        abort(404, f"export as .csv or .json, not .{fmt}")
    columns, rows = LISTS[name](reports())
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
    body = csv_lines(columns, rows) if fmt == "csv" else json_lines(rows)
    mimetype = "text/csv" if fmt == "csv" else "application/json"
    # The rows' arguments are read from the request above; the generator needs only the store.
    return Response(body, mimetype=mimetype,
                    headers={"Content-Disposition": attachment(f"fptrack-{name}-{stamp}.{fmt}")})
