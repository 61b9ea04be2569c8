"""Notifications: events recorded in the store where they happen (a new match, a copy back
after its removal, a takedown that worked, a crawl that failed), routed to the subscriptions
that want them, and sent: one e-mail digest per address with everything since its last
digest (tracker.followup.digest), one signed POST per event and webhook (tracker.followup.webhooks).

Nothing is lost when a channel fails: a delivery stays pending, with the failed attempt
in its log, and goes out with the next `fptrack notify send` or daily run.

Events are kept FPT_EVENTS_DAYS days once their deliveries are sent, then the daily run
(or `fptrack notify purge`) removes them with their deliveries (`expire_events`).

    store, event ──record──▶ events (once per id) ──route──▶ deliveries (pending)
                                                                 │ send_pending
                                         e-mail digest per address, POST per webhook
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from clikit.plural import counted

from ..egress import EgressPolicy, Refused
from ..safe_names import clean_site_name
from ..settings import Settings
from ..store import CrawlRun, ImageMatch, MatchRecord, NotFound, Store, now
from ..store.followup import CHANNELS, EVENT_KINDS, Delivery, Event, Subscription, subscription_id

log = logging.getLogger(__name__)

#: Crawl outcomes that are no failure: the crawl ended, was paused, or reached a limit it was given.
NORMAL_OUTCOMES = frozenset({"finished", "shutdown", "closespider_pagecount", "closespider_itemcount",
                             "closespider_timeout", "closespider_errorcount"})
#: Crawl runs looked at for failures, back from now (older runs were told about, or are history).
CRAWL_LOOKBACK = timedelta(days=7)
EMAIL = re.compile(r"[^@\s<>,;\"']+@[^@\s<>,;\"']+\.[^@\s<>,;\"'.]+")
BY = "fptrack"


class NotifyError(ValueError):
    """A subscription that cannot be used; the message names it and the fix."""


# ---- subscriptions ------------------------------------------------------------------

def check_email(address: str) -> str:
    address = address.strip()
    if not EMAIL.fullmatch(address) or len(address) > 254:
        raise NotifyError(f"{address!r} is not an e-mail address; give one like rights@example.com")
    return address


def check_webhook_url(url: str, policy: EgressPolicy | None = None) -> str:
    url = url.strip()
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        host = None
    if parts.scheme not in ("http", "https") or not host or any(c.isspace() for c in url) or len(url) > 2000:
        raise NotifyError(f"{url!r} is not a webhook URL; give one like https://hooks.example.com/fptrack")
    try:  # an address written in the URL is checked now; a name, when it is resolved at each send
        (policy or EgressPolicy.load()).check_literal(host, url=f"{parts.scheme}://{parts.netloc}/")
    except Refused as e:
        raise NotifyError(f"{e} (a webhook receiver must be reachable on a public address)") from None
    return url


def subscribe(store: Store, channel: str, target: str, *, work: str = "", site: str = "", secret: str = "",
              kinds: Iterable[str] = EVENT_KINDS) -> Subscription:
    """Add (or update) a subscription, checked: an e-mail address or an http(s) URL with a secret,
    a work that is registered, known event kinds."""
    if channel not in CHANNELS:
        raise NotifyError(f"unknown channel {channel!r}; use one of: {', '.join(CHANNELS)}")
    kinds = list(dict.fromkeys(kinds))
    for kind in kinds:
        if kind not in EVENT_KINDS:
            raise NotifyError(f"unknown event kind {kind!r}; use some of: {', '.join(EVENT_KINDS)}")
    if not kinds:
        raise NotifyError(f"name at least one event kind: {', '.join(EVENT_KINDS)}")
    if channel == "email":
        target = check_email(target)
        if secret:
            raise NotifyError("a secret signs webhooks only; leave it out for an e-mail address")
    else:
        target = check_webhook_url(target)
        if not secret:
            raise NotifyError("a webhook needs a secret (--secret) to sign its events with; the receiver "
                              "checks the X-Fptrack-Signature header with it")
    site = clean_site_name(site) if site else ""
    if work:
        try:
            store.get_work(work)
        except NotFound:
            known = ", ".join(w.id for w in store.works()[:10])
            raise NotifyError(f"no work {work!r}; registered works: {known or 'none (fptrack add-work)'}") from None
    sub = Subscription(id=subscription_id(channel, target, work, site), channel=channel, target=target,
                       work=work, site=site, secret=secret, kinds=kinds)
    return store.upsert_subscription(sub)


def unsubscribe(store: Store, key: str) -> list[Subscription]:
    """Remove the subscription with this id, or every subscription of this e-mail address or URL;
    returns those removed. Raises NotFound when none matches."""
    gone = [s for s in store.subscriptions() if key in (s.id, s.target)
            or (s.channel == "email" and s.target.lower() == key.strip().lower())]
    if not gone:
        raise NotFound(f"no subscription {key!r}; `fptrack notify list` shows them")
    for s in gone:
        store.delete_subscription(s.id)
    return gone


# ---- events -------------------------------------------------------------------------

def _event_id(kind: str, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{kind}:{digest}"


def _match_data(m: MatchRecord, url: str) -> dict:
    return {"url": url or m.page, "containment": round(float(m.containment), 4),
            "similarity": round(float(m.similarity), 4), "verdict": m.verdict, "status": m.status}


def new_match_event(m: MatchRecord, url: str = "") -> Event:
    return Event(id=_event_id("new-match", m.page, m.chapter), kind="new-match", at=m.first_seen, work=m.work,
                 site=m.site, page=m.page, chapter=m.chapter, data=_match_data(m, url),
                 summary=f"new copy of {m.chapter} on {m.site or 'a page'} ({m.containment:.0%} of the chapter): "
                         f"{url or m.page}")


def new_image_match_event(m: ImageMatch) -> Event:
    """A page image found copying a registered image: a new match, as a copied chapter is."""
    return Event(id=_event_id("new-match", "image", m.image, m.work_image), kind="new-match", at=m.first_seen,
                 work=m.work, site=m.site, page=m.found_on, chapter=m.work_image,
                 data={"url": m.found_on, "image": m.image, "work_image": m.work_image, "distance": m.distance,
                       "colour_agreement": round(float(m.colour_agreement), 4), "status": m.status},
                 summary=f"new copy of the image {m.work_image} on {m.site or 'a page'} ({m.distance} bits of 64 "
                         f"apart): {m.found_on or m.image}")


def copy_back_event(m: MatchRecord, url: str, removed_at: str, at: datetime | None = None) -> Event:
    return Event(id=_event_id("copy-back", m.page, m.chapter, removed_at), kind="copy-back", at=at or now(),
                 work=m.work, site=m.site, page=m.page, chapter=m.chapter,
                 data={**_match_data(m, url), "removed_at": removed_at},
                 summary=f"copy back after its removal ({removed_at[:10] or 'date unknown'}): {m.chapter} on "
                         f"{m.site or 'a page'}: {url or m.page}")


def removed_event(m: MatchRecord, url: str, sent_at: str, at: datetime | None = None) -> Event:
    at = at or now()
    days = days_between(sent_at, at)
    return Event(id=_event_id("removed", m.page, m.chapter, sent_at), kind="removed", at=at, work=m.work,
                 site=m.site, page=m.page, chapter=m.chapter,
                 data={**_match_data(m, url), "takedown_sent_at": sent_at, "days": days},
                 summary=f"removed{f' {days} days after the takedown' if days is not None else ''}: {m.chapter} on "
                         f"{m.site or 'a page'}: {url or m.page}")


def crawl_failed_event(run: CrawlRun) -> Event | None:
    """An event for a crawl that failed (pages failed, nothing fetched, or an abnormal end); None otherwise."""
    failed = sum(run.failed.values()) or run.counts.get("failed", 0)
    fetched = run.counts.get("fetched", 0)
    if not failed and fetched and run.outcome in NORMAL_OUTCOMES:
        return None
    why = []
    if run.outcome not in NORMAL_OUTCOMES:
        why.append(f"ended with {run.outcome}")
    if not fetched:
        why.append("fetched nothing")
    if failed:
        reasons = ", ".join(f"{r} ({n})" for r, n in sorted(run.failed.items(), key=lambda kv: -kv[1])[:3])
        why.append(f"{counted(failed, 'page')} failed" + (f": {reasons}" if reasons else ""))
    return Event(id=_event_id("crawl-failed", run.site, run.job, str(run.id), run.started_at.isoformat()),
                 kind="crawl-failed", at=run.finished_at, site=run.site,
                 data={"run": run.id, "job": run.job, "outcome": run.outcome, "counts": dict(run.counts),
                       "failed": dict(run.failed)},
                 summary=f"crawl of {run.site or 'a site'} failed: {'; '.join(why)}")


def days_between(start_iso: str, end: datetime) -> int | None:
    try:
        start = datetime.fromisoformat(start_iso)
    except (TypeError, ValueError):
        return None
    return max(0, (end - start).days)


def record(store: Store, event: Event, subscriptions: list[Subscription] | None = None) -> bool:
    """Record an event once and route it; whether it is new."""
    _, new = store.add_event(event)
    if new:
        route(store, event, subscriptions)
    return new


def route(store: Store, event: Event, subscriptions: list[Subscription] | None = None) -> int:
    """Make a pending delivery for each subscription that wants the event; how many."""
    n = 0
    for sub in store.subscriptions() if subscriptions is None else subscriptions:
        if sub.wants(event):
            store.add_delivery(Delivery(event=event.id, subscription=sub.id))
            n += 1
    store.set_event_routed(event.id)
    return n


def route_pending(store: Store) -> int:
    """Route the events whose routing was cut short (a process stopped between the two writes)."""
    events = store.events(routed=False, limit=None)
    subs = store.subscriptions() if events else []
    for e in events:
        route(store, e, subs)
    return len(events)


def collect_crawl_failures(store: Store, *, since: datetime | None = None) -> int:
    """Record an event for each crawl run that failed since `since` (a week back by default);
    returns how many were new. Runs are recorded by the crawler; this reads them."""
    since = since or now() - CRAWL_LOOKBACK
    n = 0
    for run in store.crawl_runs(limit=1000):
        if run.finished_at < since:
            break
        e = crawl_failed_event(run)
        if e is not None and record(store, e):
            n += 1
    return n


# ---- the hook after matches are stored ------------------------------------------------

def history_time(m: MatchRecord, status: str) -> str:
    """When the match last moved to `status` (ISO text), "" when it never did."""
    for entry in reversed(m.history):
        if entry.get("status") == status:
            at = entry.get("at", "")
            return at.isoformat() if isinstance(at, datetime) else str(at)
    return ""


def reopen(store: Store, m: MatchRecord, url: str = "", by: str = f"{BY} (copy back)") -> MatchRecord:
    """A copy found again on a page whose copy was marked removed: the match goes back to
    confirmed (its history says why), and a copy-back event is recorded."""
    removed_at = history_time(m, "removed")
    reopened = store.set_match_status(m.page, m.chapter, "confirmed", by=by)
    record(store, copy_back_event(reopened, url, removed_at))
    return reopened


def matches_stored(store: Store, pairs: Iterable[tuple[MatchRecord, MatchRecord]], url: str = "") -> list[MatchRecord]:
    """After the tracker stored matches ((proposed, stored) each): a new match becomes an event;
    one whose copy was marked removed reopens. Returns the matches as they are now."""
    out = []
    subs = None
    for proposed, stored in pairs:
        if stored.status == "removed":
            stored = reopen(store, stored, url)
        elif stored.first_seen == proposed.first_seen and not stored.history:
            subs = store.subscriptions() if subs is None else subs
            record(store, new_match_event(stored, url), subs)
        out.append(stored)
    return out


def image_matches_stored(store: Store, pairs: Iterable[tuple[ImageMatch, ImageMatch]]) -> list[ImageMatch]:
    """After image matches are stored ((proposed, stored) each): a new one becomes an event."""
    out = []
    subs = None
    for proposed, stored in pairs:
        if stored.first_seen == proposed.first_seen and not stored.history:
            subs = store.subscriptions() if subs is None else subs
            record(store, new_image_match_event(stored), subs)
        out.append(stored)
    return out


# ---- sending --------------------------------------------------------------------------

@dataclass
class SendReport:
    digests: int = 0  # e-mails sent
    webhooks: int = 0  # events POSTed
    events: int = 0  # deliveries marked sent
    waiting: int = 0  # deliveries still pending
    problems: list[str] = field(default_factory=list)  # one line each


def send_pending(store: Store, settings: Settings, *, clock: Callable[[], datetime] = now,
                 backoff: float = 1.0, attempts: int = 4, timeout: float = 10.0,
                 sleep: Callable[[float], None] | None = None) -> SendReport:
    """Record the failed crawls, route what is unrouted, then send every pending delivery:
    one digest per e-mail address, one signed POST per webhook and event (retried with
    back-off). A failure leaves the delivery pending, with the attempt in its log."""
    from . import digest, webhooks

    report = SendReport()
    collect_crawl_failures(store)
    route_pending(store)
    subs = {s.id: s for s in store.subscriptions()}
    pending = [d for d in store.deliveries(status="pending") if d.subscription in subs]
    events: dict[str, Event] = {}
    for d in pending:
        if d.event not in events:
            try:
                events[d.event] = store.get_event(d.event)
            except NotFound:
                continue
    pending = [d for d in pending if d.event in events]

    by_address: dict[str, list[Delivery]] = {}
    for d in pending:
        sub = subs[d.subscription]
        if sub.channel == "email":
            by_address.setdefault(sub.target.lower(), []).append(d)
    if by_address and not settings.smtp_url:
        n = sum(len(ds) for ds in by_address.values())
        report.problems.append(f"FPT_SMTP_URL is not set: {counted(n, 'event')} {'waits' if n == 1 else 'wait'} for "
                               f"{counted(len(by_address), 'e-mail digest')}; "
                               "set it (smtp://HOST:PORT) and run `fptrack notify send`")
        report.waiting += n
    elif by_address:
        for address, ds in sorted(by_address.items()):
            items = sorted({d.event: events[d.event] for d in ds}.values(), key=lambda e: (e.at, e.id))
            try:
                detail = digest.send_digest(settings, subs[ds[0].subscription].target, items, timeout=timeout)
                ok = True
                report.digests += 1
            except digest.DigestError as e:
                detail, ok = str(e), False
                report.problems.append(f"digest to {address} not sent: {e}")
            at = clock()
            for d in ds:
                store.record_delivery(d.event, d.subscription, ok, detail, at=at)
            report.events += len(ds) if ok else 0
            report.waiting += 0 if ok else len(ds)

    dead: set[str] = set()  # webhooks that failed this run: their other events wait for the next
    policy = EgressPolicy.load(settings)
    for d in pending:
        sub = subs[d.subscription]
        if sub.channel != "webhook":
            continue
        if sub.id in dead:
            report.waiting += 1
            continue
        body = webhooks.payload(events[d.event])

        def attempt(ok: bool, detail: str, d: Delivery = d) -> None:
            store.record_delivery(d.event, d.subscription, ok, detail, at=clock())

        ok, detail = webhooks.deliver(sub.target, sub.secret, body, event=events[d.event], attempts=attempts,
                                      backoff=backoff, timeout=timeout, on_attempt=attempt, policy=policy,
                                      **({"sleep": sleep} if sleep else {}))
        if ok:
            report.webhooks += 1
            report.events += 1
        else:
            dead.add(sub.id)
            report.waiting += 1
            report.problems.append(f"webhook {sub.target} did not take {d.event}: {detail}")
    return report


# ---- a test ---------------------------------------------------------------------------

#: The kind of a test event: sent to one subscription on request, never stored or routed.
TEST_KIND = "test"


def test_event(sub: Subscription, at: datetime | None = None) -> Event:
    """What a test sends: an event of kind "test" about the subscription's work and site."""
    at = at or now()
    return Event(id=_event_id(TEST_KIND, sub.id, at.isoformat()), kind=TEST_KIND, at=at, work=sub.work,
                 site=sub.site, summary="A test from fptrack: this subscription is set up and reachable.",
                 data={"subscription": sub.id, "test": True})


