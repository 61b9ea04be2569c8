"""Sites managed from the admin and the API: add one by URL, edit its rules, preview what the
extractor takes from a sample page with them, start, follow and pause its crawl, and check
one URL now. The same functions serve the HTML forms (web.reports.sites) and the JSON API
(web.api.manage); a bad value is a 400 whose message names it and the fix.

Fetching a sample page is done by the app's server, so only admins may ask for it, and it
keeps to the egress policy (tracker.egress) at every redirect: addresses of the server's own
networks (loopback, private, link-local: a cloud's metadata service) are refused unless
FPT_FETCH_ALLOW lists them; FPT_WEB_FETCH_PRIVATE=true allows every private one. A fetch takes
FETCH_DEADLINE seconds at most (FPT_WEB_FETCH_DEADLINE), so a slow site holds no server thread.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import abort, current_app
from werkzeug.exceptions import Conflict

from crawler import site_runs as site_crawls
from crawler.cli import save_site, stored_rules
from crawler.rules import RulesError, SiteRules, make_rules, rules_for_urls, site_name
from fingerprint.errors import InputError
from pagetext.encoding import decode
from pagetext.extraction.page import extract
from pagetext.extraction.selection import select
from pagetext.html import NOT_XML_CHARS, XML_DECLARATION, parse_html
from tracker.egress import EgressPolicy, FetchError
from tracker.egress import fetch as egress_fetch
from tracker.safe_names import clean_site_name
from tracker.sites.schedule import site_schedule
from tracker.store import NotFound, Site, now

from ..services import services

TEXT_KEYS = ("title", "content", "next_page", "chapter_links", "encoding")
LIST_KEYS = ("start_urls", "follow", "deny", "chapter_urls")
NUMBER_KEYS = {"delay": float, "concurrency": int, "depth": int, "max_pages": int, "hour": int, "every": int}
FLAG_KEYS = ("recrawl", "render", "images", "obey_robots")
SELECTOR_KEYS = ("title", "content", "next_page", "chapter_links")
PREVIEW_CHARS = 3000
MAX_HTML = 4 * 1024 * 1024
FETCH_DEADLINE = 5.0  # seconds a sample page's fetch takes at most, redirects included


def site_name_arg(raw: Any) -> str:
    try:
        return clean_site_name(raw)
    except InputError as e:
        abort(400, str(e))


# ---- rule values from a form or JSON ------------------------------------------------------

def values_from_form(form: Any) -> dict[str, Any]:
    """Rule values from the HTML form: lists one per line, numbers as text (empty: the default),
    check boxes for the flags (a hidden `flags` field says the form had them)."""
    values: dict[str, Any] = {}
    for key in TEXT_KEYS:
        if key in form:
            values[key] = form.get(key, "")
    for key in LIST_KEYS:
        if key in form:
            values[key] = [line.strip() for line in form.get(key, "").splitlines() if line.strip()]
    for key, kind in NUMBER_KEYS.items():
        raw = form.get(key, "").strip()
        if raw:
            try:
                values[key] = kind(raw)
            except ValueError:
                values[key] = raw  # as typed: the rules' check names it, and the form shows it again
        elif key in form:
            values[key] = None
    if "flags" in form:
        for key in FLAG_KEYS:
            values[key] = form.get(key) in ("on", "true", "1", "yes")
    return values


def rules_with(name: str, values: dict[str, Any], base: Site | None = None) -> SiteRules:
    """The site's stored rules (if any) with `values` on top, checked; a 400 that names a bad one.
    A value of None or "" puts the default back."""
    merged: dict[str, Any] = {}
    if base is not None:
        merged.update(base.rules, start_urls=list(base.start_urls), recrawl=base.recrawl, hour=base.hour,
                      every=base.every)
    for key, value in values.items():
        if value is None or value == "" or value == []:
            merged.pop(key, None)
        else:
            merged[key] = value
    merged.pop("name", None)
    merged["name"] = name
    try:
        rules = make_rules(merged, where=f"site {name!r}")
    except RulesError as e:
        abort(400, str(e))
    if not rules.start_urls:
        abort(400, f"site {name!r} needs at least one start URL (the page its crawl begins at)")
    return rules


def site_data(site: Site) -> dict[str, Any]:
    s = services()
    return {"site": site.name, "start_urls": list(site.start_urls), "rules": dict(site.rules),
            "recrawl": site.recrawl, "created_at": site.created_at, "updated_at": site.updated_at,
            "schedule": site_schedule(s.store, site, s.settings.recrawl_hour, now())}


def _http_url(url: Any, missing: str, example: str) -> str:
    """`url` trimmed, when it is a full http(s) URL; a 400 saying `missing` when there is none, and
    showing `example` when it is not one."""
    if not isinstance(url, str) or not url.strip():
        abort(400, missing)
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        abort(400, f"{url!r} is not an http(s) URL; write it in full, e.g. {example}")
    return url


def add_site(url: Any, name: Any = None, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """A new site from one of its URLs; its name is the URL's host unless given. 409 when the name is taken."""
    url = _http_url(url, "give the site's URL: the page its crawl begins at, e.g. https://www.example.com/book/1/",
                   "https://www.example.com/book/1/")
    name = site_name_arg(name) if isinstance(name, str) and name.strip() else site_name_arg(site_name(url))
    store = services().store
    try:
        store.get_site(name)
    except NotFound:
        pass
    else:
        raise Conflict(f"a site named {name!r} exists already; edit its rules, or give another name")
    rules = rules_with(name, {**(values or {}), "start_urls": [url, *(values or {}).get("start_urls", [])]})
    return site_data(save_site(store, rules))


