"""The first attack as it was made: an organisation's admin (a write token would do the same)
adds a site at an internal address through the API and starts its crawl. The crawl, a child
process as every admin-started crawl, refuses it: nothing is fetched, nothing is stored, the
run's failure says why."""
from __future__ import annotations

import pytest

from tests.web.test_manage_sites import BASIC, home_store, wait_for  # noqa: F401  (home_store: a fixture)
from web import create_app

from .servers import answer, routes

SECRET = "<html><body><div id='content'>" + "INTERNAL SECRET 内部资料。" * 30 + "</div></body></html>"

pytestmark = pytest.mark.slow


@pytest.fixture
def api(home_store, settings):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": home_store}).test_client()


def test_a_site_added_at_an_internal_address_through_the_api_is_not_crawled(api, home_store, serve,
                                                                             monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")  # a test server the operator allows; not this one
    internal = serve(routes({"/secret/": answer(SECRET.encode()), "/robots.txt": answer(b"", "404 Not Found")}),
                     host="127.0.0.2")
    r = api.post("/api/sites", json={"url": f"{internal.url}/secret/", "name": "inside"}, headers=BASIC)
    assert r.status_code == 201, r.get_json()
    assert api.post("/api/sites/inside/crawl", headers=BASIC).status_code == 202
    done = wait_for(api, "inside", ("finished", "paused", "failed"))
    assert internal.requests == []
    assert home_store.count_pages(site="inside") == 0
    (run,) = home_store.crawl_runs(site="inside")
    assert run.failed == {"refused: 127.0.0.2 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.2/32": 1}, \
        (done, run)
