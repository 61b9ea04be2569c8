"""The egress policy: every request the system makes for someone (a crawl, a preview, a
re-check, a webhook, a search) goes only to public addresses, unless an operator allows more.

    FPT_FETCH_ALLOW=10.0.0.0/8,intranet.example.com   networks and host names allowed anyway
    FPT_FETCH_ALLOW=127.0.0.1:8000                     one port of an address (or network) only
    FPT_WEB_FETCH_PRIVATE=true                        (the admin's older switch) every private address

Multicast and unspecified addresses are never reached: no operator means them.
"""
from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

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


def _split_port(entry: str) -> tuple[str, int | None]:
    """("127.0.0.1", 8000) from "127.0.0.1:8000", ("::1", 8000) from "[::1]:8000"; (entry, None) without a port
    (an IPv6 network's colons are its own: "::1" and "fd00::/8" have none)."""
    if entry.startswith("[") and "]:" in entry:
        address, _, port = entry[1:].partition("]:")
    elif entry.count(":") == 1:
        address, _, port = entry.partition(":")
    else:
        return entry, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{ALLOW_VAR} entry {entry!r} has a bad port; write it as 127.0.0.1:8000 or [::1]:8000")
    return address, int(port)


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    ip = parse_ip(text)
    if ip is not None:
        return ipaddress.ip_network(ip)
    if "/" in text:
        try:
            return ipaddress.ip_network(text.strip("[]"), strict=False)
        except ValueError:
            raise ValueError(f"{ALLOW_VAR} entry {text!r} is not a network; write it as 10.0.0.0/8 "
                             "or fd00::/8") from None
    return None


def parse_allow(text: str) -> tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...], frozenset[str],
                                    tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int], ...]]:
    """(networks, host names, (network, port) pairs) from "10.0.0.0/8, ::1, intranet.example.com,
    127.0.0.1:8000"; ValueError naming a bad entry."""
    networks, hosts, ports = [], set(), []
    for raw in (text or "").split(","):
        entry = raw.strip()
        if not entry:
            continue
        address, port = _split_port(entry)
        network = _network(address)
        if port is not None:
            if network is None:
                raise ValueError(f"{ALLOW_VAR} entry {entry!r}: a port is allowed on an address or a network "
                                 "(127.0.0.1:8000), not on a host name")
            ports.append((network, port))
            continue
        if network is not None:
            networks.append(network)
            continue
        name = entry.lower().rstrip(".")
        if not all(c.isalnum() or c in "-._" for c in name):
            raise ValueError(f"{ALLOW_VAR} entry {entry!r} is neither a network (10.0.0.0/8) nor a host name "
                             "(intranet.example.com)")
        hosts.add(name)
    return tuple(networks), frozenset(hosts), tuple(ports)


def url_port(url: str) -> int | None:
    """The port a URL is fetched on (its own, else its scheme's), None for no URL or a bad port."""
    if "://" not in (url or ""):
        return None
    try:
        parts = urlsplit(url)
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None


@dataclass(frozen=True)
class EgressPolicy:
    networks: tuple[Any, ...] = ()  # allowed anyway (FPT_FETCH_ALLOW)
    hosts: frozenset[str] = field(default_factory=frozenset)  # host names allowed anyway, whatever they resolve to
    allow_private: bool = False  # FPT_WEB_FETCH_PRIVATE=true: every non-public address but multicast/unspecified
    ports: tuple[Any, ...] = ()  # (network, port) pairs allowed on that port only (FPT_FETCH_ALLOW=127.0.0.1:8000)

    @classmethod
    def from_text(cls, allow: str = "", *, allow_private: bool = False) -> EgressPolicy:
        networks, hosts, ports = parse_allow(allow)
        return cls(networks, hosts, allow_private, ports)

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


    def host_allowed(self, host: str) -> bool:
        return (host or "").lower().rstrip(".") in self.hosts

    def why_not(self, ip: IPAddress, host: str = "", port: int | None = None) -> str:
        """"" when `ip` may be reached (for `host`, on `port`), else the kind of address it is ("loopback").
        An entry with a port allows that port only, and nothing where the port is not known."""
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
            if candidate is not None and port is not None and any(
                    candidate.version == n.version and candidate in n and port == p for n, p in self.ports):
                return ""
        return kind

    def on_some_port(self, ip: IPAddress) -> bool:
        """Whether an entry with a port allows `ip` (on that port): for a check that cannot know the
        port (the crawl's resolver, handed an address the URL check has judged with its port)."""
        return any(c is not None and c.version == n.version and c in n
                   for c in (ip, embedded_ipv4(ip)) for n, _ in self.ports)

    def check(self, ip: IPAddress, *, host: str = "", url: str = "") -> None:
        """Raise Refused, one line naming the address and the setting, when `ip` may not be reached
        (on the port of `url`, when it is one)."""
        kind = self.why_not(ip, host, url_port(url))
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
