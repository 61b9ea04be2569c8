"""The egress policy and its HTTP client, against real servers on loopback."""
from __future__ import annotations

import ipaddress
import time

import pytest

from tracker.egress import EgressPolicy, FetchError, Refused, fetch
from tracker.egress.policy import parse_allow

from .servers import answer, closed_port, cut_chunked, redirect, trickle

LOOPBACK = EgressPolicy.from_text("127.0.0.1/32")
NOTHING = EgressPolicy()


def test_refusal_is_one_line_naming_the_address_and_the_setting():
    with pytest.raises(Refused) as e:
        NOTHING.check(ipaddress.ip_address("127.0.0.1"), url="http://127.0.0.1:6379/")
    assert str(e.value) == ("refused to fetch http://127.0.0.1:6379/: 127.0.0.1 is a loopback address; "
                            "allow it with FPT_FETCH_ALLOW=127.0.0.1/32")
    assert e.value.reason == "refused: loopback address"


def test_allow_list_networks_hosts_and_private_flag():
    p = EgressPolicy.from_text("10.0.0.0/8, ::1, intranet.example.com")
    assert p.why_not(ipaddress.ip_address("10.2.3.4")) == ""
    assert p.why_not(ipaddress.ip_address("::1")) == ""
    assert p.why_not(ipaddress.ip_address("192.168.0.1")) == "private"
    assert p.why_not(ipaddress.ip_address("127.0.0.1")) == "loopback"
    assert p.why_not(ipaddress.ip_address("192.168.0.1"), host="Intranet.Example.com.") == ""
    assert p.why_not(ipaddress.ip_address("::ffff:10.9.9.9")) == ""  # the mapped form of an allowed one
    everything = EgressPolicy(allow_private=True)
    assert everything.why_not(ipaddress.ip_address("127.0.0.1")) == ""
    assert everything.why_not(ipaddress.ip_address("224.0.0.1")) == "multicast"  # never
    assert everything.why_not(ipaddress.ip_address("0.0.0.0")) == "unspecified"


def test_load_joins_settings_and_the_environment():
    class S:
        fetch_allow = "10.0.0.0/8"

    p = EgressPolicy.load(S(), {"FPT_FETCH_ALLOW": "127.0.0.1", "FPT_WEB_FETCH_PRIVATE": "false"})
    assert p.why_not(ipaddress.ip_address("10.0.0.1")) == "" and p.why_not(ipaddress.ip_address("127.0.0.1")) == ""
    assert not p.allow_private
    assert EgressPolicy.load(None, {"FPT_WEB_FETCH_PRIVATE": "true"}).allow_private


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "not a host!", "1.2.3.4/abc"])
def test_bad_allow_entries_are_named(bad):
    with pytest.raises(ValueError, match="FPT_FETCH_ALLOW entry"):
        parse_allow(bad)


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/", "http://2130706433:{port}/", "http://0x7f000001:{port}/",
                                 "http://127.1:{port}/", "http://0177.0.0.1:{port}/", "http://[::ffff:127.0.0.1]:{port}/",
                                 "http://localhost:{port}/"])
def test_loopback_server_is_refused_in_every_spelling(serve, url):
    server = serve(answer(b"secret"))
    with pytest.raises(FetchError) as e:
        fetch(url.format(port=server.port), policy=NOTHING, deadline=3)
    assert e.value.reason == "refused: loopback address"
    assert "FPT_FETCH_ALLOW=127.0.0.1/32" in str(e.value)
    assert server.requests == []  # nothing was sent


def test_allowed_loopback_server_answers_with_the_real_host_header(serve):
    server = serve(answer(b"hello"))
    r = fetch(f"http://localhost:{server.port}/a?b=1", policy=LOOPBACK, deadline=3)
    assert (r.status, r.body) == (200, b"hello")
    assert r.charset == "utf-8"
    assert f"Host: localhost:{server.port}".encode() in server.requests[0]
    assert server.requests[0].startswith(b"GET /a?b=1 HTTP/1.1")


def test_redirect_to_a_refused_address_is_refused_at_the_hop(serve):
    inner = serve(answer(b"internal secret"))
    outer = serve(redirect(f"http://127.0.0.2:{inner.port}/secret"))
    with pytest.raises(FetchError) as e:
        fetch(outer.url + "/", policy=LOOPBACK, deadline=3)
    assert e.value.reason == "refused: loopback address"
    assert "127.0.0.2" in str(e.value)
    assert inner.requests == []


def test_redirects_followed_within_the_policy(serve):
    inner = serve(answer(b"the page"))
    outer = serve(redirect(f"http://127.0.0.1:{inner.port}/page", "301 Moved Permanently"))
    r = fetch(outer.url + "/", policy=LOOPBACK, deadline=3)
    assert (r.status, r.body, r.url) == (200, b"the page", f"http://127.0.0.1:{inner.port}/page")
    loop = serve(redirect("/again"))
    with pytest.raises(FetchError, match="redirects"):
        fetch(loop.url + "/", policy=LOOPBACK, deadline=3, max_redirects=2)


def test_a_name_resolving_to_a_refused_address_is_refused_without_connecting(serve):
    server = serve(answer(b"secret"))
    with pytest.raises(FetchError) as e:
        fetch(f"http://rebind.test:{server.port}/", policy=NOTHING, deadline=3,
              resolver=lambda host, port: ["93.184.216.34", "127.0.0.1"])
    assert e.value.reason == "refused: loopback address"
    assert server.requests == []


