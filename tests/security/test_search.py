"""Discovery's search API and the URLs it returns, under the egress policy."""
from __future__ import annotations

import json

import pytest

from tracker.discovery.providers import HTTPSearchProvider, SearchError, config_from

from .servers import answer, cut_chunked


def provider(url: str) -> HTTPSearchProvider:
    return HTTPSearchProvider(config_from({"url": url + "/search?q={query}&format=json", "retries": 1,
                                           "backoff": 0, "interval": 0}, "searxng"), sleep=lambda s: None)


def results(*urls: str) -> bytes:
    return json.dumps({"results": [{"url": u, "title": "t", "content": "c"} for u in urls]}).encode()


def test_a_search_api_on_a_refused_address_is_one_line_with_the_setting(serve):
    engine = serve(answer(results("https://pirate.example/1.html"), headers="Content-Type: application/json"))
    with pytest.raises(SearchError) as e:
        provider(engine.url).search("山城旧事", limit=5)
    assert str(e.value).startswith(f"refused to fetch {engine.url}/search?q=")
    assert "127.0.0.1 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.1/32" in str(e.value)
    assert engine.requests == []


def test_results_on_internal_addresses_are_dropped(serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    engine = serve(answer(results("https://pirate.example/1.html", "http://169.254.169.254/latest/meta-data/",
                                  "http://2130706434:6379/", "http://[::ffff:10.0.0.1]/", "http://10.1.2.3/x",
                                  "https://copies.example/2.html"), headers="Content-Type: application/json"))
    p = provider(engine.url)
    found = p.search("山城旧事", limit=10)
    assert [r.url for r in found] == ["https://pirate.example/1.html", "https://copies.example/2.html"]
    assert p.refused == 4


def test_a_cut_answer_is_retried_then_one_line(serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    engine = serve(cut_chunked(b'{"results": ['))
    p = provider(engine.url)
    with pytest.raises(SearchError, match=r"broke off its answer \(incomplete answer\) \(2 tries\)"):
        p.search("山城旧事", limit=5)
    assert len(engine.requests) == 2
