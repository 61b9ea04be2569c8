"""Sessions that end: a copy of the session cookie is worthless after sign-out, a password
change, a lock, the account's removal, too long idle or too long signed in; each session
ends on its own; the store keeps only a hash of the cookie's secret."""
from datetime import timedelta

import pytest
from click.testing import CliRunner

from tracker.settings import SettingsError
from tracker.store.open import store_at
from web import cli, create_app
from web.auth.sessions import TOUCH_EVERY, session_id

from .conftest import PASSWORD, T0, fill, login, post
from .test_auth import basic

COOKIE = "fptrack_session"


class Clock:
    """The app's clock, moved by the test instead of waiting."""

    def __init__(self):
        self.now = T0

    def __call__(self):
        return self.now

    def move(self, **kw):
        self.now += timedelta(**kw)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(settings):
    """The store `fptrack user ...` opens too (FPT_HOME's), so the commands and the app share it."""
    s = store_at(None, settings.home)
    fill(s)
    yield s
    s.close()


@pytest.fixture
def app(store, settings, clock):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": store,
                       "CLOCK": clock})


def signed_in(app, name="viewer"):
    c = app.test_client()
    assert login(c, name).status_code == 302
    return c


def copy_of(app, client):
    """Another browser holding a copy of the client's session cookie."""
    c = app.test_client()
    c.set_cookie(COOKIE, client.get_cookie(COOKIE).value)
    return c


def is_signed_in(c) -> bool:
    page, api = c.get("/works/"), c.get("/api/me")
    if page.status_code == 200 and api.status_code == 200:
        return True
    assert page.status_code == 302 and page.headers["Location"].startswith("/login?next=")
    assert api.status_code == 401 and api.json["error"] == "unauthorized"
    return False


def fptrack_user(settings, *args, input=None):
    r = CliRunner().invoke(cli.user, list(args), env={"FPT_HOME": str(settings.home)}, input=input)
    assert r.exit_code == 0, r.output
    return r.output


def test_a_copied_cookie_is_worthless_after_sign_out(app):
    c = signed_in(app)
    copy = copy_of(app, c)
    assert is_signed_in(copy)
    assert post(c, "/logout", {}).status_code == 302
    assert not is_signed_in(c) and not is_signed_in(copy)


def test_two_sessions_of_one_user_end_apart(app, store):
    a, b = signed_in(app), signed_in(app)
    assert len(store.sessions("viewer")) == 2
    post(a, "/logout", {})
    assert not is_signed_in(a) and is_signed_in(b)
    assert len(store.sessions("viewer")) == 1


def test_a_password_change_ends_every_session(app, store, settings):
    a, b = signed_in(app), signed_in(app)
    other = signed_in(app, "admin")
    copy = copy_of(app, a)
    out = fptrack_user(settings, "passwd", "viewer", "--password-stdin", input="a new password\n")
    assert "ended 2 sessions" in out
    assert not any(is_signed_in(c) for c in (a, b, copy))
    assert is_signed_in(other)
    assert store.sessions("viewer") == []
    assert login(app.test_client(), "viewer", "a new password").status_code == 302


def test_a_password_changed_in_the_store_alone_ends_the_session_too(app, store):
    c = signed_in(app)
    u = store.get_user("viewer")
    u.password_hash = u.password_hash[:-1] + ("0" if u.password_hash[-1] != "0" else "1")
    store.upsert_user(u)  # not through `fptrack user passwd`: the session remembers which password it came from
    assert not is_signed_in(c)
    assert store.sessions("viewer") == []


def test_the_lock_after_failed_sign_ins_ends_every_session(app, store, clock):
    c = signed_in(app)
    copy = copy_of(app, c)
    guesser = app.test_client()
    for _ in range(5):
        assert login(guesser, "viewer", "a guess").status_code == 401
    assert store.get_user("viewer").locked_until is not None
    assert store.sessions("viewer") == []
    assert not is_signed_in(c) and not is_signed_in(copy)
    clock.move(minutes=16)  # the lock runs out; the sessions stay ended
    assert not is_signed_in(copy)
    assert is_signed_in(signed_in(app))


def test_a_lock_set_by_hand_ends_the_session_for_good(app, store, clock):
    c = signed_in(app)
    u = store.get_user("viewer")
    u.locked_until = clock.now + timedelta(minutes=5)
    store.upsert_user(u)
    assert not is_signed_in(c)
    clock.move(minutes=6)
    assert not is_signed_in(c)


