"""Heavy summaries are shared between requests for a few seconds, and a change made
through the admin shows at once."""
from __future__ import annotations

import threading
import time

from tracker.store import MatchRecord
from web.reports.snapshots import Snapshots

from .conftest import post


def test_a_value_is_computed_once_while_fresh():
    calls = []
    s = Snapshots(ttl=60)
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 1
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 1
    assert s.get("other", lambda: "x") == "x"
    s.clear()
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 2


def wait_for(s: Snapshots, key, value, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = s.get(key, lambda: "never computed in the request")
        if got == value:
            return got
        time.sleep(0.01)
    return got


def test_an_old_value_is_served_at_once_and_computed_again_in_the_background():
    s = Snapshots(ttl=0.05)
    s.get("k", lambda: 1)
    time.sleep(0.1)
    gate, started = threading.Event(), threading.Event()

    def slow():
        started.set()
        gate.wait(5)
        return 2

    t0 = time.monotonic()
    assert s.get("k", slow) == 1  # the old value, without waiting for the new one
    assert time.monotonic() - t0 < 1 and started.wait(5)
    assert s.get("k", slow) == 1  # one refresh at a time
    gate.set()
    assert wait_for(s, "k", 2) == 2
    s.close()
    assert Snapshots(ttl=0).get("k", lambda: 3) == 3 and Snapshots(ttl=0).get("k", lambda: 4) == 4


def test_a_refresh_begun_before_a_change_is_thrown_away():
    s = Snapshots(ttl=0.01)
    s.get("k", lambda: "before")
    time.sleep(0.05)
    gate = threading.Event()
    s.get("k", lambda: gate.wait(5) and "computed from the store before the change")
    s.clear()  # a change through the admin
    assert s.get("k", lambda: "after") == "after"
    gate.set()
    s.close()  # the refresh finishes; what it computed is older than the change
    assert s.get("k", lambda: "again") == "after"


def test_a_failed_refresh_keeps_the_old_value(caplog):
    s = Snapshots(ttl=0.01)
    s.get("k", lambda: "old")
    time.sleep(0.05)
    s.get("k", lambda: 1 / 0)
    s.close()
    assert s.get("k", lambda: "new") == "old"  # served again, and refreshed again in the background
    assert "previous one is still shown" in caplog.text
    assert wait_for(s, "k", "new") == "new"
    s.close()


def test_callers_at_the_same_time_share_one_computation():
    s = Snapshots(ttl=60)
    calls = []
    gate = threading.Event()

    def slow():
        calls.append(1)
        gate.wait(5)
        return "done"

    got = []
    threads = [threading.Thread(target=lambda: got.append(s.get("dash", slow))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    gate.set()
    for t in threads:
        t.join()
    assert got == ["done"] * 8 and len(calls) == 1


def test_dashboard_is_shared_until_a_change_through_the_admin(admin, store):
    before = admin.get("/api/dashboard").get_json()["counts"]["matches"]["new"]
    store.upsert_match(MatchRecord(page="https://biquge.example/2.html", chapter="山城旧事/第3章", work="山城旧事",
                                   site="biquge", similarity=0.5, containment=0.5, page_share=0.5, verdict="copy"))
    assert admin.get("/api/dashboard").get_json()["counts"]["matches"]["new"] == before  # the shared snapshot
    r = post(admin, "/matches/status", {"match": '["https://biquge.example/1.html", "山城旧事/第1章"]',
                                        "status": "confirmed"})
    assert r.status_code in (200, 302)
    after = admin.get("/api/dashboard").get_json()["counts"]["matches"]
    assert after["new"] == before + 1 - 1 and after["confirmed"] >= 1  # one added, one confirmed
