"""The first attack, made by another organisation than the default: east's write token adds a
site at an internal address through the API and starts its crawl (a child process, as every
crawl started in the admin). The operator allows one loopback port, for a sample site; the
internal page is on another port of that address, or on another loopback address. Nothing is
fetched from it, nothing stored, the run says why, and east's evidence package of the page
holds none of it."""
from __future__ import annotations

import time

import pytest

from tests.web.test_manage_sites import home_store  # noqa: F401  (a fixture: the store at FPT_HOME)
from tracker.store.tenancy import Organisation
from tracker.tenancy.tokens import create_token
from web import create_app

from .conftest import bearer
from .servers import answer, routes

SECRET = "<html><body><div id='content'>" + "INTERNAL SECRET 内部资料。" * 30 + "</div></body></html>"

pytestmark = pytest.mark.slow


def wait_for(api, headers: dict, name: str, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    state: dict = {}
    while time.monotonic() < deadline:
        state = api.get(f"/api/sites/{name}/crawl", headers=headers).get_json()
        if state["state"] in ("finished", "paused", "failed"):
            return state
        time.sleep(0.3)
    pytest.fail(f"the crawl of {name} did not end: {state}")


@pytest.mark.parametrize("where", ["another port of the allowed address", "another loopback address"])
def test_an_organisations_write_token_cannot_crawl_an_internal_page(home_store, settings, serve,
                                                                     monkeypatch, where):
    sample = serve(answer(b"<html><body>sample</body></html>"))
    internal = serve(routes({"/secret/": answer(SECRET.encode()), "/robots.txt": answer(b"", "404 Not Found")}),
                     host="127.0.0.1" if where.startswith("another port") else "127.0.0.2")
    monkeypatch.setenv("FPT_FETCH_ALLOW", f"127.0.0.1:{sample.port}")  # the operator's one sample site
    home_store.upsert_org(Organisation("east"))
    _, token = create_token(home_store, "east", "write", "east's writer")
    east = bearer(token)
    api = create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": home_store}).test_client()
    url = f"{internal.url}/secret/"
    r = api.post("/api/sites", json={"url": url, "name": "inside"}, headers=east)
    assert r.status_code == 201, r.get_json()
    assert api.post("/api/sites/inside/crawl", headers=east).status_code == 202
    done = wait_for(api, east, "inside")
    assert internal.requests == []
    assert home_store.count_pages(site="inside") == 0
    (run,) = home_store.crawl_runs(site="inside")
    assert list(run.failed) == [
        f"refused: 127.0.0.{1 if where.startswith('another port') else 2} is a loopback address; "
        f"allow it with FPT_FETCH_ALLOW=127.0.0.{1 if where.startswith('another port') else 2}/32"], (done, run)
    r = api.get("/api/evidence/package", query_string={"page_key": url}, headers=east)
    assert r.status_code == 404 and b"INTERNAL SECRET" not in r.get_data()


def test_a_port_entry_crawls_its_port_and_refuses_a_redirect_to_another(settings, serve):
    """FPT_FETCH_ALLOW=127.0.0.1:PORT in a real crawl: the allowed site is fetched and stored (its
    address passes the crawl's resolver too), its redirect to another port of 127.0.0.1 is not."""
    from .test_crawl import crawl

    internal = serve(routes({"/secret": answer(SECRET.encode()), "/robots.txt": answer(b"", "404 Not Found")}))
    page = "<html><body><div id='content'>" + "山城的雨下了整整一夜。" * 40 + "</div></body></html>"
    site = serve(routes({"/book/": answer(page.encode()), "/robots.txt": answer(b"", "404 Not Found"),
                         "/next/": answer(b"", "302 Found", f"Location: {internal.url}/secret")}))
    result = crawl(settings, f"127.0.0.1:{site.port}", f"{site.url}/book/")
    assert result["stored"] == 1 and result["failed_reasons"] == {}, result
    result = crawl(settings, f"127.0.0.1:{site.port}", f"{site.url}/next/")
    assert result["stored"] == 0 and internal.requests == [], result
    assert any(r.startswith(b"GET /next/ ") for r in site.requests)


def test_the_resolver_passes_an_address_a_port_entry_allows_and_no_name():
    from crawler.resolver import EgressResolver, RefusedAddress
    from tracker.egress import EgressPolicy

    resolver = EgressResolver.__new__(EgressResolver)
    resolver.policy = EgressPolicy.from_text("127.0.0.1:8000")
    assert resolver._checked("127.0.0.1", "127.0.0.1") == "127.0.0.1"  # the middleware judged its port
    for address, name in (("127.0.0.1", "localhost"), ("127.0.0.2", "127.0.0.2"), ("::1", "::1")):
        with pytest.raises(RefusedAddress, match="is a loopback address"):
            resolver._checked(address, name)
