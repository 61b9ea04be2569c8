"""Addresses: read a host as an IP address in any spelling a resolver accepts, and say what
kind of address it is when it is not a public one.

inet_aton's spellings all reach 127.0.0.1:

    127.0.0.1   2130706433   0x7f000001   127.1   0177.0.0.1   0x7f.1   ::ffff:127.0.0.1

An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d, 6to4 2002:aabb:ccdd::,
NAT64 64:ff9b::a.b.c.d, IPv4-compatible ::a.b.c.d) is judged by the IPv4 address inside.
"""
from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_DIGITS = frozenset("0123456789abcdefxABCDEFX.")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_ULA = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def _number(part: str) -> int | None:
    """One inet_aton part: 0x1f hex, 017 octal, 17 decimal; None if it is none of them."""
    if not part:
        return None
    try:
        if part[:2] in ("0x", "0X"):
            return int(part[2:], 16) if part[2:] else None  # "0x" alone is no number to inet_aton
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        return int(part, 10) if part.isdigit() else None
    except ValueError:
        return None


def parse_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address `text` spells as inet_aton reads it (1 to 4 parts, the last filling the
    bytes left), or None. Linear in the length of `text`.

    "127.1" -> 127.0.0.1 (the last part fills three bytes); "0x7f.1" -> 127.0.0.1."""
    if not text or len(text) > 64 or not set(text) <= _DIGITS:
        return None
    parts = text.split(".")
    if len(parts) > 4:
        return None
    values = [_number(p) for p in parts]
    if any(v is None for v in values):
        return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    value = 0
    for v in head:
        value = value << 8 | v
    value = value << (8 * (4 - len(head))) | last
    return ipaddress.IPv4Address(value)


def parse_ip(host: str) -> IPAddress | None:
    """The IP address a URL's host names literally (brackets, a zone, odd IPv4 spellings), or None
    for a name that needs a DNS lookup."""
    h = (host or "").strip().rstrip(".") if host else ""
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if ":" in h:
        try:
            return ipaddress.IPv6Address(h.split("%", 1)[0])
        except ValueError:
            return None
    return parse_ipv4(h)


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64, compatible), or None."""
    if ip.version != 6:
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d, IPv4-compatible (deprecated, still routed by some)
        return ipaddress.IPv4Address(int(ip))
    return None


def classify(ip: IPAddress) -> str:
    """What kind of non-public address `ip` is ("loopback", "private"...), or "" for a public one.

    Ordered from the most specific name: 127.0.0.1 is "loopback" though it is private too."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        return classify(inner)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.version == 4 and ip in _CGNAT:
        return "shared (CGNAT)"
    if ip.version == 6 and ip in _ULA:
        return "unique local"
    if ip.version == 6 and ip in _NAT64_LOCAL:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "non-public"
    return ""


def article(kind: str) -> str:
    return "an" if kind[:1] in "aeiou" and not kind.startswith("uni") else "a"
