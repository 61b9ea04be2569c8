"""Who is told, managed in the admin and the API: an admin adds an e-mail address or a webhook
for some kinds of event of a work and/or a site of the organisation, or removes one; a viewer
reads the list. Checking and storing are tracker.followup.notify's (subscribe); the organisation's
view of the store (web.tenancy.scope) keeps another organisation's subscriptions out of sight.

A webhook's URL often is a secret itself (chat services put the key in the path): once
added, it is shown as its scheme and host only, in the list, the messages and the JSON.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, abort, jsonify

from tracker.followup.notify import NotifyError, send_test, subscribe
from tracker.store import NotFound
from tracker.store.followup import CHANNELS, EVENT_KINDS, Subscription

from ..params import MAX_TEXT, json_body
from ..services import services, store

bp = Blueprint("subscriptions", __name__, url_prefix="/api")

TEST_TIMEOUT = 5.0  # seconds a test waits in all for the mail server or the receiver (one try)
WEBHOOK_SCHEMES = "https:// (recommended) or http://"  # the schemes a webhook may use, as the form says
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,19}")  # a scheme short enough to name back: never part of a key
KIND_NAMES = {"new-match": "new copy found", "copy-back": "copy back after its removal",
              "removed": "copy removed after a takedown", "crawl-failed": "crawl failed"}


def shown_target(sub: Subscription) -> str:
    """An e-mail address as it is; a webhook as its scheme and host."""
    if sub.channel != "webhook":
        return sub.target
    parts = urlsplit(sub.target)
    return f"{parts.scheme}://{parts.hostname or ''}/…"


def describe(sub: Subscription) -> str:
    """One line for people: "e-mail to rights@example.com for work 山城旧事 (new-match, removed)"."""
    scope = " on ".join(p for p in (f"work {sub.work}" if sub.work else "", f"site {sub.site}" if sub.site else "")
                        if p) or "every work and site"
    by = "e-mail to" if sub.channel == "email" else "webhook"
    return f"{by} {shown_target(sub)} for {scope} ({', '.join(sub.kinds)})"


def rows() -> list[dict[str, Any]]:
    """Who is told, and how many events wait for each."""
    pending: dict[str, int] = {}
    for d in store().deliveries(status="pending"):
        pending[d.subscription] = pending.get(d.subscription, 0) + 1
    return [{"id": s.id, "channel": s.channel, "target": shown_target(s), "work": s.work, "site": s.site,
             "kinds": s.kinds, "pending": pending.get(s.id, 0), "since": s.created_at}
            for s in store().subscriptions()]


def known_sites() -> list[str]:
    """The sites a subscription may name: those the organisation tracks and those its works were found on."""
    found = {r["site"] for r in store().match_totals(["site"]) if r["site"]}
    return sorted(found | {s.name for s in store().sites()})


def choices() -> dict[str, Any]:
    """What the form offers: the organisation's works and sites, the channels and the kinds."""
    return {"works": [{"id": w.id, "title": w.title} for w in store().works()], "known_sites": known_sites(),
            "channels": CHANNELS, "kinds": [(k, KIND_NAMES.get(k, k)) for k in EVENT_KINDS]}


def _text(values: Mapping[str, Any], name: str) -> str:
    raw = values.get(name) or ""
    if not isinstance(raw, str):
        raise NotifyError(f'"{name}" must be text')
    if len(raw) > 2000 or (name != "target" and len(raw) > MAX_TEXT):
        raise NotifyError(f'"{name}" is too long')
    return raw.strip()


def check_scheme(url: str) -> None:
    """Refuse a webhook URL that is not http(s) with the schemes to use, naming the one given only
    when it is a plain short word (the rest of the URL may hold the hook's key)."""
    scheme, sep, _ = url.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        return
    given = f", not {scheme}://" if sep and SCHEME.fullmatch(scheme) else ""
    raise NotifyError(f"the URL given is not a webhook URL: it must start with {WEBHOOK_SCHEMES}{given}; "
                      "give one like https://hooks.example.com/fptrack")


