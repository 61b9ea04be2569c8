"""Webhooks: one JSON POST per event, signed so that the receiver can tell it comes from
here and was not changed on the way, retried with exponential back-off.

The signature is the HMAC-SHA256 of the exact body with the subscription's secret, in hex:

    X-Fptrack-Signature: sha256=5d41402abc4b2a76b9719d911017c592...
    X-Fptrack-Event: new-match
    X-Fptrack-Delivery: new-match:3f2a...   (the event's id: the same on every retry)

A receiver recomputes hmac.new(secret, body, "sha256").hexdigest() and compares it with
hmac.compare_digest. Webhooks go through the egress policy (tracker.egress): a receiver on a
loopback or private address is refused unless FPT_FETCH_ALLOW allows it, and each POST has a
total deadline, however slowly the receiver answers. A 2xx answer is a delivery; a timeout, a refused connection, a 5xx,
408 or 429 is tried again after 1, 2, 4... times `backoff` seconds; other 4xx answers are
not retried now (the receiver refused the event) and wait for the next send.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from ..egress import EgressPolicy, FetchError, fetch
from ..store.followup import Event

SIGNATURE_HEADER = "X-Fptrack-Signature"
USER_AGENT = "fptrack-webhook/0.1"
RETRY_STATUSES = frozenset({408, 429})
MAX_BACKOFF = 60.0
REFUSED = -1  # post's status when the egress policy refuses the address: never retried


def payload(event: Event) -> bytes:
    """The JSON body of an event: what people read (summary) and what scripts use (the fields)."""
    return json.dumps({"id": event.id, "kind": event.kind, "at": event.at.isoformat(), "work": event.work,
                       "site": event.site, "page": event.page, "chapter": event.chapter, "summary": event.summary,
                       "data": event.data}, ensure_ascii=False, sort_keys=True, default=str).encode("utf-8")


def signature(secret: str, body: bytes) -> str:
    """The header value: "sha256=" and the hex HMAC-SHA256 of the body."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str) -> bool:
    """What a receiver does: whether the header signs this body with this secret."""
    return hmac.compare_digest(signature(secret, body), header or "")


def post(url: str, secret: str, body: bytes, event: Event | None = None, *, timeout: float = 10.0,
         policy: EgressPolicy | None = None) -> tuple[int, str]:
    """One POST within `timeout` seconds in all; (HTTP status, detail), status 0 when no answer
    came and REFUSED when the egress policy does not send to that address. A redirect is an
    answer (not followed): a receiver's URL is the one configured."""
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT,
               SIGNATURE_HEADER: signature(secret, body)}
    if event is not None:
        headers.update({"X-Fptrack-Event": event.kind, "X-Fptrack-Delivery": event.id})
    try:
        r = fetch(url, policy=policy or EgressPolicy.load(), method="POST", body=body, headers=headers,
                  deadline=timeout, max_bytes=65536, max_redirects=0)
    except FetchError as e:
        if e.reason.startswith("refused"):  # named by scheme and host: a webhook's path is often its secret
            parts = urlsplit(url)
            return REFUSED, str(e).replace(e.url, f"{parts.scheme}://{parts.netloc}/")
        if e.reason == "timed out":
            return 0, f"no answer: timed out after {timeout:g} s"
        return 0, f"no answer: {e.reason}"
    return r.status, f"HTTP {r.status}" + (f" {r.reason}" if r.status >= 300 and r.reason else "")


def deliver(url: str, secret: str, body: bytes, *, event: Event | None = None, attempts: int = 4,
            backoff: float = 1.0, timeout: float = 10.0, on_attempt: Callable[[bool, str], None] | None = None,
            sleep: Callable[[float], None] = time.sleep, policy: EgressPolicy | None = None) -> tuple[bool, str]:
    """POST until a 2xx answer or `attempts` tries; each try is reported to `on_attempt`.
    Returns (delivered, the last detail)."""
    detail = ""
    for i in range(max(1, attempts)):
        if i:
            sleep(min(MAX_BACKOFF, backoff * 2 ** (i - 1)))
        status, detail = post(url, secret, body, event, timeout=timeout, policy=policy)
        ok = 200 <= status < 300
        if on_attempt is not None:
            on_attempt(ok, detail)
        if ok:
            return True, detail
        if status == REFUSED or (status and status < 500 and status not in RETRY_STATUSES):
            break  # the receiver (or the egress policy) refused the event: trying again now would change nothing
    return False, detail
