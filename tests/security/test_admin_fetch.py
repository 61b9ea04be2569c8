"""The admin's fetches (a site's preview, /api/check-url) under the egress policy: a redirect
from an allowed page to an internal one is refused at the hop, viewers cannot make the server
fetch, and a slow site is cut at the deadline."""
from __future__ import annotations

import time

import pytest

from .conftest import bearer
from .servers import answer, redirect, trickle

PAGE = "<html><head><title>第一章</title></head><body><div id='content'>" + "山城的雨下了三天。" * 40 + "</div></body></html>"


@pytest.fixture
def internal(serve):
    """The internal page: on 127.0.0.2, which the allow list (127.0.0.1/32) does not name."""
    return serve(answer("<html><body><div id='content'>INTERNAL SECRET 内部资料</div></body></html>".encode()),
                 host="127.0.0.2")


@pytest.fixture
def allowed(monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")


def test_a_redirect_to_an_internal_page_is_refused_in_check_url(client, tokens, serve, internal, allowed):
    outer = serve(redirect(f"{internal.url}/secret"))
    r = client.post("/api/check-url", json={"url": outer.url + "/chapter.html"}, headers=bearer(tokens["write"]))
    assert r.status_code == 400
    message = r.get_json()["message"]
    assert f"refused to fetch {internal.url}/secret: 127.0.0.2 is a loopback address; " \
           "allow it with FPT_FETCH_ALLOW=127.0.0.2/32" in message
    assert "INTERNAL SECRET" not in r.get_data(as_text=True)
    assert internal.requests == [] and len(outer.requests) == 1


def test_a_redirect_to_an_internal_page_is_refused_in_a_preview(client, tokens, serve, internal, allowed):
    outer = serve(redirect(f"{internal.url}/secret", "301 Moved Permanently"))
    r = client.post("/api/sites", json={"url": outer.url + "/book/", "name": "sample"}, headers=bearer(tokens["write"]))
    assert r.status_code == 201, r.get_json()
    r = client.post("/api/sites/sample/preview", json={"url": outer.url + "/1.html"}, headers=bearer(tokens["write"]))
    assert r.status_code == 400 and "127.0.0.2 is a loopback address" in r.get_json()["message"]
    assert "INTERNAL SECRET" not in r.get_data(as_text=True) and internal.requests == []


def test_an_allowed_page_is_still_previewed(client, tokens, serve, allowed):
    site = serve(answer(PAGE.encode()))
    r = client.post("/api/check-url", json={"url": site.url + "/1.html"}, headers=bearer(tokens["write"]))
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["chars"] > 100


def test_fetch_private_keeps_allowing_every_private_address(app, client, tokens, serve, internal):
    app.config["FETCH_PRIVATE"] = True
    r = client.post("/api/check-url", json={"url": internal.url + "/secret"}, headers=bearer(tokens["write"]))
    assert r.status_code == 200 and len(internal.requests) == 1


def test_viewers_and_read_tokens_cannot_make_the_server_fetch(app, viewer, tokens, serve, allowed):
    site = serve(answer(PAGE.encode()))
    r = app.test_client().post("/api/check-url", json={"url": site.url + "/1.html"}, headers=bearer(tokens["read"]))
    assert r.status_code == 403 and "viewers cannot make the server fetch" in r.get_json()["message"]
    from tests.web.conftest import csrf_token

    r = viewer.post("/api/check-url", json={"url": site.url + "/1.html"},
                    headers={"X-CSRFToken": csrf_token(viewer, "/sites/")})
    assert r.status_code == 403
    assert site.requests == []


def test_a_slow_site_is_cut_at_the_deadline(app, client, tokens, serve, allowed):
    app.config["FETCH_DEADLINE"] = 1.5
    slow = serve(trickle(every=0.5, total=500))
    start = time.monotonic()
    r = client.post("/api/check-url", json={"url": slow.url + "/1.html"}, headers=bearer(tokens["write"]))
    took = time.monotonic() - start
    assert r.status_code == 400 and "timed out after 1.5 s" in r.get_json()["message"]
    assert took < 2.5
