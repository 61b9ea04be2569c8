"""Every route of the app is exercised here: each GET answers an admin and a viewer, and
each POST that changes something is refused to a viewer. A new route without a sample
below fails the first test, so it cannot be added untested."""
import io

import pytest

from tracker.followup.notify import subscribe
from tracker.settings import Settings
from tracker.store.followup import subscription_id
from web import create_app

from .conftest import csrf_token, login

M1 = {"page_key": "https://biquge.example/1.html", "chapter": "山城旧事/第1章"}
I1 = {"image": "https://img.biquge.example/c/1.jpg", "original": "山城旧事/cover.png"}

GET = {
    "/": {}, "/login": {}, "/works/": {}, "/works/<work_id>": {"work_id": "山城旧事"}, "/sites/": {},
    "/sites/view": {"name": "biquge"}, "/matches/": {}, "/matches/view": M1, "/takedown": {"work": "山城旧事"},
    "/takedown.txt": {"site": "biquge"}, "/search": {"q": "biquge"}, "/check": {},
    "/export/<name>.<fmt>": {"name": "matches", "fmt": "csv"},
    "/api/export/<name>.<fmt>": {"name": "works", "fmt": "json"},
    "/api/me": {}, "/api/dashboard": {}, "/api/works": {}, "/api/works/<work_id>": {"work_id": "山城旧事"},
    "/api/sites": {}, "/api/sites/view": {"name": "biquge"}, "/api/matches": {}, "/api/matches/view": M1,
    "/api/takedown": {"site": "biquge"}, "/api/search": {"q": "1.html"}, "/healthz": {},
    "/images/": {"work": "山城旧事"}, "/images/view": I1, "/images/file/<kind>": {"kind": "found", "key": I1["image"]},
    "/images/picture": {"key": I1["image"]},
    "/api/images": {"site": "biquge"}, "/api/images/view": I1,
    "/followup/": {}, "/api/followup": {"site": "biquge"}, "/api/subscriptions": {},
    "/evidence/package": {"page_key": M1["page_key"]}, "/api/evidence/public-key": {},
    "/api/evidence/package": {"page_key": M1["page_key"]},
    "/works/<work_id>/chapters": {"work_id": "山城旧事"}, "/works/<work_id>/remove": {"work_id": "山城旧事"},
    "/api/works/<work_id>/chapters": {"work_id": "山城旧事"},
    "/sites/manage": {"name": "biquge"}, "/api/sites/<name>/crawl": {"name": "biquge"},
    "/orgs/": {},
    "/tokens/": {},
    "/users/": {}, "/users/view": {"name": "viewer"}, "/users/remove": {"name": "viewer"},
    "/api/users": {}, "/api/users/<name>": {"name": "viewer"},
    "/api/openapi.json": {},
    "/discovery/": {}, "/discovery/runs/<int:run_id>": {"int:run_id": "1"}, "/api/discovery/runs": {},
    "/api/discovery/runs/<int:run_id>": {"int:run_id": "1"},
}
# GETs a viewer is refused (403): the users' pages are for admins and operators
ADMIN_ONLY_GET = {"/users/", "/users/view", "/users/remove", "/api/users", "/api/users/<name>"}
# POSTs that change data (admin only), with a body that would succeed for an admin
CHANGES = {
    "/matches/status": {"match": '["https://biquge.example/1.html", "山城旧事/第1章"]', "status": "confirmed"},
    "/takedown/sent": {"work": "山城旧事"},
    "/api/matches/status": {"page": M1["page_key"], "chapter": M1["chapter"], "status": "confirmed"},
    "/api/takedown/sent": {"work": "山城旧事"},
    "/images/status": {**I1, "status": "confirmed"},
    "/api/images/status": {**I1, "status": "confirmed"},
    # uploads: a function gives a fresh file for each request (a multipart form)
    "/works/": lambda: {"title": "雨夜", "file": (io.BytesIO("第一章 雨夜\n山城的雨下了一夜。".encode()), "b.txt")},
    "/api/works": lambda: {"title": "雨夜", "file": (io.BytesIO("第一章 雨夜\n山城的雨下了一夜。".encode()), "b.txt")},
    "/works/<work_id>/remove": {"work_id": "山城旧事", "confirm": "山城旧事"},
    "/tokens/": {"scope": "read", "name": "ci"},
    "/tokens/<token_id>/revoke": {"token_id": "t-sample"},
    "/users/": {"name": "nina", "role": "viewer", "generate": "1"},
    "/users/role": {"name": "viewer", "role": "admin"},
    "/users/password": {"name": "viewer"},
    "/users/remove": {"name": "viewer", "confirm": "viewer"},
    "/api/users": {"name": "nina", "role": "viewer"},
    "/api/users/<name>/password": {"name": "viewer"},
    # sites: "query" is the query string
    "/sites/": {"url": "https://newsite.example/book/1/"},
    "/sites/manage": {"query": {"name": "biquge"}, "flags": "1", "start_urls": "https://biquge.example/",
                      "action": "save"},
    "/sites/crawl": {"query": {"name": "biquge"}, "action": "pause"},
    "/api/sites": {"url": "https://newsite.example/"},
    "/api/sites/<name>/preview": {"name": "biquge", "rules": {"start_urls": ["https://biquge.example/"]},
                                  "html": "<html><body><div id=c>山城的雨下了整整一夜。</div></body></html>"},
    "/api/sites/<name>/crawl": {"name": "biquge"},  # the child finds no such site in its store: it ends at once
    "/api/sites/<name>/pause": {"name": "biquge"},
    # discovery: without a search API the form says so (302 back to the page); dry_run needs none
    "/discovery/start": {"work": "山城旧事"},
    "/api/works/<work_id>/discover": {"work_id": "山城旧事", "dry_run": True},
    "/followup/subscriptions": {"channel": "email", "target": "rights@example.com", "work": "山城旧事",
                                "kinds": "new-match"},
    "/api/subscriptions": {"channel": "email", "target": "rights@example.com", "work": "山城旧事"},
    "/followup/subscriptions/<sub_id>/remove": {"sub_id": subscription_id("email", "rights@example.com", "山城旧事")},
    # a test with no SMTP server set: answered at once with why nothing was sent
    "/followup/subscriptions/<sub_id>/test": {"sub_id": subscription_id("email", "rights@example.com", "山城旧事")},
    "/api/subscriptions/<sub_id>/test": {"sub_id": subscription_id("email", "rights@example.com", "山城旧事")},
}
# Records a change needs, made in the store before it is tried
BEFORE = {rule: lambda store: subscribe(store, "email", "rights@example.com", work="山城旧事")
          for rule in ("/followup/subscriptions/<sub_id>/remove", "/followup/subscriptions/<sub_id>/test",
                       "/api/subscriptions/<sub_id>/test")}
