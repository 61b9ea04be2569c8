"""Managing sites from the admin and the API against the sample site on 127.0.0.1: add one by
URL, edit its rules, preview them on a sample page, start its crawl, follow it and pause it."""
from __future__ import annotations

import base64
import time

import pytest
from werkzeug.security import generate_password_hash

from tests.conftest import ROOT
from tracker.store import User
from tracker.store.open import store_at
from web import create_app
from web.demo.chapters import chapters_from_folder
from web.demo.server import SampleSite

from .conftest import PASSWORD, csrf_token, login

BASIC = {"Authorization": "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()}
CONTENT = "#content, #chaptercontent"


@pytest.fixture(scope="module")
def site():
    with SampleSite(chapters_from_folder(ROOT / "samples" / "originals")) as s:
        yield s


@pytest.fixture
def home_store(settings):
    """The store the settings name, as a crawl's child process opens it."""
    s = store_at(None, settings.home)
    for name, role in (("admin", "admin"), ("viewer", "viewer")):
        s.upsert_user(User(name=name, password_hash=generate_password_hash(PASSWORD, "pbkdf2:sha256:1000"), role=role))
    yield s
    s.close()


@pytest.fixture
def app(home_store, settings):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": home_store,
                       "FETCH_PRIVATE": True})


@pytest.fixture
def api(app):
    return app.test_client()


def add(api, site, **body):
    return api.post("/api/sites", json={"url": site.url + "/book/1/", **body}, headers=BASIC)


def name_of(site) -> str:
    return site.url.removeprefix("http://")


