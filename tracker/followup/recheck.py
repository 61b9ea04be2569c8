"""Follow-up of takedowns: re-fetch every page whose takedown was sent, and tell whether the
copy is gone, still up, or back.

    matches in takedown-sent (and removed lately) ─▶ fetch the page (robots.txt, delay,
    timeout, size limit) ─▶ 404/410/451: gone │ 200: decode, extract, match against the
    originals as the tracker does ─▶ the chapter still found: up, else gone

Gone marks the match `removed` (its history holds the date; the page and its evidence stay);
up keeps it open, counted in days since the notice; a removed copy found again reopens the
match (tracker.followup.notify.reopen). A server that does not answer as it should changes nothing:
the page is tried again on the next run. `stats` gives, per site, the takedowns sent, the
copies removed, the median days to removal and the pages still up.
"""
from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

from clikit.plural import counted
from fingerprint.errors import FingerprintError
from fingerprint.models import Document
from pagetext.encoding import decode

from ..context import Context
from ..egress import EgressPolicy, FetchError, fetch
from ..pipeline import to_record
from ..store import MatchRecord, NotFound, Page, Store, now
from ..store.followup import Recheck
from . import notify

log = logging.getLogger(__name__)

USER_AGENT = "fptrack/0.1 (+content fingerprint tracking; respects robots.txt)"  # the crawler's
GONE = frozenset({404, 410, 451})  # Not Found, Gone, Unavailable For Legal Reasons
MAX_BYTES = 4 * 1024 * 1024  # as the crawler's DOWNLOAD_MAXSIZE
TIMEOUT = 30.0  # seconds for one request in all: connecting, the headers and the body
DELAY = 1.0  # seconds between two requests to one host, unless the site's rules ask for more
REMOVED_DAYS = 30  # removed copies are looked at again this long, to catch one that comes back
BY = "fptrack recheck"
CRAWL_BY = "fptrack crawl (copy back)"


# ---- a small, polite HTTP client --------------------------------------------------------

@dataclass
class Fetched:
    url: str
    status: int  # 0: no answer
    body: bytes = b""
    content_type: str = ""
    charset: str | None = None
    error: str = ""  # why there is no answer


