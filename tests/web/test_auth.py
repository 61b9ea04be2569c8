"""Sign-in, sessions, CSRF, roles, lockout and the API's Basic auth."""
import base64
import html
import re
from datetime import UTC, datetime

import pytest
from werkzeug.security import generate_password_hash

from tracker.store import User
from web import create_app

from .conftest import PASSWORD, csrf_token, login, post

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")
T0_FAR = datetime(2999, 1, 1, tzinfo=UTC)


def basic(name: str, password: str = PASSWORD) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def refusal(response) -> str:
    """The error a sign-in page shows."""
    m = re.search(r'<p class="flash error" role="alert">(.*?)</p>', response.get_data(as_text=True))
    assert m, "no error on the sign-in page"
    return html.unescape(m.group(1))


REFUSED = "Wrong name or password (after 5 failed sign-ins in a row an account is locked for 15 minutes)."


@pytest.mark.parametrize("path", ["/", "/works/", "/works/山城旧事", "/sites/", "/sites/view?name=biquge",
                                  "/matches/", "/takedown", "/search?q=x", "/check", "/export/matches.csv",
                                  "/no-such-page"])
def test_every_page_needs_a_sign_in(client, path):
    r = client.get(path)
    assert r.status_code == 302 and r.headers["Location"].startswith("/login?next=")


@pytest.mark.parametrize("path", ["/api/me", "/api/dashboard", "/api/matches", "/api/export/matches.csv"])
def test_api_without_credentials_is_401_json(client, path):
    r = client.get(path)
    assert r.status_code == 401 and r.is_json and r.json["error"] == "unauthorized"
    assert r.headers["WWW-Authenticate"].startswith("Basic")


def test_login_page_and_static_are_public(client):
    assert client.get("/login").status_code == 200
    r = client.get("/static/style.css")
    assert r.status_code == 200 and b"--accent" in r.data
    r.close()


def test_login_goes_to_next_and_logout_ends_the_session(client):
    token = csrf_token(client)
    r = client.post("/login", data={"name": "admin", "password": PASSWORD, "csrf_token": token,
                                    "next": "/works/"})
    assert r.status_code == 302 and r.headers["Location"] == "/works/"
    assert client.get("/works/").status_code == 200
    r = post(client, "/logout", {})
    assert r.status_code == 302 and r.headers["Location"] == "/login"
    assert client.get("/works/").status_code == 302


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:x"])
def test_login_never_redirects_off_site(client, target):
    token = csrf_token(client)
    r = client.post("/login", data={"name": "admin", "password": PASSWORD, "csrf_token": token, "next": target})
    assert r.status_code == 302 and r.headers["Location"] == "/"


def test_wrong_password_and_unknown_user_get_the_same_answer(client):
    a = login(client, "admin", "wrong password")
    b = login(client, "nobody", "wrong password")
    assert a.status_code == b.status_code == 401
    assert refusal(a) == refusal(b) == REFUSED


def test_every_failed_sign_in_says_the_same_so_names_stay_secret(client, store):
    answers = {"unknown": login(client, "nobody", "bad")}
    for i in range(4):
        answers[f"wrong {i + 1}"] = login(client, "viewer", "bad")
    answers["wrong, now locked"] = login(client, "viewer", "bad")
    answers["locked, right password"] = login(client, "viewer", PASSWORD)
    answers["locked, wrong password"] = login(client, "viewer", "bad")
    assert store.get_user("viewer").locked_until is not None
    assert {(r.status_code, refusal(r)) for r in answers.values()} == {(401, REFUSED)}, {
        k: refusal(r) for k, r in answers.items()}
    json_answers = {client.get("/api/me", headers=basic(name, pw)).json["message"]
                    for name, pw in (("nobody", "bad"), ("viewer", "bad"), ("viewer", PASSWORD), ("admin", "bad"))}
    assert json_answers == {REFUSED[0].lower() + REFUSED[1:-1]}


def test_a_locked_or_unknown_account_still_costs_a_password_check(client, store, monkeypatch):
    import web.auth.accounts

    checked = []
    real = web.auth.accounts.check_password_hash
    monkeypatch.setattr(web.auth.accounts, "check_password_hash", lambda h, p: checked.append(h) or real(h, p))
    login(client, "nobody", "bad")
    u = store.get_user("viewer")
    u.locked_until = T0_FAR
    store.upsert_user(u)
    login(client, "viewer", PASSWORD)
    assert len(checked) == 2  # the decoy, then the locked account's own hash: the same time as a real check


def test_session_cookie_is_httponly_and_samesite_lax(client):
    r = login(client, "admin")
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_secure_cookie_is_configurable(store, settings):
    app = create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store, "SESSION_COOKIE_SECURE": True})
    r = login(app.test_client(), "admin")
    assert "Secure" in r.headers["Set-Cookie"]


def test_security_headers_forbid_scripts_and_framing(admin):
    r = admin.get("/")
    assert "script-src" not in r.headers["Content-Security-Policy"]  # default-src 'none' covers scripts
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Frame-Options"] == "DENY" and r.headers["Referrer-Policy"] == "no-referrer"


def test_post_without_csrf_token_is_400(admin):
    r = admin.post("/matches/status", data={"match": '["%s", "%s"]' % M1, "status": "confirmed"})
    assert r.status_code == 400 and b"CSRF" in r.data
    r = admin.post("/logout")
    assert r.status_code == 400


def test_login_post_without_csrf_token_is_400(client):
    r = client.post("/login", data={"name": "admin", "password": PASSWORD})
    assert r.status_code == 400


