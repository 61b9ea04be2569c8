"""Attacks on the admin's fetches, made as an organisation's admin (a write token of another
organisation than the default) against real servers on loopback, where the operator has allowed
one loopback port (FPT_FETCH_ALLOW=127.0.0.1:PORT), as the walk-through's sample site needs:
a redirect from that port to another port of the same address (a Redis, an admin console) is
refused at the hop, in /api/check-url and in a site's preview; a trickling page is cut at the
deadline in a preview as in check-url."""
from __future__ import annotations

import asyncio
import time

import pytest

from tracker.egress import EgressPolicy, FetchError, fetch
from tracker.egress.policy import parse_allow
from tracker.store.tenancy import Organisation
from tracker.tenancy.tokens import create_token

from .conftest import bearer
from .servers import AdminServer, answer, redirect, trickle

PAGE = "<html><head><title>第一章</title></head><body><div id='content'>" + "山城的雨下了三天。" * 40 + "</div></body></html>"
SECRET = "<html><body><div id='content'>INTERNAL SECRET 内部资料</div></body></html>"


@pytest.fixture
def east_write(store):
    """A write token of the organisation 'east', whose admin is the attacker."""
    store.upsert_org(Organisation("east"))
    _, token = create_token(store, "east", "write", "east's writer")
    return bearer(token)


@pytest.fixture
def one_port(serve, monkeypatch):
    """(the allowed site, the internal server): both on 127.0.0.1; only the site's port allowed."""
    internal = serve(answer(SECRET.encode()))
    site = serve(redirect(f"http://127.0.0.1:{internal.port}/secret"))
    monkeypatch.setenv("FPT_FETCH_ALLOW", f"127.0.0.1:{site.port}")
    return site, internal


def test_check_url_refuses_a_redirect_to_another_port_of_the_allowed_address(client, east_write, one_port):
    site, internal = one_port
    r = client.post("/api/check-url", json={"url": site.url + "/chapter.html"}, headers=east_write)
    assert r.status_code == 400, r.get_data(as_text=True)
    assert f"refused to fetch http://127.0.0.1:{internal.port}/secret: 127.0.0.1 is a loopback address" \
        in r.get_json()["message"]
    assert "INTERNAL SECRET" not in r.get_data(as_text=True)
    assert internal.requests == [] and len(site.requests) == 1  # the allowed hop was made, the next one not


def test_a_preview_refuses_a_redirect_to_another_port_of_the_allowed_address(client, east_write, one_port):
    site, internal = one_port
    r = client.post("/api/sites", json={"url": site.url + "/book/", "name": "east-sample"}, headers=east_write)
    assert r.status_code == 201, r.get_json()
    r = client.post("/api/sites/east-sample/preview", json={"url": site.url + "/1.html"}, headers=east_write)
    assert r.status_code == 400 and "127.0.0.1 is a loopback address" in r.get_json()["message"]
    assert "INTERNAL SECRET" not in r.get_data(as_text=True) and internal.requests == []


def test_the_allowed_port_itself_is_fetched(client, east_write, serve, monkeypatch):
    site = serve(answer(PAGE.encode()))
    monkeypatch.setenv("FPT_FETCH_ALLOW", f"127.0.0.1:{site.port}")
    r = client.post("/api/check-url", json={"url": site.url + "/1.html"}, headers=east_write)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["chars"] > 100


def test_a_preview_of_a_trickling_page_is_cut_at_the_deadline(app, client, east_write, serve, monkeypatch):
    app.config["FETCH_DEADLINE"] = 1.5
    slow = serve(trickle(every=0.5, total=500))
    monkeypatch.setenv("FPT_FETCH_ALLOW", f"127.0.0.1:{slow.port}")
    assert client.post("/api/sites", json={"url": slow.url + "/book/", "name": "slow"},
                       headers=east_write).status_code == 201
    start = time.monotonic()
    r = client.post("/api/sites/slow/preview", json={"url": slow.url + "/1.html"}, headers=east_write)
    took = time.monotonic() - start
    assert r.status_code == 400 and "timed out after 1.5 s" in r.get_json()["message"]
    assert took < 2.5


