"""Error pages: 400, 403, 404 and 405 with their message; a store error is a 503 with its
message; anything else a 500 page; never a traceback."""
from tracker.store import StoreError
from web import create_app

from .conftest import login, post
from .test_auth import basic


def test_404_page(admin):
    r = admin.get("/nowhere")
    assert r.status_code == 404 and b"404 \xc2\xb7 Not found" in r.data and b"Back to the dashboard" in r.data


def test_404_json_under_api(admin):
    r = admin.get("/api/nowhere")
    assert r.status_code == 404 and r.json["error"] == "not found"


def test_403_page(viewer):
    r = post(viewer, "/takedown/sent", {"work": "x"})
    assert r.status_code == 403 and b"Not allowed" in r.data


def test_405_page(admin):
    r = admin.get("/matches/status")
    assert r.status_code == 405 and "POST" in r.headers["Allow"]


def test_store_error_is_a_503_with_its_message(admin, store, monkeypatch):
    def broken(*a, **k):
        raise StoreError("the SQLite store at /x failed: disk I/O error; check the disk")

    monkeypatch.setattr(store, "counts", broken)
    r = admin.get("/")
    html = r.get_data(as_text=True)
    assert r.status_code == 503 and "disk I/O error; check the disk" in html and "Traceback" not in html
    r = admin.get("/api/dashboard")
    assert r.status_code == 503 and "disk I/O error" in r.json["message"]


def test_store_error_while_loading_the_user_still_renders(admin, store, monkeypatch):
    monkeypatch.setattr(store, "get_user", lambda name: (_ for _ in ()).throw(StoreError("store is down")))
    r = admin.get("/works/")
    assert r.status_code == 503 and b"store is down" in r.data


def test_store_that_cannot_be_opened_is_a_503(tmp_path, settings):
    from dataclasses import replace

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    app = create_app({"SECRET_KEY": "k", "SETTINGS": replace(settings, home=blocker / "home")})
    c = app.test_client()
    r = c.get("/api/me", headers=basic("admin"))
    assert r.status_code == 503 and "FPT_HOME" in r.json["message"]
    assert c.get("/login").status_code == 200  # the sign-in page needs no store


def test_unexpected_errors_are_a_500_page_without_details(store, settings, monkeypatch):
    app = create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store})
    c = app.test_client()
    assert login(c, "admin").status_code == 302
    monkeypatch.setattr(store, "works", lambda: 1 / 0)
    r = c.get("/works/")
    html = r.get_data(as_text=True)
    assert r.status_code == 500 and "the error was logged" in html
    assert "ZeroDivisionError" not in html and "Traceback" not in html


def test_oversized_post_is_413(admin):
    r = admin.post("/check", data={"text": "x" * (3 * 1024 * 1024)})
    assert r.status_code == 413