class PoliteClient:
    """GET with the crawler's user agent, the egress policy (tracker.egress), a total deadline, a
    size limit, a delay between requests to one host, and robots.txt read once per host (with
    Protego, the parser Scrapy uses)."""

    def __init__(self, *, timeout: float = TIMEOUT, max_bytes: int = MAX_BYTES, delay: float = DELAY,
                 user_agent: str = USER_AGENT, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, policy: EgressPolicy | None = None):
        self.timeout, self.max_bytes, self.delay, self.user_agent = timeout, max_bytes, delay, user_agent
        self.policy = policy or EgressPolicy.load()
        self._sleep, self._clock = sleep, clock
        self._robots: dict[str, Any] = {}
        self._last: dict[str, float] = {}
        self.requests = 0

    def _wait(self, host: str, delay: float) -> None:
        last = self._last.get(host)
        if last is not None:
            left = last + delay - self._clock()
            if left > 0:
                self._sleep(left)
        self._last[host] = self._clock()

    def get(self, url: str, *, delay: float | None = None) -> Fetched:
        """One GET through the egress policy, within `timeout` seconds in all (redirects included);
        every failure is a Fetched with status 0 and the reason ("timed out", "incomplete answer",
        "refused to fetch ...: 127.0.0.1 is a loopback address; ...")."""
        host = (urlsplit(url).hostname or "").lower()
        self._wait(host, self.delay if delay is None else max(delay, self.delay))
        self.requests += 1
        try:
            r = fetch(url, policy=self.policy, headers={"User-Agent": self.user_agent, "Accept": "text/html,*/*"},
                      deadline=self.timeout, max_bytes=self.max_bytes)
        except FetchError as e:
            if e.reason.startswith("refused"):
                return Fetched(url, 0, error=str(e))
            return Fetched(url, 0, error=f"no answer: {e.reason}")
        if r.status >= 400:
            return Fetched(r.url, r.status, r.body, error=f"HTTP {r.status} {r.reason}".rstrip())
        return Fetched(r.url, r.status, r.body, r.content_type, r.charset,
                       error=f"cut at {self.max_bytes} bytes" if r.truncated else "")

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets this user agent fetch `url`. A robots.txt that is missing (4xx)
        allows everything; one that cannot be fetched (no answer, 5xx) too, as Scrapy does."""
        from protego import Protego

        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            got = self.get(urljoin(origin, "/robots.txt"))
            text = ""
            if 200 <= got.status < 300:
                text = decode(got.body).text if got.body else ""
            self._robots[origin] = Protego.parse(text)
        return self._robots[origin].can_fetch(url, self.user_agent)


# ---- one page ---------------------------------------------------------------------------

@dataclass
class PageCheck:
    page: str
    url: str
    outcome: str  # one of tracker.store.followup.RECHECK_OUTCOMES
    http_status: int = 0
    reason: str = ""
    removed: list[str] = field(default_factory=list)  # chapters whose copy was marked removed
    up: list[str] = field(default_factory=list)  # chapters still copied there
    reopened: list[str] = field(default_factory=list)  # chapters whose copy came back


def page_urls(page: Page | None, key: str) -> list[str]:
    """The URLs the stored page was made from: its parts when a chapter was split over pages."""
    if page is not None and page.meta.get("part_urls"):
        return [u for u in str(page.meta["part_urls"]).split("\n") if u]
    url = (page.url if page is not None else "") or key
    return [url] if urlsplit(url).scheme in ("http", "https") else []


def page_text(fetched: Fetched, rules: dict[str, Any]) -> str:
    """The main text of a fetched page, as the crawler would store it."""
    from pagetext.extraction.page import Selectors, extract

    text = decode(fetched.body, declared=rules.get("encoding") or fetched.charset).text
    if fetched.content_type == "text/plain":
        return text
    try:
        selectors = Selectors(title=rules.get("title", ""), content=rules.get("content", ""))
    except ValueError:
        selectors = None
    found = extract(text, fetched.url, selectors)
    return found.text


def copied_chapters(ctx: Context, key: str, site: str, text: str) -> dict[str, Any]:
    """The chapters the engine finds in `text` -> their fingerprint.models.Match."""
    try:
        prepared = ctx.tracker.prepare(Document(key, text, meta={"site": site}))
    except FingerprintError:
        return {}
    if prepared.units == 0:
        return {}
    return {m.original: m for m in ctx.tracker.match(prepared)}


def check_page(ctx: Context, key: str, matches: list[MatchRecord], client: PoliteClient,
               rules: dict[str, Any], *, clock: Callable[[], datetime] = now) -> PageCheck:
    """Re-fetch one page and update its matches: removed when gone, reopened when back."""
    store = ctx.store
    try:
        page: Page | None = store.get_page(key)
    except NotFound:
        page = None
    urls = page_urls(page, key)
    site = matches[0].site
    if not urls:
        return PageCheck(key, "", "no-url", reason="the page has no http(s) URL to fetch")
    delay = float(rules.get("delay") or 0)
    if rules.get("obey_robots", True):
        for u in urls:
            if not client.allowed(u):
                return PageCheck(key, urls[0], "blocked", reason=f"robots.txt forbids fetching {u}")
    texts, status = [], 0
    for u in urls:
        got = client.get(u, delay=delay)
        status = got.status if u == urls[0] else status
        if got.status in GONE:
            return PageCheck(key, urls[0], "gone", got.status, f"HTTP {got.status}",
                             removed=_mark_removed(store, urls[0], matches, clock))
        if not 200 <= got.status < 300:
            return PageCheck(key, urls[0], "unreachable", got.status, got.error or f"HTTP {got.status}")
        try:
            texts.append(page_text(got, rules))
        except FingerprintError as e:  # undecodable bytes: not the chapter any more
            texts.append("")
            log.info("%s: %s", u, e)
    found = copied_chapters(ctx, key, site, "\n".join(texts))
    still = [m for m in matches if m.chapter in found]
    check = PageCheck(key, urls[0], "up" if still else "gone", status,
                      "the copy is still on the page" if still else "the copy is no longer on the page")
    check.removed = _mark_removed(store, urls[0], [m for m in matches if m.chapter not in found], clock)
    stored_page = page or Page(key=key, text="", url=urls[0], site=site)
    for m in still:
        check.up.append(m.chapter)
        if m.status == "removed":
            # Found again: the new scores and last_seen, then the match reopens.
            updated = store.upsert_match(to_record(found[m.chapter], stored_page, ctx))
            notify.reopen(store, updated, urls[0], by=BY)
            check.reopened.append(m.chapter)
    return check


def seen_unchanged(store: Store, key: str, url: str = "", *, clock: Callable[[], datetime] = now) -> list[str]:
    """A crawl found a stored page as it is stored (the same text, or HTTP 304 Not Modified): a
    copy on it that was marked removed is up again. Each such match is seen now and reopens, with
    a copy-back event (tracker.followup.notify.reopen); returns their chapters. A changed page is matched
    again instead (tracker.pipeline.process_page), which reopens what it finds."""
    back = []
    for m in store.matches(page=key, status="removed", limit=None):
        m.last_seen = clock()
        notify.reopen(store, store.upsert_match(m), url or m.page, by=CRAWL_BY)
        back.append(m.chapter)
    return back


def _mark_removed(store: Store, url: str, matches: Iterable[MatchRecord], clock: Callable[[], datetime]) -> list[str]:
    """Mark removed the matches still in takedown-sent, each with a "removed" event; their chapters."""
    done = []
    for m in matches:
        if m.status != "takedown-sent":
            continue  # removed already
        sent_at = notify.history_time(m, "takedown-sent")
        removed = store.set_match_status(m.page, m.chapter, "removed", by=BY)
        notify.record(store, notify.removed_event(removed, url, sent_at, at=clock()))
        done.append(m.chapter)
    return done


# ---- every page -------------------------------------------------------------------------

@dataclass
class RecheckReport:
    checks: list[PageCheck] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.checks if c.outcome == outcome)

    @property
    def removed(self) -> int:
        return sum(len(c.removed) for c in self.checks)

    @property
    def reopened(self) -> int:
        return sum(len(c.reopened) for c in self.checks)

    def summary(self) -> str:
        return (f"{counted(len(self.checks), 'page')} re-checked: {self.count('up')} still up, "
                f"{self.count('gone')} gone ({counted(self.removed, 'match')} marked removed), "
                f"{counted(self.reopened, 'copy')} back, "
                f"{self.count('unreachable')} unreachable, {self.count('blocked')} blocked by robots.txt, "
                f"{self.count('no-url')} without a URL")


def to_recheck(ctx: Context, *, site: str | None = None, removed_days: int = REMOVED_DAYS,
               clock: Callable[[], datetime] = now) -> dict[str, list[MatchRecord]]:
    """The pages to re-check -> their matches: every match in takedown-sent, and those marked
    removed in the last `removed_days` days (a copy can come back)."""
    store = ctx.store
    since = clock() - timedelta(days=removed_days)
    pages: dict[str, list[MatchRecord]] = {}
    for m in store.matches(status=["takedown-sent", "removed"], site=site, sort="site"):
        if m.status == "removed":
            at = notify.history_time(m, "removed")
            if not at or datetime.fromisoformat(at) < since:
                continue
        pages.setdefault(m.page, []).append(m)
    return pages


def recheck(ctx: Context, *, site: str | None = None, client: PoliteClient | None = None,
            removed_days: int = REMOVED_DAYS, clock: Callable[[], datetime] = now,
            each: Callable[[PageCheck], None] | None = None) -> RecheckReport:
    """Re-check every page whose takedown was sent (and those removed lately): see the module's doc."""
    client = client or PoliteClient(policy=EgressPolicy.load(ctx.settings))
    store = ctx.store
    rules: dict[str, dict[str, Any]] = {}
    report = RecheckReport()
    for key, matches in to_recheck(ctx, site=site, removed_days=removed_days, clock=clock).items():
        name = matches[0].site
        if name not in rules:
            try:
                rules[name] = dict(store.get_site(name).rules)
            except NotFound:
                rules[name] = {}
        check = check_page(ctx, key, matches, client, rules[name], clock=clock)
        store.put_recheck(Recheck(page=key, site=name, url=check.url, outcome=check.outcome, checked_at=clock(),
                                  http_status=check.http_status, reason=check.reason))
        report.checks.append(check)
        if each:
            each(check)
    return report