def test_an_admin_adds_a_site_by_url_in_the_form(app, home_store, site):
    admin = app.test_client()
    login(admin, "admin")
    r = admin.post("/sites/", data={"url": site.url + "/book/1/", "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 302
    stored = home_store.get_site(name_of(site))  # the name is the URL's host and port
    assert stored.start_urls == [site.url + "/book/1/"] and stored.recrawl
    page = admin.get(r.headers["Location"]).get_data(as_text=True)
    assert "Start a crawl" in page and "Preview with these rules" in page
    r = admin.post("/sites/", data={"url": "not a url", "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 400 and "is not an http(s) URL" in r.get_data(as_text=True)
    r = admin.post("/sites/", data={"url": site.url + "/", "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 409 and "exists already" in r.get_data(as_text=True)


def test_the_api_adds_and_edits_a_site_and_refuses_bad_rules(api, home_store, site):
    r = add(api, site, name="sample", rules={"content": CONTENT, "delay": 0})
    assert r.status_code == 201 and r.get_json()["rules"]["content"] == CONTENT
    r = api.patch("/api/sites/sample", json={"recrawl": False, "title": "h1"}, headers=BASIC)
    assert r.status_code == 200 and r.get_json()["recrawl"] is False and r.get_json()["rules"]["title"] == "h1"
    assert home_store.get_site("sample").rules["content"] == CONTENT  # kept
    r = api.patch("/api/sites/sample", json={"content": "div[["}, headers=BASIC)
    assert r.status_code == 400 and "is not valid" in r.get_json()["message"]
    r = api.patch("/api/sites/sample", json={"follow": ["("]}, headers=BASIC)
    assert r.status_code == 400 and "not a valid regular expression" in r.get_json()["message"]
    r = api.patch("/api/sites/sample", json={"start_urls": None}, headers=BASIC)
    assert r.status_code == 400 and "needs at least one start URL" in r.get_json()["message"]
    r = api.patch("/api/sites/sample", json={"content": None}, headers=BASIC)
    assert r.status_code == 200 and "content" not in r.get_json()["rules"]  # null: the default again
    assert api.patch("/api/sites/nosuch", json={"recrawl": False}, headers=BASIC).status_code == 404
    assert api.post("/api/sites", json={"name": "x"}, headers=BASIC).status_code == 400


def test_a_preview_shows_what_the_rules_take_and_a_rule_that_selects_nothing(api, site):
    assert add(api, site, name="sample").status_code == 201
    page = site.url + "/book/1/1.html"
    r = api.post("/api/sites/sample/preview", json={"url": page, "rules": {"content": CONTENT}}, headers=BASIC)
    got = r.get_json()
    assert r.status_code == 200 and got["kind"] == "chapter" and got["extractor"] == "rules" and got["problems"] == []
    first_title, first_text = site.chapters[0]
    assert first_text.split("\n")[1].strip()[:15] in got["text"]
    assert "天才一秒记住本站地址" not in got["text"]  # the site's watermark is gone
    r = api.post("/api/sites/sample/preview", json={"url": page, "rules": {"content": "#no-such-block"}},
                 headers=BASIC)
    assert r.status_code == 200 and "selects nothing" in r.get_json()["problems"][0]
    html = "<html><body><h1>第一章</h1><div id='text'>" + "山城的雨下了整整一夜。" * 30 + "</div></body></html>"
    r = api.post("/api/sites/sample/preview", json={"html": html, "rules": {"content": "#text"}}, headers=BASIC)
    assert r.status_code == 200 and r.get_json()["text"].startswith("山城的雨") and not r.get_json()["problems"]


def test_the_form_previews_without_saving_and_saves_on_request(app, home_store, site):
    admin = app.test_client()
    login(admin, "admin")
    add(app.test_client(), site, name="sample")
    form = {"flags": "1", "recrawl": "on", "start_urls": site.url + "/book/1/", "content": "#nothing-here",
            "sample_url": site.url + "/book/1/1.html", "action": "preview",
            "csrf_token": csrf_token(admin, "/sites/")}
    r = admin.post("/sites/manage?name=sample", data=form)
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "selects nothing on this page" in html and 'value="#nothing-here"' in html
    assert "content" not in home_store.get_site("sample").rules  # a preview saves nothing
    r = admin.post("/sites/manage?name=sample", data={**form, "content": "#content", "recrawl": "",
                                                      "action": "save"})
    assert r.status_code == 302
    saved = home_store.get_site("sample")
    assert saved.rules["content"] == "#content" and saved.recrawl is False  # the schedule: off
    r = admin.post("/sites/manage?name=sample", data={**form, "content": "p[[", "action": "save"})
    assert r.status_code == 400 and "is not valid" in r.get_data(as_text=True)


def test_the_server_fetches_no_address_of_its_own_network_unless_allowed(settings, home_store, site, monkeypatch):
    import dataclasses

    monkeypatch.delenv("FPT_FETCH_ALLOW", raising=False)  # the test session's, for its fixture sites
    settings = dataclasses.replace(settings, fetch_allow="")
    strict = create_app({"TESTING": True, "SECRET_KEY": "t", "SETTINGS": settings, "STORE": home_store})
    c = strict.test_client()
    assert add(c, site, name="sample").status_code == 201
    r = c.post("/api/sites/sample/preview", json={"url": site.url + "/book/1/1.html"}, headers=BASIC)
    assert r.status_code == 400 and "is a loopback address; allow it with FPT_FETCH_ALLOW" in r.get_json()["message"]
    r = c.post("/api/check-url", json={"url": "http://169.254.169.254/latest/meta-data/"}, headers=BASIC)
    assert r.status_code == 400


def test_viewers_cannot_add_edit_preview_or_crawl(app, site):
    viewer = app.test_client()
    login(viewer, "viewer")
    token = csrf_token(viewer, "/sites/")
    assert viewer.post("/sites/", data={"url": site.url + "/", "csrf_token": token}).status_code == 403
    assert viewer.post("/api/sites", json={"url": site.url + "/"}, headers={"X-CSRFToken": token}).status_code == 403
    assert viewer.post("/sites/crawl?name=x", data={"csrf_token": token}).status_code == 403


def wait_for(api, name: str, states: tuple[str, ...], timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = api.get(f"/api/sites/{name}/crawl", headers=BASIC).get_json()
        if state["state"] in states:
            return state
        time.sleep(0.3)
    pytest.fail(f"the crawl of {name} did not reach {states}: {state}")


@pytest.mark.slow
def test_a_crawl_runs_in_a_child_process_shows_progress_and_is_recorded(api, home_store, site):
    assert add(api, site, name="sample", rules={"content": CONTENT, "delay": 0, "depth": 2}).status_code == 201
    r = api.post("/api/sites/sample/crawl", headers=BASIC)
    assert r.status_code == 202 and r.get_json()["running"]
    done = wait_for(api, "sample", ("finished", "paused", "failed"))
    assert done["state"] == "finished", done
    assert done["fetched"] > 3 and done["counts"]["stored"] >= 3
    runs = home_store.crawl_runs(site="sample")
    assert runs and runs[0].outcome == "finished" and done["runs"][0]["outcome"] == "finished"
    assert home_store.count_pages(site="sample") >= 3


@pytest.mark.slow
def test_pause_stops_a_crawl_keeping_its_frontier_and_start_resumes_it(app, api, home_store, site):
    rules = {"content": CONTENT, "delay": 0.4, "concurrency": 1, "depth": 3}
    assert add(api, site, name="slowly", rules=rules).status_code == 201
    admin = app.test_client()
    login(admin, "admin")
    r = admin.post("/sites/crawl?name=slowly", data={"action": "start", "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 302
    wait_for(api, "slowly", ("running",))
    deadline = time.monotonic() + 60
    while api.get("/api/sites/slowly/crawl", headers=BASIC).get_json()["fetched"] < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    page = admin.get("/sites/manage?name=slowly").get_data(as_text=True)
    assert "Pause the crawl" in page and 'http-equiv="refresh"' in page
    r = admin.post("/sites/crawl?name=slowly", data={"action": "pause", "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 302
    paused = wait_for(api, "slowly", ("paused", "finished", "failed"))
    assert paused["state"] == "paused" and paused["outcome"] == "shutdown", paused
    assert home_store.crawl_runs(site="slowly")[0].outcome == "shutdown"
    assert "Resume the crawl" in admin.get("/sites/manage?name=slowly").get_data(as_text=True)
    hits_before = site.hits.get("/book/1/", 0)
    assert api.post("/api/sites/slowly/crawl", headers=BASIC).status_code == 202
    done = wait_for(api, "slowly", ("finished", "failed"), timeout=120)
    assert done["state"] == "finished", done
    assert site.hits.get("/book/1/", 0) == hits_before  # resumed: the start page was not fetched again


def test_check_url_fetches_a_page_takes_its_text_and_finds_the_copied_chapter(app, api, site):
    import io

    from tests.tracker.test_uploads import zipped

    originals = ROOT / "samples" / "originals"
    chapters = {f.name: f.read_bytes() for f in sorted(originals.glob("*.txt"))}
    r = api.post("/api/works", data={"title": "山城旧事", "file": (io.BytesIO(zipped(chapters)), "w.zip")},
                 content_type="multipart/form-data", headers=BASIC)
    assert r.status_code == 201, r.get_json()
    viewer = app.test_client()  # viewers may check a text, but not make the server fetch
    login(viewer, "viewer")
    r = viewer.post("/api/check-url", json={"url": site.url + "/book/1/1.html"},
                    headers={"X-CSRFToken": csrf_token(viewer, "/sites/")})
    assert r.status_code == 403 and "viewers cannot make the server fetch" in r.get_json()["message"]
    r = api.post("/api/check-url", json={"url": site.url + "/book/1/1.html"}, headers=BASIC)
    got = r.get_json()
    assert r.status_code == 200 and got["kind"] == "chapter" and got["site"] == name_of(site)
    assert [m["work"] for m in got["matches"]][:1] == ["山城旧事"]
    r = api.post("/api/check-url", json={"url": site.url + "/book/1/4.html"}, headers=BASIC)  # a 404
    assert r.status_code == 400 and "could not fetch" in r.get_json()["message"]
    r = api.post("/api/check-url", json={"url": "ftp://example.com/"}, headers=BASIC)
    assert r.status_code == 400 and "not an http(s) URL" in r.get_json()["message"]


def test_viewers_cannot_patch_a_site_or_delete_a_work_through_the_api(app, api, site):
    assert add(api, site, name="sample").status_code == 201
    viewer = app.test_client()
    login(viewer, "viewer")
    token = {"X-CSRFToken": csrf_token(viewer, "/sites/")}
    assert viewer.patch("/api/sites/sample", json={"recrawl": False}, headers=token).status_code == 403
    assert viewer.post("/api/sites/sample/pause", headers=token).status_code == 403
    assert viewer.delete("/api/works/x?confirm=x", headers=token).status_code == 403


def test_a_hostile_sample_page_is_shown_as_text_never_as_markup(app, api, site):
    assert add(api, site, name="sample").status_code == 201
    admin = app.test_client()
    login(admin, "admin")
    hostile = ("<html><head><title>&lt;script&gt;alert(1)&lt;/script&gt;</title></head><body><div id=t>"
               + "&lt;img src=x onerror=alert(1)&gt;山城的雨下了整整一夜。" * 20 + "</div></body></html>")
    r = admin.post("/sites/manage?name=sample", data={
        "flags": "1", "start_urls": site.url + "/", "content": "#t", "sample_html": hostile, "action": "preview",
        "csrf_token": csrf_token(admin, "/sites/")})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "山城的雨" in html
    assert "<script>alert(1)" not in html and "<img src=x" not in html


def test_a_crawl_whose_process_is_gone_or_another_program_is_failed_and_never_signalled(settings):
    import os
    import subprocess
    import sys

    from crawler import site_runs as site_crawls

    path = site_crawls.state_file(settings, "sample")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        site_crawls.write_state(path, {"state": "running", "site": "sample", "pid": other.pid, "fetched": 3})
        state = site_crawls.read_state(settings, "sample")
        assert state["state"] == "failed" and "start it again" in state["error"]
        site_crawls.pause(settings, "sample")
        assert other.poll() is None  # the unrelated process that took the number was left alone
    finally:
        other.kill()
        other.wait()
    site_crawls.write_state(path, {"state": "running", "site": "sample", "pid": os.getpid() + 10**6})
    assert site_crawls.read_state(settings, "sample")["state"] == "failed"