def test_the_checked_address_is_the_one_connected_to(serve):
    server = serve(answer(b"via the checked address"))
    calls = []

    def resolver(host, port):
        calls.append(host)
        return ["127.0.0.1"]

    r = fetch(f"http://site.test:{server.port}/", policy=EgressPolicy.from_text("site.test"), deadline=3,
              resolver=resolver)
    assert r.body == b"via the checked address" and calls == ["site.test"]  # resolved once
    assert f"Host: site.test:{server.port}".encode() in server.requests[0]


def test_trickling_answer_is_cut_at_the_deadline(serve):
    server = serve(trickle(every=0.3, total=100))
    start = time.monotonic()
    with pytest.raises(FetchError) as e:
        fetch(server.url, policy=LOOPBACK, deadline=1.5)
    took = time.monotonic() - start
    assert e.value.reason == "timed out"
    assert 1.3 < took < 2.5


def test_headers_that_never_come_are_cut_at_the_deadline(serve):
    server = serve(lambda head, conn: time.sleep(5))
    start = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch(server.url, policy=LOOPBACK, deadline=1.0)
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("handler,reason", [
    (cut_chunked(), {"incomplete answer"}),
    (lambda head, conn: None, {"closed without an answer", "connection reset"}),  # a close or a reset
    (lambda head, conn: conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
     {"incomplete answer"}),
    (lambda head, conn: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"),
     {"incomplete answer"}),
    (lambda head, conn: conn.sendall(b"NOT HTTP AT ALL\r\n\r\n"), {"bad answer: BadStatusLine"}),
])
def test_transport_errors_become_reasons(serve, handler, reason):
    server = serve(handler)
    with pytest.raises(FetchError) as e:
        fetch(server.url, policy=LOOPBACK, deadline=3)
    assert e.value.reason in reason


def test_connection_refused_and_dns_failure_are_reasons():
    with pytest.raises(FetchError) as e:
        fetch(f"http://127.0.0.1:{closed_port()}/", policy=LOOPBACK, deadline=3)
    assert e.value.reason == "connection refused"

    def fail(host, port):
        raise OSError("no such name")

    with pytest.raises(FetchError) as e:
        fetch("http://no-such-host.test/", policy=NOTHING, deadline=3, resolver=fail)
    assert e.value.reason == "DNS lookup failed"


def test_slow_dns_is_bounded_by_the_deadline():
    start = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch("http://slow.test/", policy=NOTHING, deadline=0.5, resolver=lambda h, p: time.sleep(3) or ["8.8.8.8"])
    assert time.monotonic() - start < 1.0


def test_body_larger_than_the_limit_is_cut_and_marked(serve):
    server = serve(answer(b"x" * 10_000))
    r = fetch(server.url, policy=LOOPBACK, deadline=3, max_bytes=1000)
    assert len(r.body) == 1000 and r.truncated


@pytest.mark.parametrize("url", ["gopher://127.0.0.1/", "file:///etc/passwd", "ftp://example.com/"])
def test_only_http_and_https(url):
    with pytest.raises(FetchError) as e:
        fetch(url, policy=EgressPolicy(allow_private=True), deadline=1)
    assert e.value.reason == "refused: not an http(s) URL"


def test_post_sends_the_body(serve):
    server = serve(answer(b"", "204 No Content"))
    r = fetch(server.url + "/hook", policy=LOOPBACK, method="POST", body=b'{"a": 1}',
              headers={"Content-Type": "application/json"}, deadline=3, max_redirects=0)
    assert r.status == 204
    assert server.requests[0].startswith(b"POST /hook ") and server.requests[0].endswith(b'{"a": 1}')


def test_a_bad_allow_setting_is_one_line_with_the_fix():
    from tracker.settings import Settings, SettingsError

    assert Settings.load({"FPT_FETCH_ALLOW": "10.0.0.0/8,intranet"}).fetch_allow == "10.0.0.0/8,intranet"
    with pytest.raises(SettingsError, match="FPT_FETCH_ALLOW entry '10.0.0.0/40'.*10.0.0.0/8"):
        Settings.load({"FPT_FETCH_ALLOW": "10.0.0.0/40"})


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for site.test (openssl), and a client context that trusts it."""
    import shutil
    import ssl
    import subprocess

    from tests.conftest import need

    need(shutil.which("openssl") is not None, "openssl is not installed (apt-get install openssl)")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=site.test",
                    "-addext", "subjectAltName=DNS:site.test", "-keyout", str(d / "key.pem"), "-out",
                    str(d / "cert.pem")], check=True, capture_output=True)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(d / "cert.pem", d / "key.pem")
    return server, ssl.create_default_context(cafile=str(d / "cert.pem"))


def test_tls_goes_to_the_checked_address_with_the_real_name(serve, certificate):
    server_ctx, client_ctx = certificate
    server = serve(answer(b"over tls"), tls=server_ctx)
    policy = EgressPolicy.from_text("site.test,other.test")
    resolver = lambda host, port: ["127.0.0.1"]  # noqa: E731
    r = fetch(f"https://site.test:{server.port}/", policy=policy, deadline=3, resolver=resolver, context=client_ctx)
    assert (r.status, r.body) == (200, b"over tls")
    with pytest.raises(FetchError) as e:  # the certificate is checked for the name in the URL, not the address
        fetch(f"https://other.test:{server.port}/", policy=policy, deadline=3, resolver=resolver, context=client_ctx)
    assert e.value.reason.startswith("TLS error")