READ_ONLY_POSTS = {"/login", "/logout", "/check", "/api/check", "/api/check-url"}
# POSTs only an operator may make (tests/web/test_orgs.py makes them)
OPERATOR_POSTS = {"/orgs/": {"name": "east"}, "/orgs/assign": {"kind": "work", "key": "山城旧事", "org": "east"}}


def rules():
    app = create_app({"SECRET_KEY": "k", "STORE": object(), "SETTINGS": Settings()})  # the store is never used
    return [r for r in app.url_map.iter_rules() if r.endpoint != "static"]


def fill_path(rule: str, sample: dict) -> tuple[str, dict]:
    path, query = rule, dict(sample)
    for key in list(query):
        if f"<{key}>" in path:
            path = path.replace(f"<{key}>", query.pop(key))
    return path, query


def test_every_route_has_a_sample():
    for r in rules():
        if "GET" in r.methods:
            assert r.rule in GET, f"add a sample for GET {r.rule}"
        if "POST" in r.methods:
            assert r.rule in CHANGES or r.rule in READ_ONLY_POSTS or r.rule in OPERATOR_POSTS, \
                f"add a sample for POST {r.rule}"


@pytest.mark.parametrize("who", ["admin", "viewer"])
@pytest.mark.parametrize("rule", sorted(GET))
def test_every_get_route_answers(request, who, rule):
    client = request.getfixturevalue(who)
    path, query = fill_path(rule, GET[rule])
    r = client.get(path, query_string=query)
    expected = 403 if who == "viewer" and rule in ADMIN_ONLY_GET else 200
    assert r.status_code == expected, (rule, r.status_code, r.get_data(as_text=True)[:300])
    r.close()


def change(client, rule: str):
    token = csrf_token(client, "/")
    if callable(CHANGES[rule]):
        return client.post(rule, data={**CHANGES[rule](), "csrf_token": token}, content_type="multipart/form-data")
    path, body = fill_path(rule, CHANGES[rule])
    query = body.pop("query", {})
    if rule.startswith("/api/"):
        return client.post(path, json=body, headers={"X-CSRFToken": token}, query_string=query)
    return client.post(path, data={**body, "csrf_token": token}, query_string=query)


@pytest.mark.parametrize("rule", sorted(CHANGES))
def test_every_change_is_refused_to_viewers_and_allowed_to_admins(app, store, rule):
    viewer, admin = app.test_client(), app.test_client()
    BEFORE.get(rule, lambda store: None)(store)
    assert login(viewer, "viewer").status_code == 302 and login(admin, "admin").status_code == 302
    assert change(viewer, rule).status_code == 403
    assert store.get_match(M1["page_key"], M1["chapter"]).history == []
    assert change(admin, rule).status_code in (200, 201, 202, 302)


def test_health_check_needs_no_sign_in_and_reports_a_store_that_is_down(app):
    r = app.test_client().get("/healthz")
    assert (r.status_code, r.get_data(as_text=True)) == (200, "ok")

    class Down:
        def counts(self):
            from tracker.store import StoreError

            raise StoreError("MongoDB at mongodb://mongo:27017 failed: connection refused")

    broken = create_app({"SECRET_KEY": "k", "STORE": Down(), "SETTINGS": Settings()})
    r = broken.test_client().get("/healthz")
    assert r.status_code == 503 and "Traceback" not in r.get_data(as_text=True)
