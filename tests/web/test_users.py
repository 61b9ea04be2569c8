"""Users in the admin (/users/): an admin lists and manages its organisation's users, an
operator every organisation's, a viewer none (403). A user is added with a password typed
twice or a generated one shown once; roles change, passwords are reset (shown once) and users
removed (their sessions ended), with the rules that keep every organisation manageable.
Another organisation's users are 404, and every form needs its CSRF token."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tracker.store import NotFound, now
from tracker.store.tenancy import DEFAULT_ORG

from .conftest import PASSWORD, csrf_token, login, post
from .test_orgs import add_user, east, signed_in  # noqa: F401  (east: a fixture)

NEW = "a long enough password"


def form(client, path: str, data: dict, **kw):
    return post(client, path, data, token_from="/users/" if path.startswith("/users") else "/", **kw)


def add(client, **data):
    return form(client, "/users/", {"role": "viewer", **data})


def shown_password(html: str) -> str:
    m = re.search(r'<pre id="new-password">([^<]+)</pre>', html)
    assert m, html[:2000]
    return m.group(1)


def can_sign_in(app, name: str, password: str) -> bool:
    return login(app.test_client(), name, password).status_code == 302


def signed_out(client) -> bool:
    r = client.get("/")
    return r.status_code == 302 and "/login" in r.headers["Location"]


def org_of(store, name: str) -> str:
    return store.owner("user", name)


# ---- who may see the pages ---------------------------------------------------------------------


def test_a_viewer_gets_403_on_every_users_page_and_form(app, store):
    viewer = signed_in(app, "viewer")
    for path, query in (("/users/", {}), ("/users/view", {"name": "admin"}), ("/users/remove", {"name": "admin"})):
        r = viewer.get(path, query_string=query)
        assert r.status_code == 403 and "admins and operators" in r.get_data(as_text=True), path
    token = csrf_token(viewer, "/")
    for path, data in (("/users/", {"name": "nina", "role": "admin", "generate": "1"}),
                       ("/users/role", {"name": "admin", "role": "viewer"}),
                       ("/users/password", {"name": "admin"}),
                       ("/users/remove", {"name": "admin", "confirm": "admin"})):
        assert viewer.post(path, data={**data, "csrf_token": token}).status_code == 403, path
    assert [u.name for u in store.users()] == ["admin", "viewer"] and store.get_user("admin").role == "admin"
    assert "Users</a>" not in viewer.get("/").get_data(as_text=True)


def test_the_navigation_links_the_users_page_for_admins_and_operators(app, east):
    for name in ("admin", "eve", "root"):
        html = signed_in(app, name).get("/").get_data(as_text=True)
        assert '<a href="/users/"' in html and ">Users</a>" in html, name


def test_an_admin_lists_only_its_organisations_users(app, east):
    eve = signed_in(app, "eve")
    html = eve.get("/users/").get_data(as_text=True)
    names = re.findall(r'<tr id="user-([^"]+)">', html)
    assert names == ["ed", "eve"]
    row = re.search(r'<tr id="user-ed">(.*?)</tr>', html, re.S).group(1)
    assert "viewer" in row and "east" in row and now().strftime("%Y-%m-%d") in row
    admin = signed_in(app, "admin")
    names = re.findall(r'<tr id="user-([^"]+)">', admin.get("/users/").get_data(as_text=True))
    assert names == ["admin", "root", "viewer"]  # the default organisation's (root is an operator of it)


def test_an_operator_lists_every_organisations_users_and_picks_one(app, east):
    root = signed_in(app, "root")
    html = root.get("/users/").get_data(as_text=True)
    assert re.findall(r'<tr id="user-([^"]+)">', html) == ["admin", "ed", "eve", "root", "viewer"]
    html = root.get("/users/", query_string={"org": "east"}).get_data(as_text=True)
    assert re.findall(r'<tr id="user-([^"]+)">', html) == ["ed", "eve"]


def test_the_last_sign_in_is_recorded_and_shown(app, store):
    admin = signed_in(app, "admin")
    html = admin.get("/users/").get_data(as_text=True)
    assert "—" in re.search(r'<tr id="user-viewer">(.*?)</tr>', html, re.S).group(1)  # never signed in
    assert not can_sign_in(app, "viewer", "wrong password")  # a failure is no sign-in
    assert store.get_user("viewer").last_login is None
    viewer = signed_in(app, "viewer")
    assert "Open sessions</dt><dd>1<" in admin.get("/users/view", query_string={"name": "viewer"}).get_data(
        as_text=True)
    form(viewer, "/logout", {})
    assert store.sessions("viewer") == []  # signed out: still recorded
    when = store.get_user("viewer").last_login
    assert when is not None and now() - when < timedelta(minutes=1)
    row = re.search(r'<tr id="user-viewer">(.*?)</tr>', admin.get("/users/").get_data(as_text=True), re.S).group(1)
    assert "—" not in row and when.strftime("%Y-%m-%d %H:%M") in row


# ---- adding ------------------------------------------------------------------------------------


def test_an_admin_adds_a_user_with_a_typed_password_to_its_own_organisation(app, east):
    eve = signed_in(app, "eve")
    r = add(eve, name="nina", role="admin", password=NEW, repeat=NEW, org=DEFAULT_ORG)  # the org is ignored
    assert r.status_code == 302
    html = eve.get(r.headers["Location"]).get_data(as_text=True)
    assert "User nina (admin, east) added." in html and NEW not in html
    assert east.get_user("nina").role == "admin" and org_of(east, "nina") == "east"
    nina = signed_in_with(app, "nina", NEW)
    assert nina.get("/api/works").get_json()["works"][0]["work"] == "东城"  # sees east's data


def signed_in_with(app, name: str, password: str):
    c = app.test_client()
    assert login(c, name, password).status_code == 302
    return c


def test_a_generated_password_is_shown_once_and_signs_in(app, store):
    admin = signed_in(app, "admin")
    r = add(admin, name="nina", role="viewer", generate="1", password="ignored", repeat="other")
    html = r.get_data(as_text=True)
    assert r.status_code == 201 and "not shown again" in html and r.headers["Cache-Control"] == "no-store"
    password = shown_password(html)
    assert len(password) >= 16
    listing = admin.get("/users/").get_data(as_text=True)
    assert "nina" in listing and password not in listing  # shown once
    assert password not in repr(store.get_user("nina"))  # kept hashed
    assert can_sign_in(app, "nina", password)


def test_an_operator_adds_a_user_to_the_organisation_it_picks(app, east):
    root = signed_in(app, "root")
    assert add(root, name="olga", role="operator", org="east", password=NEW, repeat=NEW).status_code == 302
    assert east.get_user("olga").role == "operator" and org_of(east, "olga") == "east"
    r = add(root, name="pia", org="nowhere", password=NEW, repeat=NEW)
    assert r.status_code == 400 and "No organisation &#39;nowhere&#39;" in r.get_data(as_text=True)
    with pytest.raises(NotFound):
        east.get_user("pia")


def test_an_admin_cannot_make_an_operator(app, store):
    admin = signed_in(app, "admin")
    assert 'value="operator"' not in admin.get("/users/").get_data(as_text=True)
    assert "<option>operator</option>" not in admin.get("/users/").get_data(as_text=True)
    r = add(admin, name="olga", role="operator", password=NEW, repeat=NEW)
    assert r.status_code == 403 and "cannot make operators" in r.get_data(as_text=True)
    with pytest.raises(NotFound):
        store.get_user("olga")


@pytest.mark.parametrize("data, message", [
    ({"name": "admin"}, "The name admin is taken; choose another."),
    ({"name": "eve"}, "The name eve is taken; choose another."),  # another organisation's: names are unique
    ({"password": "short", "repeat": "short"}, "A password needs at least 8 characters."),
    ({"repeat": NEW + "x"}, "The two passwords differ"),
    ({"password": "", "repeat": ""}, "Type a password twice, or have one generated."),
    ({"role": "superuser"}, "Unknown role &#39;superuser&#39;; use one of: admin, viewer, operator."),
    ({"role": ""}, "Unknown role"),
    ({"name": "two words"}, "A user name is 1 to 64 characters with no spaces."),
    ({"name": ""}, "A user name is 1 to 64 characters"),
])
def test_a_bad_new_user_is_refused_with_what_to_fix(app, east, data, message):
    admin = signed_in(app, "admin")
    before = [(u.name, u.role, u.password_hash) for u in east.users()]
    r = add(admin, **{"name": "nina", "role": "viewer", "password": NEW, "repeat": NEW, **data})
    html = r.get_data(as_text=True)
    assert r.status_code == 400 and message in html, html[:3000]
    assert 'class="flash error"' in html and 'id="new-user-form"' in html  # the form again, to fix
    assert [(u.name, u.role, u.password_hash) for u in east.users()] == before


# ---- roles -------------------------------------------------------------------------------------


def test_an_admin_changes_a_role_which_applies_at_the_next_request(app, store):
    viewer, admin = signed_in(app, "viewer"), signed_in(app, "admin")
    assert form(viewer, "/tokens/", {"scope": "read"}).status_code == 403
    r = form(admin, "/users/role", {"name": "viewer", "role": "admin"})
    assert r.status_code == 302 and store.get_user("viewer").role == "admin"
    assert "viewer is now admin." in admin.get(r.headers["Location"]).get_data(as_text=True)
    assert form(viewer, "/tokens/", {"scope": "read"}).status_code == 201  # same session, new role


def test_nobody_changes_their_own_role(app, store):
    admin = signed_in(app, "admin")
    r = form(admin, "/users/role", {"name": "admin", "role": "viewer"})
    assert r.status_code == 400 and "cannot change your own role" in r.get_data(as_text=True)
    assert store.get_user("admin").role == "admin"


def test_an_admin_neither_makes_nor_changes_an_operator(app, east):
    admin = signed_in(app, "admin")
    r = form(admin, "/users/role", {"name": "viewer", "role": "operator"})
    assert r.status_code == 403 and east.get_user("viewer").role == "viewer"
    r = form(admin, "/users/role", {"name": "root", "role": "viewer"})
    assert r.status_code == 403 and "only an operator changes an operator" in r.get_data(as_text=True)
    assert east.get_user("root").role == "operator"
    html = admin.get("/users/view", query_string={"name": "root"}).get_data(as_text=True)
    assert 'id="role-form"' not in html and 'id="password-form"' not in html
    root = signed_in(app, "root")
    assert form(root, "/users/role", {"name": "viewer", "role": "operator"}).status_code == 302
    assert east.get_user("viewer").role == "operator"


def test_a_bad_role_is_refused(app, store):
    admin = signed_in(app, "admin")
    r = form(admin, "/users/role", {"name": "viewer", "role": "boss"})
    assert r.status_code == 400 and "Unknown role" in r.get_data(as_text=True)
    assert store.get_user("viewer").role == "viewer"


def test_the_last_admin_of_an_organisation_who_can_sign_in_keeps_the_role(app, east):
    root = signed_in(app, "root")
    r = form(root, "/users/role", {"name": "eve", "role": "viewer"})
    assert r.status_code == 400 and "Eve is the last admin of east who can sign in" in r.get_data(as_text=True)
    add_user(east, "emma", "admin", "east")
    emma = east.get_user("emma")
    emma.locked_until = now() + timedelta(minutes=10)  # locked: cannot sign in, does not count
    east.upsert_user(emma)
    assert form(root, "/users/role", {"name": "eve", "role": "viewer"}).status_code == 400
    emma.locked_until = None
    east.upsert_user(emma)
    assert form(root, "/users/role", {"name": "eve", "role": "viewer"}).status_code == 302
    assert east.get_user("eve").role == "viewer"


# ---- passwords ---------------------------------------------------------------------------------


def test_a_reset_password_is_shown_once_unlocks_and_ends_the_sessions(app, store):
    viewer, admin = signed_in(app, "viewer"), signed_in(app, "admin")
    u = store.get_user("viewer")
    u.failed_logins, u.locked_until = 3, None
    store.upsert_user(u)
    r = form(admin, "/users/password", {"name": "viewer"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "not shown again" in html and r.headers["Cache-Control"] == "no-store"
    password = shown_password(html)
    assert password not in admin.get("/users/view", query_string={"name": "viewer"}).get_data(as_text=True)
    assert signed_out(viewer) and store.sessions("viewer") == []
    assert store.get_user("viewer").failed_logins == 0
    assert not can_sign_in(app, "viewer", PASSWORD) and can_sign_in(app, "viewer", password)


def test_an_admin_cannot_reset_an_operators_password(app, east):
    before = east.get_user("root").password_hash
    r = form(signed_in(app, "admin"), "/users/password", {"name": "root"})
    assert r.status_code == 403 and "new-password" not in r.get_data(as_text=True)
    assert east.get_user("root").password_hash == before


# ---- removing ----------------------------------------------------------------------------------


def test_a_user_is_removed_after_confirmation_and_signed_out_at_once(app, store):
    viewer, admin = signed_in(app, "viewer"), signed_in(app, "admin")
    html = admin.get("/users/remove", query_string={"name": "viewer"}).get_data(as_text=True)
    assert 'id="remove-form"' in html and "Type the name" in html
    r = form(admin, "/users/remove", {"name": "viewer", "confirm": "viewr"})
    assert r.status_code == 400 and "Type the name, viewer, exactly to confirm." in r.get_data(as_text=True)
    assert store.get_user("viewer") and not signed_out(viewer)
    r = form(admin, "/users/remove", {"name": "viewer", "confirm": "viewer"})
    assert r.status_code == 302
    assert "User viewer removed; 1 session ended." in admin.get(r.headers["Location"]).get_data(as_text=True)
    with pytest.raises(NotFound):
        store.get_user("viewer")
    assert store.sessions("viewer") == [] and signed_out(viewer)
    assert not can_sign_in(app, "viewer", PASSWORD)


def test_nobody_removes_themselves(app, store):
    admin = signed_in(app, "admin")
    html = admin.get("/users/remove", query_string={"name": "admin"}).get_data(as_text=True)
    assert "You cannot remove yourself; ask another admin." in html and 'id="remove-form"' not in html
    r = form(admin, "/users/remove", {"name": "admin", "confirm": "admin"})
    assert r.status_code == 400 and "You cannot remove yourself" in r.get_data(as_text=True)
    assert store.get_user("admin") and not signed_out(admin)


def test_the_last_admin_of_an_organisation_who_can_sign_in_is_not_removed(app, east):
    root = signed_in(app, "root")
    html = root.get("/users/remove", query_string={"name": "eve"}).get_data(as_text=True)
    assert "Eve is the last admin of east who can sign in; make another user of east an admin first." in html
    r = form(root, "/users/remove", {"name": "eve", "confirm": "eve"})
    assert r.status_code == 400 and east.get_user("eve")
    add_user(east, "emma", "admin", "east")
    assert form(root, "/users/remove", {"name": "eve", "confirm": "eve"}).status_code == 302
    with pytest.raises(NotFound):
        east.get_user("eve")


def test_an_admin_cannot_remove_an_operator(app, east):
    admin = signed_in(app, "admin")
    assert admin.get("/users/remove", query_string={"name": "root"}).status_code == 403
    assert form(admin, "/users/remove", {"name": "root", "confirm": "root"}).status_code == 403
    assert east.get_user("root")


# ---- CSRF and organisations ----------------------------------------------------------------------


@pytest.mark.parametrize("path, data", [
    ("/users/", {"name": "nina", "role": "viewer", "generate": "1"}),
    ("/users/role", {"name": "viewer", "role": "admin"}),
    ("/users/password", {"name": "viewer"}),
    ("/users/remove", {"name": "viewer", "confirm": "viewer"}),
])
def test_every_users_form_needs_its_csrf_token(app, store, path, data):
    admin = signed_in(app, "admin")
    before = [(u.name, u.role, u.password_hash) for u in store.users()]
    r = admin.post(path, data=data)
    assert r.status_code == 400 and b"CSRF" in r.data
    r = admin.post(path, data={**data, "csrf_token": "forged"})
    assert r.status_code == 400
    assert [(u.name, u.role, u.password_hash) for u in store.users()] == before


@pytest.mark.parametrize("asker, other", [("eve", "viewer"), ("eve", "admin"), ("admin", "eve"), ("admin", "ed")])
def test_another_organisations_users_are_404(app, east, asker, other):
    client = signed_in(app, asker)
    before = [(u.name, u.role, u.password_hash) for u in east.users()]
    for path in ("/users/view", "/users/remove"):
        r = client.get(path, query_string={"name": other})
        assert r.status_code == 404, path
    for path, data in (("/users/role", {"name": other, "role": "viewer"}),
                       ("/users/password", {"name": other}),
                       ("/users/remove", {"name": other, "confirm": other})):
        r = form(client, path, data)
        assert r.status_code == 404 and "new-password" not in r.get_data(as_text=True), path
    assert f'id="user-{other}"' not in client.get("/users/").get_data(as_text=True)
    assert [(u.name, u.role, u.password_hash) for u in east.users()] == before
    assert org_of(east, other) == (DEFAULT_ORG if other in ("viewer", "admin") else "east")


def test_an_unknown_user_is_404(app, store):
    admin = signed_in(app, "admin")
    assert admin.get("/users/view", query_string={"name": "nobody"}).status_code == 404
    assert form(admin, "/users/password", {"name": "nobody"}).status_code == 404


def test_the_command_line_lists_the_last_sign_in_too(settings):
    from click.testing import CliRunner

    from fptrack.cli import main
    from tracker.store.open import store_at

    home = store_at(None, settings.home)  # the store `fptrack` opens
    for name in ("ann", "bob"):
        add_user(home, name, "admin", DEFAULT_ORG)
    home.record_login("bob", True, max_failures=5, lock_for=timedelta(minutes=1), at=now())
    home.close()
    lines = CliRunner().invoke(main, ["user", "list"]).output.splitlines()
    assert "last sign-in" not in lines[0] and f"last sign-in {now():%Y-%m-%d}" in lines[1]


def test_the_last_sign_in_is_written_at_most_once_a_minute(store):
    from web.auth.accounts import sign_in

    t0 = now()
    assert sign_in(store, "viewer", PASSWORD, at=t0).user.last_login == t0
    assert sign_in(store, "viewer", PASSWORD, at=t0 + timedelta(seconds=30)).user  # HTTP Basic, say: no write
    assert store.get_user("viewer").last_login == t0
    later = t0 + timedelta(minutes=1)
    sign_in(store, "viewer", PASSWORD, at=later)
    assert store.get_user("viewer").last_login == later


# ---- the JSON API ------------------------------------------------------------------------------


def basic(name: str, password: str = PASSWORD) -> dict[str, str]:
    import base64

    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def test_the_api_manages_users_for_a_person_signed_in_by_basic(client, east):
    eve = basic("eve")
    r = client.get("/api/users", headers=eve)
    assert r.status_code == 200 and [u["name"] for u in r.get_json()["users"]] == ["ed", "eve"]
    r = client.post("/api/users", json={"name": "nina", "role": "admin", "password": NEW, "org": DEFAULT_ORG},
                    headers=eve)
    assert r.status_code == 201 and "password" not in r.get_json()
    assert (r.get_json()["user"]["org"], r.get_json()["user"]["role"]) == ("east", "admin")
    r = client.post("/api/users", json={"name": "otto", "role": "viewer"}, headers=eve)
    generated = r.get_json()["password"]
    assert r.status_code == 201 and client.get("/api/me", headers=basic("otto", generated)).status_code == 200
    assert client.get("/api/users/otto", headers=eve).get_json()["user"]["last_login"] is not None
    r = client.patch("/api/users/otto", json={"role": "admin"}, headers=eve)
    assert r.status_code == 200 and east.get_user("otto").role == "admin"
    r = client.post("/api/users/otto/password", json={}, headers=eve)
    reset = r.get_json()["password"]
    assert r.status_code == 200 and reset != generated and reset not in repr(east.get_user("otto"))
    assert client.get("/api/me", headers=basic("otto", generated)).status_code == 401
    r = client.delete("/api/users/otto", headers=eve)
    assert r.status_code == 400 and "type the name" in r.get_json()["message"]
    r = client.delete("/api/users/otto", query_string={"confirm": "otto"}, headers=eve)
    assert r.status_code == 200 and r.get_json() == {"removed": "otto", "sessions_ended": 0}
    with pytest.raises(NotFound):
        east.get_user("otto")


@pytest.mark.parametrize("call", [
    ("get", "/api/users/viewer", None), ("patch", "/api/users/viewer", {"role": "admin"}),
    ("post", "/api/users/viewer/password", {}), ("delete", "/api/users/viewer?confirm=viewer", None),
])
def test_the_api_answers_404_for_another_organisations_user(client, east, call):
    method, path, body = call
    before = [(u.name, u.role, u.password_hash) for u in east.users()]
    r = client.open(path, method=method.upper(), json=body, headers=basic("eve"))
    assert r.status_code == 404 and "password" not in r.get_json()
    assert [(u.name, u.role, u.password_hash) for u in east.users()] == before


def test_the_api_keeps_the_rules_of_the_pages(client, east):
    admin = basic("admin")
    r = client.post("/api/users", json={"name": "eve", "role": "viewer"}, headers=admin)
    assert r.status_code == 400 and r.get_json()["message"] == "the name eve is taken; choose another"
    r = client.post("/api/users", json={"name": "nina", "role": "viewer", "password": "short"}, headers=admin)
    assert r.status_code == 400 and "at least 8 characters" in r.get_json()["message"]
    r = client.post("/api/users", json={"name": "nina", "role": "operator"}, headers=admin)
    assert r.status_code == 403 and "cannot make operators" in r.get_json()["message"]
    assert client.post("/api/users/root/password", json={}, headers=admin).status_code == 403
    r = client.delete("/api/users/admin", query_string={"confirm": "admin"}, headers=admin)
    assert r.status_code == 400 and "cannot remove yourself" in r.get_json()["message"]
    r = client.patch("/api/users/eve", json={"role": "viewer"}, headers=basic("root"))
    assert r.status_code == 400 and "last admin of east" in r.get_json()["message"]
    assert client.get("/api/users", headers=basic("viewer")).status_code == 403


def test_the_api_refuses_tokens_and_forms_from_other_sites(client, store):
    from tracker.tenancy.tokens import create_token

    from .test_tokens import bearer

    _, write = create_token(store, DEFAULT_ORG, "write", "script")
    for method, path, body in (("get", "/api/users", None), ("post", "/api/users", {"name": "nina"}),
                               ("post", "/api/users/viewer/password", {}),
                               ("delete", "/api/users/viewer?confirm=viewer", None)):
        r = client.open(path, method=method.upper(), json=body, headers=bearer(write))
        assert r.status_code == 403 and "API token cannot manage users" in r.get_json()["message"], path
    # A form another site's page posts with the browser's cached Basic credentials is no JSON: refused.
    r = client.post("/api/users/viewer/password", data={}, headers=basic("admin"))
    assert r.status_code == 400 and "JSON" in r.get_json()["message"]
    assert [u.name for u in store.users()] == ["admin", "viewer"] and can_sign_in_store(store, "viewer")


def can_sign_in_store(store, name: str) -> bool:
    from web.auth.accounts import sign_in

    return sign_in(store, name, PASSWORD).user is not None


def test_a_session_writes_users_through_the_api_with_its_csrf_token(app, store):
    admin = signed_in(app, "admin")
    r = admin.patch("/api/users/viewer", json={"role": "admin"})
    assert r.status_code == 400 and store.get_user("viewer").role == "viewer"
    token = admin.get("/api/me").get_json()["csrf_token"]
    r = admin.patch("/api/users/viewer", json={"role": "admin"}, headers={"X-CSRFToken": token})
    assert r.status_code == 200 and store.get_user("viewer").role == "admin"
