"""Discovery in the admin and the API: the recent runs and a run's queries, scoped by
organisation (another organisation's run is a 404), "search now" only when a search API is
configured (else the page says how to set one), and, end to end, a search started from the
admin against the fixture search engine, whose run shows on the pages with its counts."""
from __future__ import annotations

import time
from datetime import timedelta

import pytest
from werkzeug.security import generate_password_hash

from tracker.discovery import child_runs as discovery_runs
from tracker.store import User
from tracker.store.discovery import DiscoveryQuery, DiscoveryRun
from tracker.store.tenancy import DEFAULT_ORG
from tracker.tenancy.tokens import create_token
from web import create_app

from .conftest import PASSWORD, T0, csrf_token, login
from .test_orgs import east, signed_in  # noqa: F401  (a fixture)
from .test_tokens import bearer, tokens  # noqa: F401  (a fixture)

SEARCH_ENV = ("FPT_SEARCH_URL", "FPT_SEARCH_PRESET", "FPT_SEARCH_PROVIDER", "FPT_SEARCH_KEY", "FPT_CONFIG")


@pytest.fixture(autouse=True)
def no_search_api(monkeypatch):
    for var in SEARCH_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def search_api(monkeypatch):
    monkeypatch.setenv("FPT_SEARCH_PRESET", "searxng")
    monkeypatch.setenv("FPT_SEARCH_URL", "http://127.0.0.1:9/search?q={query}&format=json&pageno={page}")


def east_run(store) -> int:
    """A run for the east organisation's work, and a run over every work."""
    run = store.add_discovery_run(DiscoveryRun(started_at=T0 + timedelta(days=1), finished_at=T0 + timedelta(days=1),
                                               provider="http", work="东城", counts={"queries": 1, "new": 1},
                                               sites_added=["dongcheng"]))
    store.put_discovery_query(DiscoveryQuery(run=run.id, n=0, work="东城", kind="title", text='"东城" "周原"',
                                             returned=1, new=1, sites=["dongcheng"]))
    store.add_discovery_run(DiscoveryRun(started_at=T0, finished_at=T0, provider="http", counts={"queries": 9}))
    return run.id


# ---- pages ---------------------------------------------------------------------------------

def test_the_page_lists_the_runs_with_totals_and_links_to_the_sites_they_added(admin):
    r = admin.get("/discovery/")
    body = r.get_data(as_text=True)
    assert r.status_code == 200
    assert 'href="/discovery/runs/1"' in body and "/sites/view?name=biquge" in body and "山城旧事" in body
    assert "<td class=\"n\">3</td>" in body  # returned
    assert '<span class="warn">1</span>' in body  # one query failed


def test_a_run_page_shows_every_query_and_what_it_found(viewer):
    r = viewer.get("/discovery/runs/1")
    body = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "sentence" in body and "陈守义坐在茶馆" in body and "title" in body and "&#34;山城旧事&#34; &#34;林岚&#34;" in body
    assert "answered HTTP 429" in body and "/sites/view?name=biquge" in body
    assert body.count("<tr>") == 3  # the header and two queries


@pytest.mark.parametrize("path", ["/discovery/runs/2", "/discovery/runs/0", "/discovery/runs/abc",
                                  "/discovery/runs/-1", "/discovery/runs/" + "9" * 30, "/discovery/runs/1.5",
                                  "/api/discovery/runs/2", "/api/discovery/runs/0", "/api/discovery/runs/" + "9" * 30,
                                  "/api/discovery/runs/x"])
def test_a_bad_run_id_is_a_404(admin, path):
    r = admin.get(path)
    assert r.status_code == 404, r.get_data(as_text=True)[:300]
    if path.startswith("/api/"):
        assert r.get_json()["error"] == "not found"


def test_without_a_search_api_the_page_says_how_to_set_one_instead_of_a_button(admin):
    body = admin.get("/discovery/").get_data(as_text=True)
    assert "no search API is configured" in body and "FPT_SEARCH_URL" in body and "FPT_SEARCH_PRESET" in body
    assert 'id="discover-form"' not in body
    r = admin.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(admin, "/")})
    assert r.status_code == 302 and r.headers["Location"].startswith("/discovery/")
    assert "no search API is configured" in admin.get(r.headers["Location"]).get_data(as_text=True)


