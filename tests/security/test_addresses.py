"""Every spelling of an address is read as the resolver reads it, and judged by what it is."""
from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.egress.addresses import classify, embedded_ipv4, parse_ip, parse_ipv4


@pytest.mark.parametrize("spelling", ["127.0.0.1", "2130706433", "0x7f000001", "0X7F000001", "127.1", "127.0.1",
                                      "0177.0.0.1", "0x7f.1", "0177.1", "017700000001", "127.0.0.1.", "[::ffff:127.0.0.1]",
                                      "::ffff:7f00:1", "[::ffff:7f00:1]"])
def test_every_spelling_of_loopback_is_loopback(spelling):
    ip = parse_ip(spelling)
    assert ip is not None, spelling
    assert classify(ip) == "loopback"


@pytest.mark.parametrize("address,kind", [
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("100.64.0.1", "shared (CGNAT)"),
    ("100.127.255.254", "shared (CGNAT)"), ("fc00::1", "unique local"), ("fd12:3456::1", "unique local"),
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("::1", "loopback"), ("240.0.0.1", "reserved"), ("64:ff9b::a00:1", "private"), ("2002:7f00:1::", "loopback"),
    ("2002:a9fe:a9fe::", "link-local"), ("::127.0.0.1", "loopback"), ("192.0.2.1", "private"),
])
def test_kinds(address, kind):
    assert classify(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::6810:85e5", "100.128.0.1",
                                     "::ffff:8.8.8.8", "2002:808:808::", "64:ff9b::808:808"])
def test_public_addresses_pass(address):
    assert classify(ipaddress.ip_address(address)) == ""


def test_embedded_addresses():
    assert embedded_ipv4(ipaddress.ip_address("::ffff:10.0.0.1")) == ipaddress.ip_address("10.0.0.1")
    assert embedded_ipv4(ipaddress.ip_address("64:ff9b::7f00:1")) == ipaddress.ip_address("127.0.0.1")
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1")) is None


@pytest.mark.parametrize("name", ["example.com", "127.0.0.1.example.com", "0x7g.1", "1.2.3.4.5", "256.1.1.1",
                                  "1.2.3.16777216", "", "..", "1..1", "[::1", "::g"])
def test_names_and_nonsense_are_not_addresses(name):
    assert parse_ip(name) is None


_PART = st.one_of(st.integers(0, 2 ** 32).map(str), st.integers(0, 2 ** 32).map(lambda n: f"0x{n:x}"),
                  st.integers(0, 2 ** 32).map(lambda n: f"0{n:o}"), st.text("0123456789abcdefx", max_size=6))


@settings(max_examples=500, deadline=None)
@given(st.lists(_PART, min_size=1, max_size=5).map(".".join))
def test_parse_ipv4_reads_as_inet_aton_does(text):
    try:
        expected = ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        expected = None
    assert parse_ipv4(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_every_integer_spelling_of_an_address_is_that_address(n):
    ip = ipaddress.IPv4Address(n)
    a, b, c, d = ip.packed
    for spelling in (str(n), hex(n), f"{a}.{(b << 16) | (c << 8) | d}", f"{a}.{b}.{(c << 8) | d}",
                     f"0{a:o}.0x{b:x}.{c}.{d}"):
        assert parse_ip(spelling) == ip, spelling
    assert parse_ip(f"::ffff:{ip}") == ipaddress.IPv6Address(f"::ffff:{ip}")
    assert classify(parse_ip(f"::ffff:{ip}")) == classify(ip)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_parses_or_is_none(text):
    got = parse_ip(text)
    assert got is None or isinstance(got, (ipaddress.IPv4Address, ipaddress.IPv6Address))
