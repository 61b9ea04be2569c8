"""Every request of a crawl (pages, robots.txt, sitemaps, stylesheets, images, pages for the
browser, and each redirect, which comes back through here) is checked by the egress policy
(tracker.egress) before it is sent: http(s) only; a host written as an IP address, in any
spelling, checked as it is; a name resolved through the crawl's resolver (crawler.resolver),
which refuses what the policy refuses and hands the connection that same checked address.

A refused request fails with the reason "refused: 127.0.0.1 is a loopback address; allow it
with FPT_FETCH_ALLOW=127.0.0.1/32", counted with the site's failures.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future

from tracker.egress import EgressPolicy, Refused, parse_ip

from ..tracking import tracker_settings


class RefusedRequest(IgnoreRequest):
    """A request the egress policy does not send; `reason` is what the crawl counts."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class EgressMiddleware:
    def __init__(self, policy: EgressPolicy):
        self.policy = policy

    @classmethod
    def from_crawler(cls, crawler: Any) -> EgressMiddleware:
        return cls(EgressPolicy.load(tracker_settings(crawler.settings)))

    async def process_request(self, request: Any, spider: Any = None) -> None:
        parts = urlsplit(request.url)
        if parts.scheme == "data":  # the spider's own placeholder requests: nothing leaves the process
            return None
        try:
            self.policy.check_scheme(parts.scheme, request.url)
            host = parts.hostname or ""
            if parse_ip(host) is not None:
                self.policy.check_literal(host, url=request.url)
            elif not self.policy.host_allowed(host):
                from twisted.internet import reactor

                # Through the crawl's resolver (crawler.resolver), whose answer is cached for the
                # connection: a refusal comes back here as the request's reason.
                await maybe_deferred_to_future(reactor.resolve(host))
        except Refused as e:
            raise RefusedRequest(str(e), f"refused: {e.detail}") from None
        except Exception:
            return None
        return None