def test_with_a_search_api_an_admin_gets_the_button_and_a_viewer_does_not(app, search_api):
    admin, viewer = signed_in(app, "admin"), signed_in(app, "viewer")
    body = admin.get("/discovery/?work=山城旧事").get_data(as_text=True)
    assert 'id="discover-form"' in body and 'name="work" value="山城旧事"' in body and "through http" in body
    assert 'id="discover-form"' in admin.get("/discovery/").get_data(as_text=True)  # a list of the works
    body = viewer.get("/discovery/").get_data(as_text=True)
    assert 'id="discover-form"' not in body and "An admin can start" in body
    assert viewer.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(viewer, "/")}
                       ).status_code == 403
    assert admin.post("/discovery/start", data={"work": "山城旧事"}).status_code == 400  # no CSRF token


def test_a_bad_search_setting_is_said_with_its_fix(admin, monkeypatch):
    monkeypatch.setenv("FPT_SEARCH_URL", "https://api.example/search")
    body = admin.get("/discovery/").get_data(as_text=True)
    assert "has no {query}" in body and 'id="discover-form"' not in body


def test_the_work_page_links_to_its_discovery(admin):
    assert "/discovery/?work=" in admin.get("/works/山城旧事").get_data(as_text=True)


def test_search_now_starts_the_background_run_once(app, store, search_api, monkeypatch):
    started = []

    def fake_start(settings, work):
        started.append(work)
        return {"state": "starting", "work": work, "pid": 1, "running": True}

    monkeypatch.setattr(discovery_runs, "start", fake_start)
    admin = signed_in(app, "admin")
    r = admin.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(admin, "/")})
    assert r.status_code == 302 and started == ["山城旧事"]
    assert "Searching the web for copies of 《山城旧事》" in admin.get(r.headers["Location"]).get_data(as_text=True)
    assert admin.post("/discovery/start", data={"work": "不存在", "csrf_token": csrf_token(admin, "/")}
                      ).status_code == 404
    assert admin.post("/discovery/start", data={"csrf_token": csrf_token(admin, "/")}).status_code == 400
    assert started == ["山城旧事"]
    monkeypatch.setattr(discovery_runs, "read_state", lambda settings, work: {
        "state": "running", "work": work, "pid": 1, "run": 5, "stage": "search", "done": 1, "queries": 4,
        "started_at": "2026-11-25T15:00:00+00:00", "running": True})
    r = admin.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(admin, "/")})
    assert r.status_code == 302 and started == ["山城旧事"]
    body = admin.get(r.headers["Location"]).get_data(as_text=True)
    assert "already running" in body and "1 of 4 queries sent" in body and 'href="/discovery/runs/5"' in body
    assert 'http-equiv="refresh"' in body


# ---- the API ---------------------------------------------------------------------------------

def test_the_api_lists_runs_and_one_run_with_its_queries(client, tokens):
    r = client.get("/api/discovery/runs", headers=bearer(tokens["read"]))
    assert r.status_code == 200
    d = r.get_json()
    (run,) = d["runs"]
    assert run["id"] == 1 and run["work"] == "山城旧事" and run["sites_added"] == ["biquge"]
    assert run["counts"]["matches"] == 2 and d["search"]["ready"] is False and "FPT_SEARCH_URL" in d["search"]["how"]
    r = client.get("/api/discovery/runs/1", headers=bearer(tokens["read"]))
    d = r.get_json()
    assert d["run"]["id"] == 1
    assert [(q["n"], q["kind"], q["returned"], q["new"], q["stored"], q["matches"], q["sites"]) for q in d["queries"]] \
        == [(0, "sentence", 3, 2, 2, 2, ["biquge"]), (1, "title", 0, 0, 0, 0, [])]
    assert "429" in d["queries"][1]["error"]
    assert client.get("/api/discovery/runs?work=山城旧事", headers=bearer(tokens["read"])).get_json()["runs"]
    assert client.get("/api/discovery/runs?work=不存在", headers=bearer(tokens["read"])).status_code == 404
    for bad in ("0", "501", "x"):
        assert client.get(f"/api/discovery/runs?limit={bad}", headers=bearer(tokens["read"])).status_code == 400
    assert client.get("/api/discovery/runs").status_code == 401


