"""The follow-up page and its JSON: per site the takedowns sent, removed, median days to
removal and pages still up; the open takedowns with their latest re-check; the events."""
from __future__ import annotations

from tracker.store.followup import Event, Recheck

from .conftest import T0, XSS, XSS_ATTR

P1, P2, EVIL = "https://biquge.example/1.html", "https://biquge.example/2.html", "evil-1"
CH1, CH2 = "山城旧事/第1章", "山城旧事/第2章"


def send_and_remove(store):
    for page, chapter in ((P1, CH1), (P2, CH2), (EVIL, CH1)):
        store.set_match_status(page, chapter, "confirmed", by="admin")
        store.set_match_status(page, chapter, "takedown-sent", by="admin")
    store.set_match_status(P2, CH2, "removed", by="fptrack recheck")
    store.put_recheck(Recheck(page=P1, site="biquge", url=P1, outcome="up", checked_at=T0, http_status=200))
    store.add_event(Event(id="removed:1", kind="removed", at=T0, site="biquge", page=P2, chapter=CH2,
                          summary=f"removed 0 days after the takedown: {CH2} on biquge: {P2} {XSS}"))


def test_the_page_shows_the_numbers_per_site(admin, store):
    send_and_remove(store)
    r = admin.get("/followup/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Follow-up" in html and 'aria-current="page">Follow-up' in html
    assert "Takedowns sent" in html and "Median days to removal" in html and "Pages still up" in html
    assert P1 in html and "2026-11-20 06:10" in html and "up" in html and "(200)" in html
    assert XSS not in html and XSS_ATTR not in html  # names from crawled pages are escaped


def test_the_json_has_the_same_data(admin, store):
    send_and_remove(store)
    d = admin.get("/api/followup").get_json()
    by_site = {s["site"]: s for s in d["sites"]}
    assert by_site["biquge"]["takedowns_sent"] == 2 and by_site["biquge"]["removed"] == 1
    assert by_site["biquge"]["median_days_to_removal"] == 0 and by_site["biquge"]["pages_still_up"] == 1
    assert by_site[XSS_ATTR]["pages_still_up"] == 1
    assert {(m["page"], m["last_outcome"]) for m in d["open"]} == {(P1, "up"), (EVIL, "")}
    assert [e["kind"] for e in d["events"]] == ["removed"]
    only = admin.get("/api/followup?site=biquge").get_json()
    assert [s["site"] for s in only["sites"]] == ["biquge"] and [m["page"] for m in only["open"]] == [P1]


def test_with_no_takedown_the_page_says_so(viewer):
    html = viewer.get("/followup/").get_data(as_text=True)
    assert "No takedown sent yet" in html and "No copy is waiting" in html and "Nobody yet" in html


def test_subscriptions_are_shown_without_a_webhook_path(admin, store):
    from tracker.followup.notify import subscribe

    subscribe(store, "email", "rights@example.com", work="山城旧事")
    subscribe(store, "webhook", "https://hooks.chat.example/services/T0/B0/xoxb-secret", site="biquge", secret="k")
    d = admin.get("/api/followup").get_json()
    assert sorted((s["channel"], s["target"], s["work"], s["site"]) for s in d["subscriptions"]) == [
        ("email", "rights@example.com", "山城旧事", ""), ("webhook", "https://hooks.chat.example/…", "", "biquge")]
    html = admin.get("/followup/").get_data(as_text=True)
    assert "rights@example.com" in html and "xoxb-secret" not in html and "services/T0" not in html
