"""Crawls under the egress policy, in a child process as users run them: a site added at an
internal address, a redirect to one, an address in another spelling and a name that resolves to
one are each refused before any byte is sent, and counted as failed with the reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

from .servers import answer, redirect, routes

FAST = ["--timeout", "3", "--retries", "0", "--delay", "0", "--depth", "2"]
SECRET = "<html><body><div id='content'>" + "INTERNAL SECRET 内部资料。" * 30 + "</div></body></html>"

pytestmark = pytest.mark.slow


def crawl(settings, allow: str, url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("FPT_FETCH_ALLOW", "FPT_WEB_FETCH_PRIVATE")}
    env.update({"FPT_HOME": str(settings.home), "FPT_FETCH_ALLOW": allow})
    r = subprocess.run([sys.executable, "-m", "fptrack", "crawl", url, *FAST, "--format", "jsonl", "-q"],
                       env=env, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert "Traceback" not in r.stderr, r.stderr
    (line,) = r.stdout.splitlines()
    return json.loads(line)


@pytest.fixture
def internal(serve):
    return serve(routes({"/secret": answer(SECRET.encode()), "/robots.txt": answer(b"", "404 Not Found")}),
                 host="127.0.0.2")


def test_a_site_at_an_internal_address_is_refused_and_counted(settings, internal):
    result = crawl(settings, "127.0.0.1/32", f"{internal.url}/secret")
    assert result["failed_reasons"] == {
        "refused: 127.0.0.2 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.2/32": 1}
    assert result["stored"] == 0 and internal.requests == []


def test_a_redirect_to_an_internal_address_is_never_followed(settings, serve, internal):
    outer = serve(routes({"/book/": redirect(f"{internal.url}/secret"), "/robots.txt": answer(b"", "404 Not Found")}))
    result = crawl(settings, "127.0.0.1/32", f"{outer.url}/book/")
    assert result["stored"] == 0 and internal.requests == []
    assert any(r.startswith(b"GET /book/ ") for r in outer.requests)


def test_the_middleware_refuses_every_request_it_sees_redirects_included():
    """A redirect is a new request through the downloader's middlewares; here the hop itself."""
    import asyncio

    from scrapy import Request

    from crawler.middlewares.egress import EgressMiddleware, RefusedRequest
    from tracker.egress import EgressPolicy

    mw = EgressMiddleware(EgressPolicy.from_text("127.0.0.1/32"))
    hop = Request("http://127.0.0.1:8000/book/").replace(url="http://[::ffff:127.0.0.2]:9/secret")
    with pytest.raises(RefusedRequest) as e:
        asyncio.run(mw.process_request(hop))
    assert e.value.reason == ("refused: ::ffff:7f00:2 (127.0.0.2) is a loopback address; "
                              "allow it with FPT_FETCH_ALLOW=127.0.0.2/32")
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/", "s3://bucket/key"):
        with pytest.raises(RefusedRequest, match="only http and https"):
            asyncio.run(mw.process_request(Request(url)))
    assert asyncio.run(mw.process_request(Request("http://127.0.0.1:8000/ok"))) is None


@pytest.mark.parametrize("spelling", ["2130706434", "0x7f000002", "127.2", "0177.0.0.2"])
def test_every_spelling_of_an_internal_address_is_refused(settings, internal, spelling):
    result = crawl(settings, "127.0.0.1/32", f"http://{spelling}:{internal.port}/secret")
    assert list(result["failed_reasons"]) == [
        "refused: 127.0.0.2 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.2/32"]
    assert internal.requests == []


def test_a_name_that_resolves_to_an_internal_address_is_refused_by_the_resolver(settings, serve):
    inside = serve(routes({"/secret": answer(SECRET.encode())}))
    result = crawl(settings, "127.0.0.2/32", f"http://localhost:{inside.port}/secret")
    assert result["failed_reasons"] == {
        "refused: 127.0.0.1 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.1/32": 1}
    assert inside.requests == []


def test_an_allowed_address_is_crawled(settings, serve):
    inside = serve(routes({"/secret": answer(SECRET.encode()), "/robots.txt": answer(b"", "404 Not Found")}))
    result = crawl(settings, "127.0.0.1/32", f"{inside.url}/secret")
    assert result["failed_reasons"] == {} and any(r.startswith(b"GET /secret ") for r in inside.requests)