def daily(ctx: Context, *, client: PoliteClient | None = None) -> dict[str, Any]:
    """The daily follow-up (Celery beat, FPT_RECHECK_HOUR UTC): re-check the pages whose takedown
    was sent, then send every pending notification (failed crawls included)."""
    report = recheck(ctx, client=client)
    log.info("follow-up: %s", report.summary())
    sent = notify.send_pending(ctx.store, ctx.settings)
    for line in sent.problems:
        log.warning("notifications: %s", line)
    return {"rechecked": len(report.checks), "up": report.count("up"), "gone": report.count("gone"),
            "removed": report.removed, "reopened": report.reopened, "unreachable": report.count("unreachable"),
            "digests": sent.digests, "webhooks": sent.webhooks, "waiting": sent.waiting}


# ---- the numbers per site -----------------------------------------------------------------

def stats(store: Store, *, site: str | None = None, clock: Callable[[], datetime] = now) -> list[dict[str, Any]]:
    """Per site: takedowns sent (matches whose notice was sent, whatever came after), removed,
    median days from the notice to the removal, pages still up (and the oldest notice among
    them, in days), and when the site was last re-checked. Sites with most takedowns first."""
    at = clock()
    rows: dict[str, dict[str, Any]] = {}
    for m in store.matches(status=["takedown-sent", "removed", "confirmed"], site=site, sort="site"):
        sent = notify.history_time(m, "takedown-sent")
        if not sent:
            continue
        r = rows.setdefault(m.site, {"site": m.site, "sent": 0, "removed": 0, "days": [], "up_pages": set(),
                                     "open_days": [], "reopened": 0})
        r["sent"] += 1
        if m.status == "removed":
            r["removed"] += 1
            days = notify.days_between(sent, datetime.fromisoformat(notify.history_time(m, "removed")))
            if days is not None:
                r["days"].append(days)
        elif m.status == "takedown-sent":
            r["up_pages"].add(m.page)
            r["open_days"].append(notify.days_between(sent, at) or 0)
        else:
            r["reopened"] += 1
            r["up_pages"].add(m.page)
    checked: dict[str, datetime] = {}
    for c in store.rechecks(site=site):
        if c.site not in checked or c.checked_at > checked[c.site]:
            checked[c.site] = c.checked_at
    out = []
    for r in rows.values():
        out.append({"site": r["site"], "takedowns_sent": r["sent"], "removed": r["removed"],
                    "median_days_to_removal": statistics.median(r["days"]) if r["days"] else None,
                    "pages_still_up": len(r["up_pages"]), "longest_open_days": max(r["open_days"], default=None),
                    "reopened": r["reopened"], "last_checked": checked.get(r["site"])})
    out.sort(key=lambda r: (-r["takedowns_sent"], r["site"]))
    return out


def open_takedowns(store: Store, *, site: str | None = None, clock: Callable[[], datetime] = now,
                   limit: int = 500) -> list[dict[str, Any]]:
    """The matches still in takedown-sent, longest open first, with the days since the notice and
    the latest re-check of their page."""
    at = clock()
    checks = {c.page: c for c in store.rechecks(site=site)}
    rows = []
    for m in store.matches(status="takedown-sent", site=site, sort="site", limit=limit):
        sent = notify.history_time(m, "takedown-sent")
        c = checks.get(m.page)
        rows.append({"page": m.page, "chapter": m.chapter, "work": m.work, "site": m.site,
                     "takedown_sent": sent, "days_open": notify.days_between(sent, at) if sent else None,
                     "last_check": c.checked_at if c else None, "last_outcome": c.outcome if c else "",
                     "http_status": c.http_status if c else None, "url": c.url if c else ""})
    rows.sort(key=lambda r: (-(r["days_open"] or 0), r["site"], r["page"], r["chapter"]))
    return rows
