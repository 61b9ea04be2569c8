"""The crawl's DNS resolver (TWISTED_DNS_RESOLVER): Scrapy's caching resolver, with the egress
policy applied to every answer, cached or not. The reactor connects to the address this returns,
so the address checked is the address connected to: a name that resolves to a public address
for the check and to 127.0.0.1 for the connection (DNS rebinding) has no second lookup to use.
"""
from __future__ import annotations

from typing import Any

from scrapy.resolver import CachingThreadedResolver

from tracker.egress import EgressPolicy, Refused, parse_ip

from .tracking import tracker_settings


class RefusedAddress(Refused):
    """A host name resolved to an address the egress policy refuses."""


class EgressResolver(CachingThreadedResolver):
    policy: EgressPolicy = EgressPolicy()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any):
        resolver = super().from_crawler(crawler, reactor)
        resolver.policy = EgressPolicy.load(tracker_settings(crawler.settings))
        return resolver

    def getHostByName(self, name: str, timeout: Any = ()):
        d = super().getHostByName(name, timeout)
        d.addCallback(self._checked, name)
        return d

    def _checked(self, address: str, name: str) -> str:
        ip = parse_ip(address)
        if ip is None:
            raise RefusedAddress(f"refused to fetch {name}: it resolved to {address!r}, not an address",
                                 "refused: not an address")
        try:
            self.policy.check(ip, host=name, url=name)
        except Refused as e:
            # An address written in the URL was judged, with the URL's port, by the egress middleware
            # (which every request passes first); here the port is not known.
            if not (parse_ip(name) is not None and self.policy.on_some_port(ip)):
                raise RefusedAddress(str(e), e.reason, e.detail) from None
        return address