def add(values: Mapping[str, Any], kinds: Any = None) -> tuple[Subscription, bool]:
    """Add a subscription from a form or a JSON object (channel, target, work, site, secret;
    `kinds` a list, all when None); returns it and whether it replaced one of the same channel,
    target, work and site. NotifyError says what to fix, without repeating a webhook's URL."""
    channel, target = _text(values, "channel"), _text(values, "target")
    work, site, secret = _text(values, "work"), _text(values, "site"), _text(values, "secret")
    if channel not in CHANNELS:
        raise NotifyError(f"choose how to tell: channel must be one of {', '.join(CHANNELS)}")
    if not target:
        raise NotifyError("give the e-mail address to write to" if channel == "email"
                          else f"give the webhook's URL, starting {WEBHOOK_SCHEMES}, to POST the events to")
    if channel == "webhook":
        check_scheme(target)
    if kinds is None:
        kinds = list(EVENT_KINDS)
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise NotifyError(f'"kinds" must be a list of event kinds: {", ".join(EVENT_KINDS)}')
    if channel == "webhook" and not secret:
        raise NotifyError("a webhook needs a secret to sign its events with (the receiver checks the "
                          "X-Fptrack-Signature header with it): fill in the secret")
    site = " ".join(site.split())
    sites = known_sites() if site else []
    if site and site not in sites:
        known = ", ".join(sites[:10]) or "none yet (add one on the Sites page)"
        raise NotifyError(f"no site {site!r} in this organisation; choose one of its sites: {known}")
    before = {s.id for s in store().subscriptions()}
    try:
        sub = subscribe(store(), channel, target, work=work, site=site, secret=secret, kinds=kinds)
    except NotifyError as e:
        if channel == "webhook":  # check_webhook_url names the URL it refused: it may hold the hook's key
            raise NotifyError(str(e).replace(repr(target), "the URL given")) from None
        raise
    except NotFound:  # the organisation's view refuses a site it does not track, named alone
        raise NotifyError(f"the site {site!r} is not one the organisation tracks: choose a work as well, "
                          "or a site of its Sites page") from None
    except ValueError as e:  # a subscription to every event, outside the default organisation
        raise NotifyError(str(e)) from None
    return sub, sub.id in before


def remove(sub_id: str) -> Subscription:
    """Remove one subscription of the organisation; NotFound (404) for any other id."""
    sub = store().get_subscription(sub_id)
    store().delete_subscription(sub.id)
    return sub


def test(sub_id: str) -> tuple[Subscription, bool, str]:
    """Send a test event to one subscription of the organisation now; NotFound (404) for any
    other id. (subscription, delivered, the answer) - a webhook's answer never holds its URL."""
    sub = store().get_subscription(sub_id)
    ok, detail = send_test(services().settings, sub, timeout=TEST_TIMEOUT)
    return sub, ok, detail.replace(sub.target, shown_target(sub)) if sub.channel == "webhook" else detail


def row(sub: Subscription) -> dict[str, Any]:
    return {"id": sub.id, "channel": sub.channel, "target": shown_target(sub), "work": sub.work, "site": sub.site,
            "kinds": sub.kinds, "since": sub.created_at}


# ---- the JSON API ----------------------------------------------------------------------------


@bp.route("/subscriptions")
def api_list() -> Any:
    return jsonify(subscriptions=rows(), kinds=list(EVENT_KINDS), channels=list(CHANNELS))


@bp.route("/subscriptions", methods=["POST"])
def api_add() -> Any:
    """{"channel": "email" or "webhook", "target": an address or a URL, "work", "site", "secret"
    (a webhook's signing key), "kinds": [...] (all by default)}. The same channel, target, work and
    site again replaces the one there ("updated": true)."""
    body = json_body()
    try:
        sub, updated = add(body, body.get("kinds"))
    except NotifyError as e:
        abort(400, str(e))
    return jsonify(subscription=row(sub), updated=updated), 201


@bp.route("/subscriptions/<sub_id>/test", methods=["POST"])
def api_test(sub_id: str) -> Any:
    """Send a test event (kind "test", never stored) to one subscription now:
    {"delivered": true|false, "detail": what the server or receiver answered}."""
    try:
        sub, ok, detail = test(sub_id)
    except NotFound:
        abort(404, f"no subscription {sub_id!r}; GET /api/subscriptions lists them")
    return jsonify(subscription=row(sub), delivered=ok, detail=detail)


@bp.route("/subscriptions/<sub_id>", methods=["DELETE"])
def api_remove(sub_id: str) -> Any:
    try:
        sub = remove(sub_id)
    except NotFound:
        abort(404, f"no subscription {sub_id!r}; GET /api/subscriptions lists them")
    return jsonify(removed=row(sub))
