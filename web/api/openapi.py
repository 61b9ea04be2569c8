"""The API's OpenAPI 3.1 description, served at /api/openapi.json.

Each operation is one entry of OPERATIONS: (path, method) -> summary, query parameters,
request body, response properties. The path parameters, the security (a read or write
token, Basic, or the session) and the error answers are added from the rule itself, so an
entry says only what is particular to it. tests/web/test_openapi.py checks that the entries
and the app's /api rules agree both ways: a new route must be described here.
"""
from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, current_app, jsonify

from tracker.store import MATCH_SORTS, MATCH_STATUSES, PAGE_STATUSES

bp = Blueprint("openapi", __name__, url_prefix="/api")

SCOPES = ["all", "active", *MATCH_STATUSES]
PAGING = [("page", "integer", "page number, from 1"), ("per_page", "integer", "rows per page")]
MATCH_FILTERS = [("work", "string", "a work's id"), ("site", "string", "a site's name"),
                 ("status", "string", "one of: " + ", ".join(MATCH_STATUSES)), ("chapter", "string", "a chapter key"),
                 ("page_key", "string", "a page's key (its URL)"),
                 ("sort", "string", "one of: " + ", ".join(MATCH_SORTS) + "; '-' first for descending")]
SCOPE = [("scope", "string", "match statuses counted: " + ", ".join(SCOPES))]
MATCH = [("page_key", "string", "the page's key (its URL)"), ("chapter", "string", "the chapter's key")]
IMAGE = [("image", "string", "the found image's key (its URL)"), ("original", "string", "the registered image's key")]
JSON = "application/json"


def obj(*names: str, **typed: str) -> dict[str, Any]:
    """An object schema with these properties (any type unless given)."""
    props: dict[str, Any] = {n: {} for n in names}
    props.update({n: {"type": t} for n, t in typed.items()})
    return {"type": "object", "properties": props}


def body(*required: str, **props: str) -> dict[str, Any]:
    schema = obj(**props)
    if required:
        schema["required"] = list(required)
    return {"required": True, "content": {JSON: {"schema": schema}}}


ROWS = {"type": "array", "items": {"type": "object"}}
LIST = lambda key, *more: {**obj(*more), "properties": {key: ROWS, **obj(*more)["properties"]}}  # noqa: E731

OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("/api/me", "get"): {"summary": "Who is signed in, with the CSRF token a session needs to write",
                         "response": obj(name="string", role="string", csrf_token="string")},
    ("/api/dashboard", "get"): {"summary": "Totals, copies still up, matches per day, top sites (copies still up), "
                                           "recent failed pages and failed crawls",
                                "query": [("days", "integer", "days of matches per day (1 to 366)")],
                                "response": obj("counts", "active", "per_day", "top_sites", "failures",
                                                "crawl_failures")},
    ("/api/works", "get"): {"summary": "The organisation's works, with how much of each is copied and where",
                            "query": SCOPE, "response": LIST("works", "scope")},
    ("/api/works", "post"): {"summary": "Register a work: a .txt split at its chapter headings, a .zip of "
                                        "chapter files, or an .epub. With replace=true, a new edition of the "
                                        "registered work of that title (404 when there is none): its chapters "
                                        "become the work's; unchanged ones keep their matches, missing ones "
                                        "are removed. Without it, a taken title is a 409",
                             "form": {"title": "string", "file": "binary", "author": "string", "replace": "boolean"},
                             "required": ["title", "file"], "status": "201",
                             "response": obj("work", "chapters", "images", replaced="boolean", added="integer",
                                             changed="integer", unchanged="integer", removed="integer")},
    ("/api/works/{work_id}", "get"): {"summary": "Where one work is copied: sites, coverage, chapter-by-site matrix",
                                      "query": SCOPE, "response": obj("work", "scope", "totals", "sites", "chapters",
                                                                      "matrix_sites", "images")},
    ("/api/works/{work_id}", "delete"): {"summary": "Remove a work with its chapters, index entries and matches",
                                         "query": [("confirm", "string", "the work's title, to confirm")],
                                         "response": obj("work", "chapters")},
    ("/api/works/{work_id}/chapters", "get"): {"summary": "A work's chapters", "response": obj("work", "chapters")},
    ("/api/sites", "get"): {"summary": "Every site seen in pages, matches or the configuration",
                            "query": SCOPE, "response": LIST("sites", "scope")},
    ("/api/sites", "post"): {"summary": "Track a site by a URL of it; optional rules and schedule "
                                        "({hour: 0-23 UTC, every: days 1-30, paused})",
                             "body": body("url", url="string", name="string", rules="object", schedule="object"),
                             "status": "201", "response": obj("site", "rules", "schedule")},
    ("/api/sites/view", "get"): {"summary": "One site: what it copies, its crawls, its failed pages",
                                 "query": [("name", "string", "the site's name"), *SCOPE, *PAGING],
                                 "required": ["name"],
                                 "response": obj("site", "config", "scope", "pages", "works", "chapters", "crawls",
                                                 "failures", "paging")},
    ("/api/sites/{name}", "patch"): {"summary": "Change a site's rules or schedule (null puts a default back)",
                                     "body": body(schedule="object", hour="integer", every="integer",
                                                  recrawl="boolean"),
                                     "response": obj("site", "rules", "schedule")},
    ("/api/sites/{name}/crawl", "get"): {"summary": "The progress of the site's crawl", "response": obj("state")},
    ("/api/sites/{name}/crawl", "post"): {"summary": "Start or resume a crawl of the site",
                                          "body": body(max_pages="integer"), "status": "202",
                                          "response": obj("state")},
    ("/api/sites/{name}/pause", "post"): {"summary": "Pause the site's crawl", "response": obj("state")},
    ("/api/sites/{name}/preview", "post"): {"summary": "What the extractor takes from a sample page with these rules",
                                            "body": body(url="string", html="string", rules="object"),
                                            "response": obj("title", "text")},
    ("/api/matches", "get"): {"summary": "A filtered, sorted page of matches",
                              "query": [*MATCH_FILTERS, *PAGING],
                              "response": obj("filters", "sort", "paging", matches="array")},
    ("/api/matches/view", "get"): {"summary": "One match with both texts, the passages, scores and history",
                                   "query": MATCH, "required": ["page_key", "chapter"],
                                   "response": obj("match", "page", "original", "passages")},
    ("/api/matches/status", "post"): {"summary": "Set the status of one match, or of a list of them",
                                      "body": body("status", status="string", page="string", chapter="string",
                                                   matches="array"),
                                      "response": obj(changed="array")},
    ("/api/images", "get"): {"summary": "A page of image matches",
                             "query": [("work", "string", "a work's id"), ("site", "string", "a site's name"),
                                       ("status", "string", "scope: " + ", ".join(SCOPES)),
                                       ("sort", "string", "the order"), *PAGING],
                             "response": obj("paging", "status", "work", "site", "sort", matches="array")},
    ("/api/images/view", "get"): {"summary": "One image match, with the found and the registered image",
                                  "query": IMAGE, "required": ["image", "original"],
                                  "response": obj("match", "found", "registered")},
    ("/api/images/status", "post"): {"summary": "Set an image match's status",
                                      "body": body("image", "original", "status", image="string",
                                                   original="string", status="string"),
                                      "response": obj("image", "original", "status", "history")},
    ("/api/takedown", "get"): {"summary": "The takedown notice of the confirmed matches of a work and/or site",
                               "query": [("work", "string", "a work's id"), ("site", "string", "a site's name"),
                                         ("sender", "string", "who sends it (default: the organisation)"),
                                         ("contact", "string", "how to reply"),
                                         ("include_excerpts", "boolean", "name confirmed excerpts too (1)")],
                               "response": obj("text", "items", "more")},
    ("/api/evidence/public-key", "get"): {"summary": "The public key that signs the organisation's evidence packages "
                                                    "(PEM) and its fingerprint",
                                         "response": obj("org", "algorithm", "fingerprint", "public_key")},
    ("/api/takedown/sent", "post"): {"summary": "Move the matches a notice lists to takedown-sent",
                                     "body": body(work="string", site="string", include_excerpts="boolean"),
                                     "response": obj(changed="integer")},
    ("/api/evidence/package", "get"): {
        "summary": "The evidence package of a page (a zip: WARC, screenshot, report, takedown notice, manifest)",
        "query": [("page_key", "string", "the page's key (its URL as crawled)"),
                  ("sender", "string", "who sends the notice (default: the organisation)"),
                  ("contact", "string", "how to reply"),
                  ("include_excerpts", "boolean", "name confirmed excerpts in the notice too (1)")],
        "required": ["page_key"], "response": {"type": "string", "format": "binary"}, "types": ["application/zip"]},
    ("/api/search", "get"): {"summary": "Works, sites and pages by a word of them",
                             "query": [("q", "string", "what to look for"), *PAGING], "required": ["q"],
                             "response": obj("q", "works", "sites", "page", "pages", "paging")},
    ("/api/check", "post"): {"summary": "Which registered chapters a text copies, with the passages "
                                        "(reads only: a read token may use it)",
                             "body": body("text", text="string"), "reads": True,
                             "response": obj("chars", "units", "matches", "text_segments")},
    ("/api/check-url", "post"): {"summary": "Fetch a page and match it now (nothing is stored); admins and write "
                                            "tokens only, as the server fetches",
                                 "body": body("url", url="string"), "reads": True,
                                 "response": obj("url", "matches")},
    ("/api/followup", "get"): {"summary": "Takedowns sent, copies removed, matches still open, latest events",
                               "query": [("site", "string", "a site's name")],
                               "response": obj("site", "sites", "open", "events", "subscriptions")},
    ("/api/subscriptions", "get"): {"summary": "Who is told about which events (a webhook's URL as its scheme and "
                                               "host only), with the event kinds and channels",
                                    "response": obj(subscriptions="array", kinds="array", channels="array")},
    ("/api/subscriptions", "post"): {"summary": "Tell an e-mail address or a webhook about some kinds of event of a "
                                                "work and/or a site (neither: every event, for the default "
                                                "organisation only); the same channel, target, work and site "
                                                "again replaces it",
                                     "body": body("channel", "target", channel="string", target="string",
                                                  work="string", site="string", secret="string", kinds="array"),
                                     "status": "201", "response": obj("subscription", updated="boolean")},
    ("/api/subscriptions/{sub_id}", "delete"): {"summary": "Stop telling one subscription",
                                                "response": obj("removed")},
    ("/api/subscriptions/{sub_id}/test", "post"): {"summary": "Send a test event (kind \"test\", never stored) to "
                                                           "one subscription now, once",
                                                "response": obj("subscription", "detail", delivered="boolean")},
    ("/api/export/{name}.{fmt}", "get"): {"summary": "A report as CSV, JSON or JSON lines",
                                          "query": [*MATCH_FILTERS, *SCOPE,
                                                    ("q", "string", "pages whose URL holds this"),
                                                    ("page_status", "string", "one of: " + ", ".join(PAGE_STATUSES))],
                                          "response": ROWS, "types": ["text/csv", JSON, "application/x-ndjson"]},
    ("/api/discovery/runs", "get"): {"summary": "The recent discovery runs, with their totals and the sites they added",
                                     "query": [("work", "string", "a work's id or title"),
                                               ("limit", "integer", "runs at most (1 to 500, 50 by default)")],
                                     "response": obj("work", "work_title", "search", "now", runs="array")},
    ("/api/discovery/runs/{run_id}", "get"): {"summary": "One discovery run with every query and what it found",
                                              "response": obj("run", queries="array")},
    ("/api/works/{work_id}/discover", "post"): {"summary": "Start discovery for a work in the background (202; 409 "
                                                           "when no search API is configured), or with dry_run only "
                                                           "list its queries (200)",
                                                "body": {"required": False, "content": {JSON: {"schema": obj(
                                                    dry_run="boolean")}}},
                                                "status": "202", "response": obj("state", "work", "run")},
    ("/api/users", "get"): {"summary": "The users (an operator's: every organisation's, or ?org=); admins and "
                                       "operators only, not with an API token",
                            "query": [("org", "string", "one organisation's (operators)")],
                            "response": obj(users="array")},
    ("/api/users", "post"): {"summary": "Add a user; without a password one is generated and answered once (not "
                                        "with an API token)",
                             "body": body("name", "role", name="string", role="string", org="string",
                                          password="string"),
                             "status": "201", "response": obj("user", password="string")},
    ("/api/users/{name}", "get"): {"summary": "One user, with its open sessions (not with an API token)",
                                   "response": obj("user")},
    ("/api/users/{name}", "patch"): {"summary": "Change a user's role (not with an API token)",
                                     "body": body("role", role="string"), "response": obj("user")},
    ("/api/users/{name}/password", "post"): {"summary": "Reset a user's password: a new one, generated and "
                                                        "answered once; its sessions end (not with an API token)",
                                             "body": body(), "response": obj("user", password="string",
                                                                               sessions_ended="integer")},
    ("/api/users/{name}", "delete"): {"summary": "Remove a user and end its sessions (not with an API token)",
                                      "query": [("confirm", "string", "the user's name again")],
                                      "required": ["confirm"],
                                      "response": obj(removed="string", sessions_ended="integer")},
    ("/api/openapi.json", "get"): {"summary": "This description", "response": {"type": "object"}},
}

