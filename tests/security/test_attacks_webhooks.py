"""Attacks through webhooks, made as an organisation's admin ('eve' of 'east', signed in, and
east's write token) against real servers on loopback:

- a webhook at a loopback Redis-like port is refused when added, in the API and in the admin's
  form, and nothing connects to it;
- "Send a test" to a name that resolves to loopback connects nowhere, and says the same for a
  closed port as for a port where something answers: no port scanner;
- a receiver that cuts a chunked answer short: "Send a test" is no 500, and `fptrack notify
  send` (the installed command, in its own process) prints no traceback and still delivers
  another organisation's events."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.cli.terminal import clean_env, program
from tests.web.conftest import csrf_token, post
from tests.web.test_orgs import east, signed_in  # noqa: F401  (a fixture)
from tracker.context import Context
from tracker.followup.notify import record, subscribe
from tracker.settings import Settings
from tracker.store import Site
from tracker.store.followup import Event
from tracker.store.scoped import ScopedStore
from tracker.store.tenancy import Organisation
from tracker.tenancy.tokens import create_token

from .conftest import bearer
from .servers import answer, closed_port, cut_chunked

HOOK = {"channel": "webhook", "secret": "s3cret", "site": "dongcheng", "kinds": ["new-match"]}


@pytest.fixture
def eve(app, east):
    return signed_in(app, "eve")


@pytest.fixture
def east_write(east):
    _, token = create_token(east, "east", "write", "east's writer")
    return bearer(token)


def redis_like(serve):
    """Something on a loopback port that answers whatever it is sent, as Redis does."""
    return serve(answer(b"-ERR unknown command 'POST'\r\n", "200 OK", "Server: redis"))


def test_a_webhook_at_a_loopback_port_is_refused_in_the_api_and_the_form(app, eve, east, east_write, serve):
    redis = redis_like(serve)
    for url in (f"http://127.0.0.1:{redis.port}/", f"http://[::ffff:127.0.0.1]:{redis.port}/x",
                f"http://2130706433:{redis.port}/", f"http://0x7f.1:{redis.port}/"):
        r = app.test_client().post("/api/subscriptions", json={**HOOK, "target": url}, headers=east_write)
        assert r.status_code == 400 and "is a loopback address" in r.get_json()["message"], r.get_json()
        r = eve.post("/api/subscriptions", json={**HOOK, "target": url}, headers={"X-CSRFToken": csrf_token(eve, "/")})
        assert r.status_code == 400 and "is a loopback address" in r.get_json()["message"]
        r = post(eve, "/followup/subscriptions", {**HOOK, "target": url}, token_from="/followup/")
        assert r.status_code == 400 and "is a loopback address" in r.get_data(as_text=True)
    assert ScopedStore(east, "east").subscriptions() == [] and redis.requests == []


def _test_through_both(app, eve, east_write, sub_id: str) -> tuple[dict, str]:
    """(the API's answer, the form's flash line) of "Send a test"."""
    r = app.test_client().post(f"/api/subscriptions/{sub_id}/test", headers=east_write)
    assert r.status_code == 200, r.get_data(as_text=True)
    api = r.get_json()
    r = post(eve, f"/followup/subscriptions/{sub_id}/test", {}, token_from="/followup/")
    assert r.status_code == 302
    html = eve.get("/followup/").get_data(as_text=True)
    (flash,) = re.findall(r'<p class="flash error"[^>]*>(.*?)</p>', html, re.S)
    return api, flash


def test_send_a_test_is_no_port_scanner(app, eve, east, east_write, serve):
    open_port = redis_like(serve).port
    shut_port = closed_port()
    seen = {}
    for port in (open_port, shut_port):
        sub = subscribe(ScopedStore(east, "east"), "webhook", f"http://localhost:{port}/hook", secret="k",
                        site="dongcheng")
        api, flash = _test_through_both(app, eve, east_write, sub.id)
        assert api["delivered"] is False
        seen[port] = (api["detail"].replace(str(port), "PORT"), flash.replace(str(port), "PORT"))
    assert seen[open_port] == seen[shut_port], seen
    assert "loopback address" in seen[open_port][0]


@pytest.fixture
def two_organisations(tmp_path, serve, monkeypatch):
    """A home with two organisations, each with a site and a webhook on it: east's receiver cuts
    its chunked answer short, the default organisation's answers. One new match for each."""
    home = tmp_path / "home"
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    store = ctx.store
    store.upsert_org(Organisation("east"))
    for org, site in (("east", "dongcheng"), ("default", "biquge")):
        store.upsert_site(Site(name=site, start_urls=[f"https://{site}.example/"]))
        store.set_owner("site", site, org)
    cutter, good = serve(cut_chunked(b'{"ok": tr')), serve(answer(b"{}"))
    env = clean_env(FPT_HOME=str(home), FPT_FETCH_ALLOW="127.0.0.1/32")
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")  # for subscribe() here
    subscribe(ScopedStore(store, "east"), "webhook", cutter.url + "/east", secret="k", site="dongcheng")
    subscribe(ScopedStore(store, "default"), "webhook", good.url + "/default", secret="k", site="biquge")
    for site in ("dongcheng", "biquge"):
        record(store, Event(id=f"new-match:{site}", kind="new-match", site=site, summary="a copy"))
    ctx.close()
    return home, env, cutter, good


def test_notify_send_goes_on_to_another_organisations_deliveries(two_organisations):
    home, env, cutter, good = two_organisations
    r = subprocess.run([program("fptrack"), "notify", "send", "--attempts", "1"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert "incomplete answer" in r.stdout + r.stderr
    assert len(good.requests) == 1 and b'"site": "biquge"' in good.requests[0].split(b"\r\n\r\n", 1)[1]
    assert len(cutter.requests) == 1
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    by_event = {d.event: d.status for d in ctx.store.deliveries()}
    ctx.close()
    assert by_event == {"new-match:biquge": "sent", "new-match:dongcheng": "pending"}


def test_send_a_test_to_a_receiver_that_cuts_its_answer_is_no_500(app, eve, east, east_write, serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    cutter = serve(cut_chunked(b'{"ok": tr'))
    sub = subscribe(ScopedStore(east, "east"), "webhook", cutter.url + "/hook", secret="k", site="dongcheng")
    api, flash = _test_through_both(app, eve, east_write, sub.id)
    assert (api["delivered"], api["detail"]) == (False, "no answer: incomplete answer")
    assert "incomplete answer" in flash and "/hook" not in flash
