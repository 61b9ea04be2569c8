"""The records of what happens after a match is found: the events people are told about
(new matches, copies back after removal, takedowns that worked, failed crawls), who is
told (subscriptions, per work or site, by e-mail or webhook), each delivery with its log,
and the latest re-check of each page whose takedown was sent."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .records import now
from .values import check_status

EVENT_KINDS = ("new-match", "copy-back", "removed", "crawl-failed")
CHANNELS = ("email", "webhook")
DELIVERY_STATUSES = ("pending", "sent")
#: What a re-check found: the copy still up, gone (404/410/451 or no longer on the page), the
#: server not answering as it should, robots.txt forbidding the fetch, or no URL to fetch.
RECHECK_OUTCOMES = ("up", "gone", "unreachable", "blocked", "no-url")


def subscription_id(channel: str, target: str, work: str = "", site: str = "") -> str:
    """The same channel, target and scope always make the same id, so adding twice updates."""
    raw = "\x1f".join((channel, target.strip().lower() if channel == "email" else target.strip(), work, site))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def check_subscription(sub: Subscription) -> None:
    """Raise ValueError for a subscription no backend should keep."""
    check_status(sub.channel, CHANNELS, "channel")
    if not sub.id or not sub.target:
        raise ValueError("a subscription needs an id and a target (an e-mail address or a URL)")
    for kind in sub.kinds:
        check_status(kind, EVENT_KINDS, "event kind")


@dataclass
class Subscription:
    """Someone told about the events of one work and/or one site (neither: every event)."""
    id: str  # subscription_id(channel, target, work, site)
    channel: str  # email | webhook
    target: str  # an e-mail address, or the webhook's URL
    work: str = ""  # Work.id; "" for any
    site: str = ""  # site name; "" for any
    secret: str = ""  # webhook: the key of the HMAC-SHA256 signature
    kinds: list[str] = field(default_factory=lambda: list(EVENT_KINDS))
    created_at: datetime = field(default_factory=now)

    def wants(self, event: Event) -> bool:
        """Whether this subscription is told about `event`: its kind, its scope, and not older
        than the subscription (a new subscriber does not get the past)."""
        return (event.kind in self.kinds and (not self.work or event.work == self.work)
                and (not self.site or event.site == self.site) and event.at >= self.created_at)


@dataclass
class Event:
    """Something that happened that people may want to know. `id` names the occurrence, so
    recording it twice (a retried task) records it once."""
    id: str
    kind: str  # one of EVENT_KINDS
    at: datetime = field(default_factory=now)
    work: str = ""
    site: str = ""
    page: str = ""
    chapter: str = ""
    summary: str = ""  # one line for people
    data: dict[str, Any] = field(default_factory=dict)  # details for machines (url, scores, counts...)
    routed: bool = False  # its deliveries have been made for the subscriptions of its time


@dataclass
class Delivery:
    """One event for one subscription: pending until sent, with every attempt in its log."""
    event: str  # Event.id
    subscription: str  # Subscription.id
    status: str = "pending"  # pending | sent
    attempts: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)  # {"at", "ok", "detail"} per attempt
    created_at: datetime = field(default_factory=now)
    sent_at: datetime | None = None


@dataclass
class Recheck:
    """The latest re-fetch of a page whose takedown was sent (or whose copy was removed)."""
    page: str  # Page.key
    site: str
    url: str
    outcome: str  # one of RECHECK_OUTCOMES
    checked_at: datetime = field(default_factory=now)
    http_status: int = 0  # 0: no answer
    reason: str = ""