def test_the_api_starts_discovery_with_a_write_token_and_says_when_it_cannot(client, tokens, monkeypatch):
    url = "/api/works/山城旧事/discover"
    assert client.post(url, json={}, headers=bearer(tokens["read"])).status_code == 403
    r = client.post(url, headers=bearer(tokens["write"]))
    assert r.status_code == 409 and "FPT_SEARCH_URL" in r.get_json()["message"]
    r = client.post(url, json={"dry_run": True}, headers=bearer(tokens["write"]))
    assert r.status_code == 200
    queries = r.get_json()["queries"]
    assert queries[0] == {"n": 0, "kind": "title", "text": '"山城旧事" "林岚"'}
    assert client.post(url, json={"dry_run": "yes"}, headers=bearer(tokens["write"])).status_code == 400
    assert client.post("/api/works/不存在/discover", json={}, headers=bearer(tokens["write"])).status_code == 404
    monkeypatch.setenv("FPT_SEARCH_URL", "http://127.0.0.1:9/search?q={query}")
    monkeypatch.setattr(discovery_runs, "start", lambda settings, work: {"state": "starting", "work": work,
                                                                          "running": True})
    r = client.post(url, json={}, headers=bearer(tokens["write"]))
    assert r.status_code == 202 and r.get_json()["work"] == "山城旧事" and r.get_json()["state"] == "starting"


# ---- organisations -----------------------------------------------------------------------------

def test_each_organisation_sees_the_runs_of_its_works_and_an_operator_sees_all(app, east):
    mine = east_run(east)
    eve, admin, root = signed_in(app, "eve"), signed_in(app, "admin"), signed_in(app, "root")
    body = eve.get("/discovery/").get_data(as_text=True)
    assert f'href="/discovery/runs/{mine}"' in body and 'href="/discovery/runs/1"' not in body
    assert "dongcheng" in body and "biquge" not in body and "陈守义" not in body
    assert eve.get(f"/discovery/runs/{mine}").status_code == 200
    r = eve.get("/discovery/runs/1")
    assert r.status_code == 404 and "陈守义" not in r.get_data(as_text=True)
    assert eve.get("/api/discovery/runs/1").status_code == 404
    assert [r["id"] for r in eve.get("/api/discovery/runs").get_json()["runs"]] == [mine]
    assert eve.get("/discovery/?work=山城旧事").status_code == 404
    assert eve.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(eve, "/")}
                    ).status_code == 404
    assert eve.post("/api/works/山城旧事/discover", json={"dry_run": True},
                    headers={"X-CSRFToken": csrf_token(eve, "/")}).status_code == 404
    # the default organisation's admin: its run, not east's nor the run over every work
    assert [r["id"] for r in admin.get("/api/discovery/runs").get_json()["runs"]] == [1]
    assert admin.get(f"/discovery/runs/{mine}").status_code == 404
    # an operator: every run, the run over every work too
    ids = [r["id"] for r in root.get("/api/discovery/runs").get_json()["runs"]]
    assert sorted(ids) == [1, mine, mine + 1]
    assert "all works" in root.get("/discovery/").get_data(as_text=True)
    assert root.get(f"/discovery/runs/{mine}").status_code == 200 and root.get("/discovery/runs/1").status_code == 200


def test_a_token_reads_only_its_organisations_runs(client, east):
    mine = east_run(east)
    _, token = create_token(east, "east", "read", "east-reader")
    assert [r["id"] for r in client.get("/api/discovery/runs", headers=bearer(token)).get_json()["runs"]] == [mine]
    assert client.get("/api/discovery/runs/1", headers=bearer(token)).status_code == 404
    assert client.get(f"/api/discovery/runs/{mine}", headers=bearer(token)).get_json()["queries"][0]["work"] == "东城"
    _, default_token = create_token(east, DEFAULT_ORG, "read", "default-reader")
    assert client.get(f"/api/discovery/runs/{mine}", headers=bearer(default_token)).status_code == 404


# ---- end to end ------------------------------------------------------------------------------