def update_site(name: str, values: dict[str, Any]) -> dict[str, Any]:
    store = services().store
    rules = rules_with(name, values, store.get_site(name))
    return site_data(save_site(store, rules))


def json_values(body: dict[str, Any]) -> dict[str, Any]:
    """Rule values from a JSON body: its "rules" object, or the body's own rule keys; and its
    "schedule" object ({"hour", "every", "paused"}, each optional), as the site's data shows it."""
    rules = body.get("rules", {k: v for k, v in body.items() if k not in ("url", "name", "html", "rules", "schedule")})
    if not isinstance(rules, dict):
        abort(400, '"rules" must be an object of rule values (content, title, follow, ...)')
    return {**rules, **schedule_values(body.get("schedule", {}))}


def schedule_values(schedule: Any) -> dict[str, Any]:
    """{"hour": 4, "every": 2, "paused": true} as rule values (paused is the recrawl flag turned over)."""
    if not isinstance(schedule, dict) or set(schedule) - {"hour", "every", "paused"}:
        abort(400, '"schedule" must be an object with any of: "hour" (0-23, UTC; null: the deployment\'s), '
                   '"every" (days, 1-30), "paused" (true or false)')
    values = {k: v for k, v in schedule.items() if k != "paused"}
    if "paused" in schedule:
        if not isinstance(schedule["paused"], bool):
            abort(400, f'"paused" must be true or false, got {schedule["paused"]!r}')
        values["recrawl"] = not schedule["paused"]
    return values


# ---- fetching a sample page and previewing ---------------------------------------------------

def fetch(url: Any) -> tuple[str, str]:
    """(html, final URL) of one page, decoded in any common encoding; a 400 saying why not.
    Only an admin (or a write token) makes the server fetch; every hop of the fetch is checked by
    the egress policy, and the whole of it takes FETCH_DEADLINE seconds at most."""
    from flask_login import current_user

    from tracker.followup.recheck import USER_AGENT

    if not getattr(current_user, "is_admin", False):
        abort(403, "viewers cannot make the server fetch a page; paste the page's text into the check "
                   "instead, or ask an admin")
    url = _http_url(url, "give the URL of a sample page (a chapter of the site)",
                   "https://www.example.com/book/1/1.html")
    policy = EgressPolicy.load(services().settings, allow_private=True if current_app.config.get("FETCH_PRIVATE")
                               else None)
    deadline = float(current_app.config.get("FETCH_DEADLINE", FETCH_DEADLINE))
    try:
        got = egress_fetch(url, policy=policy, headers={"User-Agent": USER_AGENT, "Accept": "text/html,*/*"},
                           deadline=deadline, max_bytes=MAX_HTML)
    except FetchError as e:
        if e.reason.startswith("refused"):
            abort(400, f"{e}; or paste the page's HTML instead")
        if e.reason == "timed out":
            abort(400, f"could not fetch {url}: timed out after {deadline:g} s; paste the page's HTML instead")
        abort(400, f"could not fetch {url}: {e.reason}; check the URL, or paste the page's HTML")
    if got.status >= 400:
        abort(400, f"could not fetch {url}: HTTP {got.status}; check the URL, or paste the page's HTML")
    if not 200 <= got.status < 300:
        abort(400, f"could not fetch {url}: HTTP {got.status} (too many redirects?); paste the page's HTML")
    try:
        html = decode(got.body, declared=got.charset).text
    except InputError as e:
        abort(400, f"{url} is not a web page ({e}); give the URL of a chapter page")
    return html, got.url or url


