"""The discovery part of the store contract (tracker.store.base.DiscoveryStore), for every
backend: runs with their totals, the queries of a run, and URLs remembered once."""
from __future__ import annotations

import pytest

from tracker.store import NotFound
from tracker.store.discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun

from .store_contract import T0, at


def discovery_run(**kw) -> DiscoveryRun:
    kw.setdefault("started_at", T0)
    kw.setdefault("finished_at", T0)
    kw.setdefault("provider", "http")
    return DiscoveryRun(**kw)


def query(run: int, n: int = 0, **kw) -> DiscoveryQuery:
    kw.setdefault("work", "山城旧事")
    kw.setdefault("kind", "sentence")
    kw.setdefault("text", '"山城的雨总是下得没完没了"')
    return DiscoveryQuery(run=run, n=n, **kw)


class DiscoveryContract:
    def test_a_run_gets_an_id_and_its_totals_are_updated(self, store):
        run = store.add_discovery_run(discovery_run(work="山城旧事"))
        other = store.add_discovery_run(discovery_run(started_at=at(5), finished_at=at(5)))
        assert run.id >= 1 and other.id > run.id
        run.finished_at, run.outcome = at(2), "budget"
        run.counts = {"queries": 3, "new": 2, "matches.made": 1}
        run.sites_added = ["127.0.0.1:8001"]
        done = store.update_discovery_run(run)
        assert done == run and store.get_discovery_run(run.id) == run
        assert done.started_at == T0 and done.provider == "http" and done.work == "山城旧事"
        assert [r.id for r in store.discovery_runs()] == [other.id, run.id]  # most recent first
        assert [r.id for r in store.discovery_runs(work="山城旧事")] == [run.id]
        assert [r.id for r in store.discovery_runs(limit=1)] == [other.id]
        assert store.discovery_runs(limit=0) == []

    def test_a_running_run_ends_finished_or_failed(self, store):
        going = store.add_discovery_run(discovery_run(outcome="running", work="山城旧事"))
        stopped = store.add_discovery_run(discovery_run(outcome="running"))
        assert store.get_discovery_run(going.id).outcome == "running"
        going.outcome, stopped.outcome = "finished", "failed"
        store.update_discovery_run(going)
        store.update_discovery_run(stopped)
        assert {r.id: r.outcome for r in store.discovery_runs()} == {going.id: "finished", stopped.id: "failed"}

    def test_unknown_runs_and_bad_records(self, store):
        with pytest.raises(NotFound):
            store.get_discovery_run(987)
        with pytest.raises(NotFound):
            store.update_discovery_run(discovery_run(id=987))
        with pytest.raises(ValueError):
            store.add_discovery_run(discovery_run(outcome="exploded"))
        with pytest.raises(ValueError):
            store.put_discovery_query(query(1, kind="vibes"))
        with pytest.raises(ValueError):
            store.put_discovery_query(query(0))
        with pytest.raises(ValueError):
            store.discovery_runs(limit=-1)

    def test_queries_come_back_in_order_and_putting_one_again_replaces_it(self, store):
        run = store.add_discovery_run(discovery_run())
        second = store.put_discovery_query(query(run.id, 1, kind="title", text='"山城旧事"', error="HTTP 500"))
        first = store.put_discovery_query(query(run.id, 0, returned=7, new=3))
        assert store.discovery_queries(run.id) == [first, second]
        assert second.error == "HTTP 500" and first.returned == 7 and first.sites == []
        counted = store.put_discovery_query(query(run.id, 0, returned=7, new=3, stored=4, matches=2,
                                                  sites=["127.0.0.1:8001", "copy.example"]))
        assert store.discovery_queries(run.id) == [counted, second]
        assert counted.sites == ["127.0.0.1:8001", "copy.example"] and counted.matches == 2
        assert store.discovery_queries(run.id + 1000) == []

    def test_urls_are_remembered_once_with_their_first_query(self, store):
        a = "https://copy.example/book/1/1.html"
        b = "https://copy.example/book/1/2.html?a=1&b=2#x"
        new = store.add_discovered_urls([DiscoveredUrl(url=a, site="copy.example", run=1, query='"q1"', first_seen=T0),
                                         DiscoveredUrl(url=b, site="copy.example", run=1, query='"q1"')])
        assert new == [a, b]
        again = store.add_discovered_urls([DiscoveredUrl(url=b, site="copy.example", run=2, query='"q2"'),
                                           DiscoveredUrl(url="https://other.example/", site="other.example", run=2)])
        assert again == ["https://other.example/"]
        assert store.seen_urls([a, b, "https://never.example/", a]) == {a, b}
        assert store.seen_urls([]) == set()

    def test_many_urls_at_once(self, store):
        urls = [f"https://copy.example/{i}.html" for i in range(1200)]
        assert store.add_discovered_urls([DiscoveredUrl(url=u, site="copy.example") for u in urls[::2]]) == urls[::2]
        assert store.seen_urls(urls) == set(urls[::2])