@pytest.mark.slow
def test_search_now_runs_discovery_for_the_work_in_the_background_and_the_page_shows_its_counts(
        settings, monkeypatch):
    """The admin starts discovery for a work; a child process searches the fixture engine, crawls the
    copy it points to, and the run shows on the pages with what each query found."""
    from tests.tracker.fixture_site import pirate_site
    from tests.tracker.search_engine import search_engine
    from tests.tracker.test_discovery import ORIGINALS, chapter_page, originals
    from tracker.context import Context
    from tracker.registry import register_work
    from tracker.store.open import store_at

    store = store_at(None, settings.home)  # the store the child opens too
    ctx = Context(settings, store=store)
    register_work(ctx, "山城旧事", str(ORIGINALS), author="林岚")
    store.upsert_user(User(name="admin", password_hash=generate_password_hash(PASSWORD, "pbkdf2:sha256:1000"),
                           role="admin"))
    app = create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": store})
    admin = app.test_client()
    assert login(admin, "admin").status_code == 302
    try:
        with pirate_site() as copy, search_engine() as engine:
            for n, (title, text) in enumerate(originals(), 1):
                copy.put(f"/book/1/{n}.html", chapter_page(title, text, n))
                engine.index(f"{copy.url}/book/1/{n}.html")
            for var, value in {"FPT_SEARCH_PRESET": "searxng", "FPT_SEARCH_URL": engine.search_url,
                               "FPT_SEARCH_INTERVAL": "0", "FPT_SEARCH_RETRIES": "0", "FPT_SEARCH_TIMEOUT": "5",
                               "FPT_DISCOVERY_SENTENCES": "2", "FPT_DISCOVERY_CHAPTER_TITLES": "0",
                               "FPT_DISCOVERY_MAX_PAGES": "10"}.items():
                monkeypatch.setenv(var, value)
            page = admin.get("/discovery/?work=山城旧事").get_data(as_text=True)
            assert 'id="discover-form"' in page
            r = admin.post("/discovery/start", data={"work": "山城旧事", "csrf_token": csrf_token(admin, "/")})
            assert r.status_code == 302
            deadline = time.monotonic() + 120
            state = discovery_runs.read_state(settings, "山城旧事")
            while state["running"] and time.monotonic() < deadline:
                time.sleep(0.5)
                state = discovery_runs.read_state(settings, "山城旧事")
            log = discovery_runs.state_file(settings, "山城旧事").with_suffix(".log")
            assert state["state"] == "finished", (state, log.read_text(errors="replace")[-2000:])
            asked = list(engine.queries)
        check_the_pages(admin, store, state, copy, asked)
    finally:
        ctx.close()


def check_the_pages(admin, store, state, copy, asked) -> None:
    copy_site = f"127.0.0.1:{copy.url.rsplit(':', 1)[1]}"
    run_id = state["run"]
    run = store.get_discovery_run(run_id)
    assert run.work == "山城旧事" and run.outcome == "finished" and run.sites_added == [copy_site]
    assert run.counts["queries"] == 3 and run.counts["failed"] == 0 and run.counts["matches"] == 3 and asked
    assert state["counts"] == run.counts and state["sites_added"] == [copy_site]

    page = admin.get("/discovery/").get_data(as_text=True)
    assert f'href="/discovery/runs/{run_id}"' in page and f"/sites/view?name={copy_site}" in page
    d = admin.get(f"/api/discovery/runs/{run_id}").get_json()
    queries = store.discovery_queries(run_id)
    assert [(q["kind"], q["text"], q["returned"], q["new"], q["stored"], q["matches"], q["sites"])
            for q in d["queries"]] == [(q.kind, q.text, q.returned, q.new, q.stored, q.matches, q.sites)
                                       for q in queries]
    assert sum(q.matches for q in queries) == run.counts["matches"] and any(q.returned for q in queries)
    body = admin.get(f"/discovery/runs/{run_id}").get_data(as_text=True)
    credited = next(q for q in queries if q.sites)
    assert "finished" in body and f"/sites/view?name={copy_site}" in body
    assert f'<td class="n">{credited.stored}</td><td class="n">{credited.matches}</td>' in body
    now = admin.get("/discovery/?work=山城旧事").get_data(as_text=True)
    assert f'href="/discovery/runs/{run_id}"' in now and "finished" in now
