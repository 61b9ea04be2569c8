"""Heavy summaries are shared between requests for a few seconds, and a change made
through the admin shows at once."""
from __future__ import annotations

import threading
import time

from tracker.store import MatchRecord
from web.snapshots import Snapshots

from .conftest import post


def test_a_value_is_computed_once_while_fresh():
    calls = []
    s = Snapshots(ttl=60)
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 1
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 1
    assert s.get("other", lambda: "x") == "x"
    s.clear()
    assert s.get("k", lambda: calls.append(1) or len(calls)) == 2


def test_an_old_value_is_computed_again():
    s = Snapshots(ttl=0.05)
    s.get("k", lambda: 1)
    time.sleep(0.1)
    assert s.get("k", lambda: 2) == 2
    assert Snapshots(ttl=0).get("k", lambda: 3) == 3 and Snapshots(ttl=0).get("k", lambda: 4) == 4


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