def test_removing_the_account_ends_its_sessions(app, store, settings):
    c = signed_in(app)
    copy = copy_of(app, c)
    other = signed_in(app, "admin")
    assert "ended 1 session" in fptrack_user(settings, "remove", "viewer")
    assert not is_signed_in(c) and not is_signed_in(copy)
    assert is_signed_in(other)
    assert store.sessions("viewer") == []


def test_a_session_ends_after_the_idle_timeout(app, clock):
    c = signed_in(app)
    copy = copy_of(app, c)
    clock.move(minutes=29)
    assert is_signed_in(c)  # a request restarts the idle time
    clock.move(minutes=29)
    assert is_signed_in(c)
    clock.move(minutes=30, seconds=1)
    assert not is_signed_in(copy) and not is_signed_in(c)


def test_a_session_ends_after_its_lifetime_however_active(app, clock):
    c = signed_in(app)
    for _ in range(35):  # 11 h 40 min, a request every 20 minutes
        clock.move(minutes=20)
        assert is_signed_in(c)
    clock.move(minutes=20, seconds=1)
    assert not is_signed_in(c)


def test_idle_and_lifetime_are_settings(store, settings, clock, monkeypatch):
    monkeypatch.setenv("FPT_WEB_SESSION_IDLE", "60")
    monkeypatch.setenv("FPT_WEB_SESSION_LIFETIME", "600")
    app = create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store, "CLOCK": clock})
    limits = app.extensions["fptrack"].session_limits
    assert (limits.idle, limits.lifetime) == (timedelta(seconds=60), timedelta(seconds=600))
    c = signed_in(app)
    clock.move(seconds=61)
    assert not is_signed_in(c)
    for bad in ("0", "-5", "soon", "nan"):
        monkeypatch.setenv("FPT_WEB_SESSION_IDLE", bad)
        with pytest.raises(SettingsError, match="FPT_WEB_SESSION_IDLE"):
            create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store})


def test_last_seen_is_written_at_most_once_a_minute(app, store, clock, monkeypatch):
    c = signed_in(app)
    touched = []
    real = store.touch_session
    monkeypatch.setattr(store, "touch_session", lambda sid, at: touched.append(at) or real(sid, at))
    for _ in range(20):
        clock.move(seconds=2)
        assert c.get("/works/").status_code == 200
    assert len(touched) == 0  # 40 s of requests: reads only
    clock.move(seconds=20)
    c.get("/works/")
    c.get("/works/")
    assert touched == [clock.now] and store.sessions("viewer")[0].last_seen == clock.now
    assert TOUCH_EVERY == timedelta(minutes=1)


def test_the_store_keeps_only_a_hash_of_the_cookie_secret(app, store):
    c = signed_in(app)
    cookie = app.session_interface.get_signing_serializer(app).loads(c.get_cookie(COOKIE).value)
    secret = cookie["_user_id"]
    assert "viewer" not in secret and len(secret) >= 40  # the cookie names no account, holds no password hash
    [s] = store.sessions("viewer")
    assert s.id == session_id(secret) != secret


def test_expired_sessions_are_purged_at_sign_in(app, store, clock):
    signed_in(app)
    signed_in(app, "admin")
    clock.move(hours=1)
    assert len(store.sessions()) == 2  # expired, refused, but still recorded
    signed_in(app)
    assert [s.user for s in store.sessions()] == ["viewer"] and store.sessions()[0].created_at == clock.now


def test_basic_auth_still_works_per_call_and_records_no_session(app, store):
    c = app.test_client()
    r = c.get("/api/me", headers=basic("viewer"))
    assert r.status_code == 200 and "Set-Cookie" not in r.headers
    assert store.sessions() == []
    assert c.get("/api/me").status_code == 401
    assert c.get("/api/me", headers=basic("viewer", "not the password")).status_code == 401


def test_a_cookie_from_before_server_side_sessions_is_refused(app):
    c = app.test_client()
    with c.session_transaction() as s:
        s["_user_id"] = "viewer\x1f0123456789abcdef0123"  # the old account-derived form
    assert not is_signed_in(c)
    assert login(c, "viewer", PASSWORD).status_code == 302 and is_signed_in(c)