def test_viewer_reads_but_gets_403_on_every_change(viewer, store):
    assert viewer.get("/matches/").status_code == 200
    r = post(viewer, "/matches/status", {"match": '["%s", "%s"]' % M1, "status": "confirmed"})
    assert r.status_code == 403 and b"viewers can read" in r.data
    assert store.get_match(*M1).status == "new"
    assert post(viewer, "/takedown/sent", {"work": "山城旧事"}).status_code == 403
    # searching and checking a text change nothing: viewers may
    assert post(viewer, "/check", {"text": "一段没有注册过的文字"}).status_code == 200
    assert post(viewer, "/logout", {}).status_code == 302


def test_viewer_sees_no_status_buttons(viewer):
    html = viewer.get("/matches/view", query_string={"page_key": M1[0], "chapter": M1[1]}).get_data(as_text=True)
    assert 'action="/matches/status"' not in html
    assert 'name="match"' not in viewer.get("/matches/").get_data(as_text=True)


def test_account_locks_after_five_failures_even_for_the_right_password(client, store):
    for _i in range(4):
        assert login(client, "viewer", "bad").status_code == 401
    assert store.get_user("viewer").failed_logins == 4
    r = login(client, "viewer", "bad")
    assert r.status_code == 401 and refusal(r) == REFUSED
    assert store.get_user("viewer").locked_until is not None
    r = login(client, "viewer", PASSWORD)
    assert r.status_code == 401 and refusal(r) == REFUSED
    assert client.get("/").status_code == 302  # still signed out


def test_successful_login_resets_the_failure_count(client, store):
    login(client, "viewer", "bad")
    assert store.get_user("viewer").failed_logins == 1
    assert login(client, "viewer").status_code == 302
    assert store.get_user("viewer").failed_logins == 0


def test_address_limit_answers_429_before_checking_passwords(store, settings):
    app = create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store, "LOGIN_IP_MAX_FAILURES": 3})
    c = app.test_client()
    for name in ("a", "b", "c"):  # different accounts: only the address limit applies
        assert login(c, name, "bad").status_code == 401
    r = login(c, "admin")
    assert r.status_code == 429 and b"Too many failed sign-ins" in r.data
    r = c.get("/api/me", headers=basic("admin"))
    assert r.status_code == 429 and "Retry-After" in r.headers


def test_changing_the_password_ends_old_sessions(admin, store):
    assert admin.get("/").status_code == 200
    u = store.get_user("admin")
    u.password_hash = generate_password_hash("another password 1", "pbkdf2:sha256:1000")
    store.upsert_user(u)
    assert admin.get("/").status_code == 302


def test_removed_user_is_signed_out(viewer, store):
    store.delete_user("viewer")
    assert viewer.get("/").status_code == 302


def test_role_change_applies_at_once(viewer, store):
    u = store.get_user("viewer")
    u.role = "admin"
    store.upsert_user(u)
    r = post(viewer, "/matches/status", {"match": '["%s", "%s"]' % M1, "status": "confirmed"})
    assert r.status_code == 302


def test_basic_auth_reads_the_api_without_a_cookie(client):
    r = client.get("/api/me", headers=basic("viewer"))
    assert r.status_code == 200 and r.json["name"] == "viewer" and r.json["role"] == "viewer"
    assert "Set-Cookie" not in r.headers


def test_basic_auth_is_only_for_the_api(client):
    r = client.get("/works/", headers=basic("admin"))
    assert r.status_code == 302


def test_basic_auth_with_a_wrong_password_is_401_and_counts(client, store):
    r = client.get("/api/me", headers=basic("admin", "nope"))
    assert r.status_code == 401 and r.json["message"].startswith("wrong name or password")
    assert store.get_user("admin").failed_logins == 1


def test_api_post_with_basic_auth_needs_no_csrf_token(client, store):
    r = client.post("/api/matches/status", headers=basic("admin"),
                    json={"page": M1[0], "chapter": M1[1], "status": "confirmed"})
    assert r.status_code == 200, r.data
    assert store.get_match(*M1).status == "confirmed"
    assert store.get_match(*M1).history[-1]["by"] == "admin"


def test_api_post_with_the_session_needs_the_csrf_header(admin, store):
    body = {"page": M1[0], "chapter": M1[1], "status": "dismissed"}
    assert admin.post("/api/matches/status", json=body).status_code == 400
    token = admin.get("/api/me").json["csrf_token"]
    r = admin.post("/api/matches/status", json=body, headers={"X-CSRFToken": token})
    assert r.status_code == 200 and store.get_match(*M1).status == "dismissed"


def test_api_post_by_a_viewer_is_403(client, store):
    r = client.post("/api/matches/status", headers=basic("viewer"),
                    json={"page": M1[0], "chapter": M1[1], "status": "confirmed"})
    assert r.status_code == 403 and r.is_json
    assert store.get_match(*M1).status == "new"


def test_api_writes_need_a_json_body(client):
    r = client.post("/api/matches/status", headers=basic("admin"),
                    data={"page": M1[0], "chapter": M1[1], "status": "confirmed"})
    assert r.status_code == 400 and "application/json" in r.json["message"]


def test_locked_user_is_refused_by_basic_auth_too(client, store):
    from datetime import timedelta

    from tracker.store import now

    u = store.get_user("admin")
    u.locked_until = now() + timedelta(minutes=10)
    store.upsert_user(u)
    r = client.get("/api/me", headers=basic("admin"))
    assert r.status_code == 401 and r.json["message"] == client.get("/api/me", headers=basic("nobody")).json["message"]


def test_new_users_log_in_with_werkzeug_hashes(client, store):
    store.upsert_user(User(name="carol", password_hash=generate_password_hash("carol's password"), role="viewer"))
    assert login(client, "carol", "carol's password").status_code == 302
