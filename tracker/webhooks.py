"""Webhooks: one JSON POST per event, signed so that the receiver can tell it comes from
here and was not changed on the way, retried with exponential back-off.

The signature is the HMAC-SHA256 of the exact body with the subscription's secret, in hex:

    X-Fptrack-Signature: sha256=5d41402abc4b2a76b9719d911017c592...
    X-Fptrack-Event: new-match
    X-Fptrack-Delivery: new-match:3f2a...   (the event's id: the same on every retry)

A receiver recomputes hmac.new(secret, body, "sha256").hexdigest() and compares it with
hmac.compare_digest. A 2xx answer is a delivery; a timeout, a refused connection, a 5xx,
408 or 429 is tried again after 1, 2, 4... times `backoff` seconds; other 4xx answers are
not retried now (the receiver refused the event) and wait for the next send.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable

from .store.followup import Event

SIGNATURE_HEADER = "X-Fptrack-Signature"
USER_AGENT = "fptrack-webhook/0.1"
RETRY_STATUSES = frozenset({408, 429})
MAX_BACKOFF = 60.0


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


def post(url: str, secret: str, body: bytes, event: Event | None = None, *, timeout: float = 10.0) -> tuple[int, str]:
    """One POST; (HTTP status, detail), status 0 when no answer came."""
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT,
               SIGNATURE_HEADER: signature(secret, body)}
    if event is not None:
        headers.update({"X-Fptrack-Event": event.kind, "X-Fptrack-Delivery": event.id})
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read(65536)
            return response.status, f"HTTP {response.status}"
    except urllib.error.HTTPError as e:
        e.close()
        return e.code, f"HTTP {e.code} {e.reason}"
    except urllib.error.URLError as e:
        reason = e.reason
        return 0, f"no answer: {getattr(reason, 'strerror', None) or reason}"
    except OSError as e:  # a timeout while reading the answer, a connection reset
        return 0, f"no answer: {e or type(e).__name__}"
    except ValueError as e:  # a URL urllib cannot use
        return 0, f"bad URL: {e}"


def deliver(url: str, secret: str, body: bytes, *, event: Event | None = None, attempts: int = 4,
            backoff: float = 1.0, timeout: float = 10.0, on_attempt: Callable[[bool, str], None] | None = None,
            sleep: Callable[[float], None] = time.sleep) -> tuple[bool, str]:
    """POST until a 2xx answer or `attempts` tries; each try is reported to `on_attempt`.
    Returns (delivered, the last detail)."""
    detail = ""
    for i in range(max(1, attempts)):
        if i:
            sleep(min(MAX_BACKOFF, backoff * 2 ** (i - 1)))
        status, detail = post(url, secret, body, event, timeout=timeout)
        ok = 200 <= status < 300
        if on_attempt is not None:
            on_attempt(ok, detail)
        if ok:
            return True, detail
        if status and status < 500 and status not in RETRY_STATUSES:
            break  # the receiver refused the event: trying again now would change nothing
    return False, detail