def send_test(settings: Settings, sub: Subscription, *, timeout: float = 10.0) -> tuple[bool, str]:
    """Send a test event to one subscription now, once (no retry), without storing anything:
    (delivered, what the mail server or the receiver answered, or why nothing was sent)."""
    from . import digest, webhooks

    event = test_event(sub)
    if sub.channel == "email":
        if not settings.smtp_url:
            return False, "FPT_SMTP_URL is not set: set it (smtp://HOST:PORT) so that e-mail can be sent"
        try:
            return True, digest.send_digest(settings, sub.target, [event], timeout=timeout)
        except digest.DigestError as e:
            return False, str(e)
    return webhooks.deliver(sub.target, sub.secret, webhooks.payload(event), event=event, attempts=1,
                            timeout=timeout, policy=EgressPolicy.load(settings))


# ---- retention ------------------------------------------------------------------------

@dataclass
class Purged:
    events: int = 0  # events removed (or, in a dry run, that would be)
    deliveries: int = 0  # their deliveries


def expire_events(store: Store, days: int, *, at: datetime | None = None, batch: int = 500,
                  dry_run: bool = False) -> Purged:
    """Remove the events older than `days` days whose deliveries are all sent, with those
    deliveries (days = 0: keep every event). An event still unrouted, or with a delivery
    pending, stays whatever its age: it has someone left to tell. Safe to run at any time."""
    if days < 0:
        raise ValueError(f"days must be 0 (keep every event) or more, not {days}")
    if days == 0:
        return Purged()
    events, deliveries = store.purge_events((at or now()) - timedelta(days=days), batch=batch, dry_run=dry_run)
    return Purged(events, deliveries)