def preview(rules: SiteRules, url: Any = None, html: Any = None) -> dict[str, Any]:
    """What the extractor takes from a sample page with these rules, and a message for each rule
    that selects nothing there. The page is fetched from `url` unless its `html` is given."""
    if isinstance(html, str) and html.strip():
        if len(html) > MAX_HTML:
            abort(400, f"the pasted HTML has {len(html):,} characters; paste at most {MAX_HTML:,}")
        page_url = url.strip() if isinstance(url, str) and url.strip() else (rules.start_urls or ("",))[0]
    else:
        html, page_url = fetch(url)
    if rules.encoding and isinstance(html, bytes):  # pragma: no cover - html is text here
        html = html.decode(rules.encoding, "replace")
    got = extract(html, page_url, rules.selectors)
    problems = []
    cleaned = NOT_XML_CHARS.sub("", XML_DECLARATION.sub("", html, count=1))
    tree = parse_html(cleaned) if cleaned.strip() else None
    for key in SELECTOR_KEYS:
        sel = getattr(rules, key)
        if sel and (tree is None or not select(tree, sel)):
            problems.append(f"the {key.replace('_', ' ')} rule {sel!r} selects nothing on this page; check the "
                            "page's HTML for the element's id or class (CSS like '#content', or XPath)")
    if not got.text.strip():
        problems.append("no text was found on this page; is it a chapter page? Give a content rule that selects "
                        "the chapter's text")
    return {"url": page_url, "title": got.title, "kind": got.kind, "extractor": got.extractor,
            "chars": len(got.text), "text": got.text[:PREVIEW_CHARS], "cut": len(got.text) > PREVIEW_CHARS,
            "next_part": got.next_part, "links": len(got.links), "chapter_links": got.chapter_links[:20],
            "chapters": [h for h, _ in got.chapters][:50], "problems": problems,
            "rules": rules.to_dict()}


def check_url(url: Any) -> dict[str, Any]:
    """Fetch one page, extract its text with its site's rules (if the site is configured), and
    match it against the registered chapters as a crawled page would be (nothing is stored)."""
    from ..search import check_data

    html, final = fetch(url)
    known = []
    for s in services().store.sites():
        try:
            known.append(stored_rules(s))
        except RulesError:
            continue
    rules = rules_for_urls([final], known)[0]
    got = extract(html, final, rules.selectors)
    if not got.text.strip():
        abort(400, f"no text was found on {final}; give the URL of a chapter page")
    limit = current_app.config["CHECK_MAX_CHARS"]
    result = check_data(got.text[:limit])
    return {"url": final, "site": rules.name, "title": got.title, "kind": got.kind, "chars": len(got.text),
            **{k: v for k, v in result.items() if k != "text_segments"}}


# ---- crawls ------------------------------------------------------------------------------

def crawl_state(name: str) -> dict[str, Any]:
    store = services().store
    store.get_site(name)  # NotFound: a 404
    state = site_crawls.read_state(services().settings, name)
    runs = store.crawl_runs(site=name, limit=5)
    from ..reports.queries import run_row

    return {**state, "running": site_crawls.running(state), "runs": [run_row(r) for r in runs]}


def start_crawl(name: str, max_pages: Any = None) -> dict[str, Any]:
    services().store.get_site(name)
    if max_pages is not None and (not isinstance(max_pages, int) or isinstance(max_pages, bool) or max_pages < 1):
        abort(400, "max_pages must be a whole number, 1 or more")
    site_crawls.start(services().settings, name, max_pages=max_pages)
    return crawl_state(name)


def pause_crawl(name: str) -> dict[str, Any]:
    services().store.get_site(name)
    site_crawls.pause(services().settings, name)
    return crawl_state(name)
