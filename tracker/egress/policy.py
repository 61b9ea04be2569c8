"""The egress policy: every request the system makes for someone (a crawl, a preview, a
re-check, a webhook, a search) goes only to public addresses, unless an operator allows more.

    FPT_FETCH_ALLOW=10.0.0.0/8,intranet.example.com   networks and host names allowed anyway
    FPT_WEB_FETCH_PRIVATE=true                        (the admin's older switch) every private address

Multicast and unspecified addresses are never reached: no operator means them.
"""
from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .addresses import IPAddress, article, classify, embedded_ipv4, parse_ip

ALLOW_VAR = "FPT_FETCH_ALLOW"
PRIVATE_VAR = "FPT_WEB_FETCH_PRIVATE"
SCHEMES = ("http", "https")
_NEVER = ("unspecified", "multicast")
_TRUE = ("1", "true", "yes", "on")


class Refused(ValueError):
    """A request the policy does not make; the message names the address and the setting."""

    def __init__(self, message: str, reason: str, detail: str = ""):
        super().__init__(message)
        self.reason = reason  # short: "refused: loopback address"
        self.detail = detail or message  # without the URL: "127.0.0.1 is a loopback address; allow it with ..."


def parse_allow(text: str) -> tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...], frozenset[str]]:
    """(networks, host names) from "10.0.0.0/8, ::1, intranet.example.com"; ValueError naming a bad entry."""
    networks, hosts = [], set()
    for raw in (text or "").split(","):
        entry = raw.strip()
        if not entry:
            continue
        ip = parse_ip(entry)
        if ip is not None:
            networks.append(ipaddress.ip_network(ip))
            continue
        if "/" in entry:
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                raise ValueError(f"{ALLOW_VAR} entry {entry!r} is not a network; write it as 10.0.0.0/8 "
                                 "or fd00::/8") from None
        name = entry.lower().rstrip(".")
        if not all(c.isalnum() or c in "-._" for c in name):
            raise ValueError(f"{ALLOW_VAR} entry {entry!r} is neither a network (10.0.0.0/8) nor a host name "
                             "(intranet.example.com)")
        hosts.add(name)
    return tuple(networks), frozenset(hosts)


@dataclass(frozen=True)
class EgressPolicy:
    networks: tuple[Any, ...] = ()  # allowed anyway (FPT_FETCH_ALLOW)
    hosts: frozenset[str] = field(default_factory=frozenset)  # host names allowed anyway, whatever they resolve to
    allow_private: bool = False  # FPT_WEB_FETCH_PRIVATE=true: every non-public address but multicast/unspecified

    @classmethod
    def from_text(cls, allow: str = "", *, allow_private: bool = False) -> EgressPolicy:
        networks, hosts = parse_allow(allow)
        return cls(networks, hosts, allow_private)

    @classmethod
    def load(cls, settings: Any = None, environ: Mapping[str, str] | None = None, *,
             allow_private: bool | None = None) -> EgressPolicy:
        """The policy of `settings` (its fetch_allow) joined with the process's FPT_FETCH_ALLOW and
        FPT_WEB_FETCH_PRIVATE: an operator's variable applies to every part, however it was started."""
        env = os.environ if environ is None else environ
        parts = [getattr(settings, "fetch_allow", "") or "", env.get(ALLOW_VAR, "")]
        private = allow_private if allow_private is not None else \
            str(env.get(PRIVATE_VAR, "")).strip().lower() in _TRUE
        return cls.from_text(",".join(p for p in parts if p), allow_private=private)

    def widened(self, extra: Iterable[str]) -> EgressPolicy:
        """This policy with more entries allowed (a demo's own server)."""
        networks, hosts = parse_allow(",".join(extra))
        return EgressPolicy(self.networks + networks, self.hosts | hosts, self.allow_private)

    def host_allowed(self, host: str) -> bool:
        return (host or "").lower().rstrip(".") in self.hosts

    def why_not(self, ip: IPAddress, host: str = "") -> str:
        """"" when `ip` may be reached (for `host`), else the kind of address it is ("loopback")."""
        kind = classify(ip)
        if not kind:
            return ""
        if kind in _NEVER:
            return kind
        if self.allow_private or (host and self.host_allowed(host)):
            return ""
        inner = embedded_ipv4(ip)
        for candidate in (ip, inner):
            if candidate is not None and any(candidate.version == n.version and candidate in n
                                              for n in self.networks):
                return ""
        return kind

    def check(self, ip: IPAddress, *, host: str = "", url: str = "") -> None:
        """Raise Refused, one line naming the address and the setting, when `ip` may not be reached."""
        kind = self.why_not(ip, host)
        if not kind:
            return
        what = url or host or str(ip)
        inner = embedded_ipv4(ip)
        shown = f"{ip} ({inner})" if inner is not None else str(ip)
        if kind in _NEVER:
            detail = f"{shown} is {article(kind)} {kind} address, which is never fetched"
        else:
            allowed = inner or ip
            bits = 32 if allowed.version == 4 else 128
            detail = f"{shown} is {article(kind)} {kind} address; allow it with {ALLOW_VAR}={allowed}/{bits}"
        raise Refused(f"refused to fetch {what}: {detail}", f"refused: {kind} address", detail)

    def check_literal(self, host: str, *, url: str = "") -> None:
        """Check a host that is an IP address in any spelling; a name is checked once resolved."""
        ip = parse_ip(host)
        if ip is not None:
            self.check(ip, host=host, url=url)

    def check_scheme(self, scheme: str, url: str) -> None:
        if (scheme or "").lower() not in SCHEMES:
            raise Refused(f"refused to fetch {url}: only http and https URLs are fetched",
                          "refused: not an http(s) URL", "only http and https URLs are fetched")
