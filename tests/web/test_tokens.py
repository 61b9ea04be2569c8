"""API tokens: made in the admin or with `fptrack token create`, shown once, kept hashed,
sent as Bearer. No credentials is 401, a read token writing is 403, a token sees only its
organisation, a revoked token is refused at once, and its last use is recorded."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from fptrack.cli import main
from tracker.store import Store
from tracker.tenancy.tokens import create_token, token_hash

from .conftest import csrf_token, post
from .test_orgs import east  # noqa: F401  (a fixture)
from .test_routes import GET, fill_path


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tokens(store: Store):
    _, read = create_token(store, "default", "read", "reader")
    _, write = create_token(store, "default", "write", "writer")
    return {"read": read, "write": write}


STATUS = {"page": "https://biquge.example/1.html", "chapter": "山城旧事/第1章", "status": "confirmed"}


def test_no_credentials_on_the_api_is_401_for_every_api_route(client):
    for rule in sorted(GET):
        if rule.startswith("/api/"):
            path, query = fill_path(rule, GET[rule])
            r = client.get(path, query_string=query)
            assert r.status_code == 401, rule
    r = client.get("/api/works", headers=bearer("fpt_not-a-token"))
    assert r.status_code == 401 and "unknown or revoked token" in r.get_json()["message"]
    assert "Bearer" in r.headers.getlist("WWW-Authenticate")[-1]


def test_a_read_token_reads_and_cannot_write(client, store, tokens):
    r = client.get("/api/works", headers=bearer(tokens["read"]))
    assert r.status_code == 200 and [w["work"] for w in r.get_json()["works"]] == ["山城旧事"]
    assert "Set-Cookie" not in r.headers  # one call, no session
    r = client.post("/api/matches/status", json=STATUS, headers=bearer(tokens["read"]))
    assert r.status_code == 403 and "scope is read" in r.get_json()["message"]
    assert store.get_match(STATUS["page"], STATUS["chapter"]).status == "new"
    r = client.post("/api/check", json={"text": "雨"}, headers=bearer(tokens["read"]))  # reads only: allowed
    assert r.status_code == 200


def test_a_write_token_writes_without_a_csrf_token(client, store, tokens):
    r = client.post("/api/matches/status", json=STATUS, headers=bearer(tokens["write"]))
    assert r.status_code == 200, r.data
    m = store.get_match(STATUS["page"], STATUS["chapter"])
    assert m.status == "confirmed" and m.history[-1]["by"].startswith("token:")


def test_a_token_is_kept_hashed_its_use_recorded_and_revoking_it_ends_it(client, store, tokens):
    record = store.token_by_hash(token_hash(tokens["read"]))
    assert tokens["read"] not in repr(store.tokens()) and record.last_used is None
    client.get("/api/me", headers=bearer(tokens["read"]))
    assert store.token_by_hash(token_hash(tokens["read"])).last_used is not None
    store.delete_token(record.id)
    assert client.get("/api/works", headers=bearer(tokens["read"])).status_code == 401


def test_guessing_tokens_blocks_the_address_for_a_while(store, settings, tokens):
    from web import create_app

    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings, "STORE": store,
                      "LOGIN_IP_MAX_FAILURES": 3})
    client = app.test_client()
    for i in range(3):
        assert client.get("/api/works", headers=bearer(f"fpt_guess{i}")).status_code == 401
    r = client.get("/api/works", headers=bearer(tokens["read"]))  # even the right one, for a while
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def test_a_token_is_only_for_the_api(client, tokens):
    r = client.get("/works/", headers=bearer(tokens["write"]))
    assert r.status_code == 302 and "/login" in r.headers["Location"]


def test_a_token_sees_only_its_organisation(client, east):
    _, token = create_token(east, "east", "write")
    works = client.get("/api/works", headers=bearer(token)).get_json()["works"]
    assert [w["work"] for w in works] == ["东城"]
    for path, query in (("/api/works/山城旧事", {}), ("/api/sites/view", {"name": "biquge"}),
                        ("/api/matches/view", {"page_key": STATUS["page"], "chapter": STATUS["chapter"]})):
        assert client.get(path, query_string=query, headers=bearer(token)).status_code == 404, path
    r = client.post("/api/matches/status", json=STATUS, headers=bearer(token))
    assert r.status_code == 404
    assert east.get_match(STATUS["page"], STATUS["chapter"]).status == "new"


def test_tokens_are_made_and_revoked_in_the_admin_and_shown_once(admin, store):
    r = post(admin, "/tokens/", {"scope": "read", "name": "ci"}, token_from="/tokens/")
    html = r.get_data(as_text=True)
    assert r.status_code == 201
    token = re.search(r'<pre id="new-token">(fpt_[^<]+)</pre>', html).group(1)
    record = store.token_by_hash(token_hash(token))
    assert (record.scope, record.org, record.name, record.created_by) == ("read", "default", "ci", "admin")
    listing = admin.get("/tokens/").get_data(as_text=True)
    assert record.id in listing and token not in listing  # shown once
    assert admin.get("/api/works", headers=bearer(token)).status_code == 200
    r = post(admin, f"/tokens/{record.id}/revoke", {}, token_from="/tokens/")
    assert r.status_code == 302 and record.id not in [t.id for t in store.tokens()]
    assert post(admin, f"/tokens/{record.id}/revoke", {}, token_from="/tokens/").status_code == 404


def test_a_viewer_makes_no_token_and_an_admin_only_its_organisations(app, viewer, store, east):
    assert post(viewer, "/tokens/", {"scope": "write"}, token_from="/tokens/").status_code == 403
    from .test_orgs import signed_in

    eve = signed_in(app, "eve")
    r = post(eve, "/tokens/", {"scope": "write", "org": "default"}, token_from="/tokens/")
    assert r.status_code == 201 and [t.org for t in store.tokens() if t.created_by == "eve"] == ["east"]
    assert "t-sample" not in eve.get("/tokens/").get_data(as_text=True)
    r = eve.post("/tokens/t-sample/revoke", data={"csrf_token": csrf_token(eve, "/tokens/")})
    assert r.status_code == 404 and "t-sample" in [t.id for t in store.tokens()]


def test_token_commands(settings):
    runner = CliRunner()
    assert runner.invoke(main, ["org", "add", "north"]).exit_code == 0
    r = runner.invoke(main, ["token", "create", "--org", "north", "--scope", "write", "--name", "uploader"])
    assert r.exit_code == 0, r.output
    token = r.output.strip().splitlines()[-1]
    assert token.startswith("fpt_") and " " not in token
    r = runner.invoke(main, ["token", "list"])
    tid = token_hash(token)[:12]
    assert tid in r.output and "north" in r.output and "uploader" in r.output and token not in r.output
    r = runner.invoke(main, ["token", "create", "--org", "nowhere", "--scope", "read"])
    assert r.exit_code != 0 and "nowhere" in r.output
    assert runner.invoke(main, ["token", "create", "--scope", "admin"]).exit_code != 0
    assert runner.invoke(main, ["token", "revoke", tid]).exit_code == 0
    assert "no tokens yet" in runner.invoke(main, ["token", "list"]).output
    r = runner.invoke(main, ["token", "revoke", tid])
    assert r.exit_code != 0 and "not found" in r.output
    for args in (["token", "--help"], ["token", "create", "--help"], ["token", "list", "--help"],
                 ["token", "revoke", "--help"]):
        assert "Example:" in runner.invoke(main, args).output