def test_a_port_entry_allows_that_port_only(serve):
    internal = serve(answer(SECRET.encode()))
    other = serve(answer(PAGE.encode()))
    policy = EgressPolicy.from_text(f"127.0.0.1:{other.port}")
    assert fetch(f"http://127.0.0.1:{other.port}/", policy=policy, deadline=3).status == 200
    for url in (f"http://127.0.0.1:{internal.port}/", f"http://[::ffff:127.0.0.1]:{internal.port}/",
                f"http://2130706433:{internal.port}/", f"http://localhost:{internal.port}/"):
        with pytest.raises(FetchError, match=r"127\.0\.0\.1\)? is a loopback address"):
            fetch(url, policy=policy, deadline=3)
    assert internal.requests == []


def test_port_entries_are_read_and_bad_ones_named():
    networks, hosts, ports = parse_allow("10.0.0.0/8, 127.0.0.1:8000, [::1]:9000, 192.168.0.0/16:443, ::1")
    assert [str(n) for n in networks] == ["10.0.0.0/8", "::1/128"] and hosts == frozenset()
    assert [(str(n), p) for n, p in ports] == [("127.0.0.1/32", 8000), ("::1/128", 9000), ("192.168.0.0/16", 443)]
    for bad, said in (("127.0.0.1:0", "has a bad port"), ("127.0.0.1:99999", "has a bad port"),
                      ("127.0.0.1:http", "has a bad port"), ("intranet.example:80", "not on a host name")):
        with pytest.raises(ValueError, match=said):
            parse_allow(bad)


def test_an_unknown_port_is_not_allowed_by_a_port_entry():
    """Where the port is not known (a name resolved alone), a port entry allows nothing."""
    from tracker.egress import parse_ip

    policy = EgressPolicy.from_text("127.0.0.1:8000")
    loopback = parse_ip("127.0.0.1")
    assert policy.why_not(loopback, port=8000) == ""
    assert policy.why_not(loopback, port=6379) == policy.why_not(loopback) == "loopback"


def test_the_crawlers_middleware_refuses_another_port_of_the_allowed_address():
    from scrapy import Request

    from crawler.middlewares.egress import EgressMiddleware, RefusedRequest

    mw = EgressMiddleware(EgressPolicy.from_text("127.0.0.1:8000"))
    assert asyncio.run(mw.process_request(Request("http://127.0.0.1:8000/book/"))) is None
    with pytest.raises(RefusedRequest, match="127.0.0.1 is a loopback address"):
        asyncio.run(mw.process_request(Request("http://127.0.0.1:6379/")))


def test_four_trickling_check_urls_at_once_leave_healthz_fast(app, east_write, serve, monkeypatch):
    """The server has 4 threads: four fetches of a page that trickles a byte every second hold
    them for the deadline (2 s) at most, not for the trickle's 200 s."""
    import http.client
    import json
    import threading

    app.config["FETCH_DEADLINE"] = 2.0
    slow = serve(trickle(every=1.0, total=200))
    monkeypatch.setenv("FPT_FETCH_ALLOW", f"127.0.0.1:{slow.port}")
    server = AdminServer(app)

    def call(method: str, path: str, headers: dict, body: bytes | None = None) -> tuple[int, bytes, float]:
        start = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, data, time.monotonic() - start

    body = json.dumps({"url": slow.url + "/1.html"}).encode()
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(
        call("POST", "/api/check-url", {**east_write, "Content-Type": "application/json"}, body))) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)
        status, _, healthz = call("GET", "/healthz", {})
        for t in threads:
            t.join(30)
    finally:
        server.close()
    assert status == 200 and healthz < 3.0
    assert len(results) == 4
    for code, data, took in results:
        assert code == 400 and "timed out after 2 s" in json.loads(data)["message"] and took < 3.5