ERRORS = {"400": "the request is wrong; the message says what to fix",
          "401": "no credentials, or a token that is unknown or revoked",
          "403": "a read token (or a viewer) asked for a change",
          "404": "no such record in the organisation"}


def openapi_path(rule: str) -> str:
    """/api/works/<work_id> -> /api/works/{work_id} (converters such as <int:x> dropped)."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def _operation(path: str, method: str, spec: dict[str, Any]) -> dict[str, Any]:
    required = set(spec.get("required", []))
    params = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
              for n in re.findall(r"{([^}]+)}", path)]
    params += [{"name": n, "in": "query", "required": n in required, "description": d, "schema": {"type": t}}
               for n, t, d in spec.get("query", [])]
    writes = method != "get" and not spec.get("reads")
    op: dict[str, Any] = {
        "summary": spec["summary"],
        "operationId": f"{method}_{re.sub(r'[^a-z0-9]+', '_', path[5:]).strip('_') or 'root'}",
        "x-scope": "write" if writes else "read",
        "security": [{"token": ["write" if writes else "read"]}, {"basic": []}, {"session": []}],
        "responses": {spec.get("status", "200"): {
            "description": "OK",
            "content": {t: {"schema": spec["response"]} for t in spec.get("types", [JSON])}},
            **{code: {"description": why, "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}
               for code, why in ERRORS.items()}},
    }
    if params:
        op["parameters"] = params
    if "body" in spec:
        op["requestBody"] = spec["body"]
    if "form" in spec:
        props = {n: ({"type": "string", "format": "binary"} if t == "binary" else {"type": t})
                 for n, t in spec["form"].items()}
        op["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "properties": props, "required": spec.get("required", [])}}}}
    return op


def description() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for (path, method), spec in OPERATIONS.items():
        paths.setdefault(path, {})[method] = _operation(path, method, spec)
    return {
        "openapi": "3.1.0",
        "info": {"title": "fptrack API", "version": "1",
                 "description": "The admin's data as JSON. Send an API token as `Authorization: Bearer TOKEN` "
                                "(made on the Tokens page or with `fptrack token create`): a read token may "
                                "call the GET operations and those marked reads-only, a write token every one. "
                                "A token sees only its organisation: another's ids are 404."},
        "servers": [{"url": "/"}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "securitySchemes": {
                "token": {"type": "http", "scheme": "bearer",
                          "description": "An API token; its scope (read or write) is the scope named per operation."},
                "basic": {"type": "http", "scheme": "basic", "description": "A user's name and password."},
                "session": {"type": "apiKey", "in": "cookie", "name": current_app.config["SESSION_COOKIE_NAME"],
                            "description": "A signed-in browser; writes also send X-CSRFToken (from /api/me)."},
            },
            "schemas": {"Error": obj(error="string", message="string")},
        },
    }


@bp.route("/openapi.json")
def openapi() -> Any:
    return jsonify(description())
