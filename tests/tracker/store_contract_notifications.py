"""The follow-up part of the store contract (tracker.store.base.FollowUpStore), for every
backend: subscriptions, events recorded once, deliveries with their log, re-checks."""
from __future__ import annotations

import pytest

from tracker.store import NotFound
from tracker.store.followup import EVENT_KINDS, Delivery, Event, Recheck, Subscription, subscription_id

from .store_contract import T0, at


def subscription(target: str = "ops@example.com", channel: str = "email", **kw) -> Subscription:
    kw.setdefault("created_at", T0)
    sid = subscription_id(channel, target, kw.get("work", ""), kw.get("site", ""))
    return Subscription(id=sid, channel=channel, target=target, **kw)


def event(event_id: str = "new-match:1", kind: str = "new-match", **kw) -> Event:
    kw.setdefault("at", at(1))
    kw.setdefault("work", "山城旧事")
    kw.setdefault("site", "example.com")
    return Event(id=event_id, kind=kind, **kw)


class NotificationsContract:
    # ---- subscriptions -------------------------------------------------------------

    def test_a_subscription_comes_back_and_adding_it_again_updates_it(self, store):
        s = store.upsert_subscription(subscription(work="山城旧事", kinds=["new-match"]))
        assert store.get_subscription(s.id) == s and s.created_at == T0 and s.kinds == ["new-match"]
        again = store.upsert_subscription(subscription(work="山城旧事", created_at=at(9)))
        assert again.id == s.id and again.created_at == T0 and again.kinds == list(EVENT_KINDS)
        assert store.subscriptions() == [again]

    def test_subscriptions_are_listed_oldest_first_and_a_bad_one_is_refused(self, store):
        b = store.upsert_subscription(subscription("b@example.com", created_at=at(2)))
        a = store.upsert_subscription(subscription("https://hooks.example/x", "webhook", secret="s", site="biquge",
                                                   created_at=at(1)))
        assert [s.id for s in store.subscriptions()] == [a.id, b.id]
        assert store.get_subscription(a.id).secret == "s"
        with pytest.raises(ValueError):
            store.upsert_subscription(subscription(channel="pigeon"))
        with pytest.raises(ValueError):
            store.upsert_subscription(subscription(kinds=["gossip"]))
        with pytest.raises(NotFound):
            store.get_subscription("nope")

    def test_deleting_a_subscription_drops_its_pending_deliveries_only(self, store):
        s = store.upsert_subscription(subscription())
        store.add_event(event("e1"))
        store.add_event(event("e2"))
        store.add_delivery(Delivery(event="e1", subscription=s.id, created_at=at(1)))
        store.add_delivery(Delivery(event="e2", subscription=s.id, created_at=at(2)))
        store.record_delivery("e1", s.id, True, "250 ok", at=at(3))
        store.delete_subscription(s.id)
        assert [d.event for d in store.deliveries(subscription=s.id)] == ["e1"]
        with pytest.raises(NotFound):
            store.delete_subscription(s.id)

    # ---- events --------------------------------------------------------------------

    def test_an_event_is_recorded_once(self, store):
        e, new = store.add_event(event(summary="山城旧事 copied", data={"url": "https://example.com/1", "n": 2}))
        assert new and e.summary == "山城旧事 copied" and e.data == {"url": "https://example.com/1", "n": 2}
        assert e.at == at(1) and not e.routed
        again, new = store.add_event(event(summary="other", at=at(5)))
        assert not new and again == e
        assert store.get_event("new-match:1") == e
        with pytest.raises(ValueError):
            store.add_event(event("x", kind="gossip"))
        with pytest.raises(NotFound):
            store.get_event("x")

    def test_events_newest_first_filtered_and_routed(self, store):
        store.add_event(event("a", at=at(1)))
        store.add_event(event("b", kind="crawl-failed", at=at(3), site="biquge"))
        store.add_event(event("c", kind="copy-back", at=at(2)))
        assert [e.id for e in store.events()] == ["b", "c", "a"]
        assert [e.id for e in store.events(kind="copy-back")] == ["c"]
        assert [e.id for e in store.events(site="biquge")] == ["b"]
        assert [e.id for e in store.events(limit=1)] == ["b"]
        store.set_event_routed("c")
        assert [e.id for e in store.events(routed=False)] == ["b", "a"]
        assert [e.id for e in store.events(routed=True)] == ["c"]
        with pytest.raises(NotFound):
            store.set_event_routed("nope")

    # ---- deliveries ----------------------------------------------------------------

    def test_a_delivery_is_pending_until_sent_and_logs_every_attempt(self, store):
        s = store.upsert_subscription(subscription("https://hooks.example/x", "webhook", secret="k"))
        store.add_event(event("e1"))
        d, new = store.add_delivery(Delivery(event="e1", subscription=s.id, created_at=at(1)))
        assert new and d.status == "pending" and d.attempts == 0 and d.log == [] and d.sent_at is None
        failed = store.record_delivery("e1", s.id, False, "HTTP 503", at=at(2))
        assert failed.status == "pending" and failed.attempts == 1
        assert failed.log == [{"at": "2024-05-01T08:32:00.123+00:00", "ok": False, "detail": "HTTP 503"}]
        sent = store.record_delivery("e1", s.id, True, "HTTP 200", at=at(3))
        assert sent.status == "sent" and sent.attempts == 2 and sent.sent_at == at(3)
        assert [entry["ok"] for entry in sent.log] == [False, True]
        again, new = store.add_delivery(Delivery(event="e1", subscription=s.id, created_at=at(9)))
        assert not new and again == sent
        with pytest.raises(NotFound):
            store.record_delivery("e2", s.id, True)

    def test_deliveries_filtered_oldest_first(self, store):
        store.add_delivery(Delivery(event="e2", subscription="s1", created_at=at(2)))
        store.add_delivery(Delivery(event="e1", subscription="s1", created_at=at(1)))
        store.add_delivery(Delivery(event="e1", subscription="s2", created_at=at(1)))
        store.record_delivery("e1", "s2", True)
        assert [(d.event, d.subscription) for d in store.deliveries()] == [("e1", "s1"), ("e1", "s2"), ("e2", "s1")]
        assert [d.event for d in store.deliveries(subscription="s1", status="pending")] == ["e1", "e2"]
        assert [d.subscription for d in store.deliveries(status="sent")] == ["s2"]
        assert [d.subscription for d in store.deliveries(event="e1", limit=1)] == ["s1"]

    # ---- retention -----------------------------------------------------------------

    def _routed(self, store, event_id: str, minutes: float, *, subs=(), sent=()):
        """An event at at(minutes), routed to `subs`, its deliveries to `sent` marked sent."""
        store.add_event(event(event_id, at=at(minutes)))
        for sub in subs:
            store.add_delivery(Delivery(event=event_id, subscription=sub, created_at=at(minutes)))
        for sub in sent:
            store.record_delivery(event_id, sub, True, "250 ok", at=at(minutes + 1))
        store.set_event_routed(event_id)

    def test_purge_removes_old_events_whose_deliveries_are_all_sent_with_them(self, store):
        self._routed(store, "sent", 1, subs=["a", "b"], sent=["a", "b"])
        self._routed(store, "nobody", 2)  # routed, no one wanted it
        self._routed(store, "mixed", 3, subs=["a", "b"], sent=["a"])  # b still pending
        self._routed(store, "waiting", 4, subs=["a"])
        store.record_delivery("waiting", "a", False, "HTTP 503", at=at(5))  # failed, tried again later
        store.add_event(event("unrouted", at=at(1)))
        self._routed(store, "newer", 20, subs=["a"], sent=["a"])
        assert store.purge_events(at(10)) == (2, 2)
        assert sorted(e.id for e in store.events(limit=None)) == ["mixed", "newer", "unrouted", "waiting"]
        assert sorted((d.event, d.subscription) for d in store.deliveries()) == [
            ("mixed", "a"), ("mixed", "b"), ("newer", "a"), ("waiting", "a")]
        assert store.purge_events(at(10)) == (0, 0)  # again: nothing more
        with pytest.raises(NotFound):
            store.get_event("sent")

    def test_an_event_at_the_cut_off_is_kept(self, store):
        self._routed(store, "e", 5, subs=["a"], sent=["a"])
        assert store.purge_events(at(5)) == (0, 0)
        assert store.purge_events(at(5.01)) == (1, 1)

    def test_purge_goes_in_batches_past_the_events_it_keeps(self, store):
        # The oldest events wait for a delivery: each batch moves on past them, not round them again.
        for i in range(7):
            self._routed(store, f"busy{i}", i, subs=["a"])
        for i in range(7, 12):
            self._routed(store, f"done{i}", i, subs=["a"], sent=["a"])
        store.add_event(event("same-time", at=at(11)))  # an unrouted one among them
        assert store.purge_events(at(30), batch=3, dry_run=True) == (5, 5)
        assert len(store.events(limit=None)) == 13 and len(store.deliveries()) == 12  # a dry run removes nothing
        assert store.purge_events(at(30), batch=3) == (5, 5)
        assert sorted(e.id for e in store.events(limit=None)) == [*(f"busy{i}" for i in range(7)), "same-time"]
        assert {d.event for d in store.deliveries()} == {f"busy{i}" for i in range(7)}
        for i in range(7):
            store.record_delivery(f"busy{i}", "a", True, at=at(20))
        assert store.purge_events(at(30), batch=1) == (7, 7)
        assert [e.id for e in store.events(limit=None)] == ["same-time"]
        with pytest.raises(ValueError):
            store.purge_events(at(30), batch=0)

    def test_events_sharing_a_time_are_each_taken_once_across_batches(self, store):
        for i in range(5):
            self._routed(store, f"e{i}", 1, subs=["a"], sent=["a"] if i % 2 else [])
        assert store.purge_events(at(2), batch=2) == (2, 2)
        assert sorted(e.id for e in store.events(limit=None)) == ["e0", "e2", "e4"]

    # ---- re-checks -----------------------------------------------------------------

    def test_the_latest_recheck_of_a_page_replaces_the_last(self, store):
        first = store.put_recheck(Recheck(page="p1", site="biquge", url="https://b.example/1", outcome="up",
                                          checked_at=at(1), http_status=200))
        assert store.get_recheck("p1") == first
        store.put_recheck(Recheck(page="p1", site="biquge", url="https://b.example/1", outcome="gone",
                                  checked_at=at(2), http_status=404, reason="HTTP 404"))
        store.put_recheck(Recheck(page="p0", site="other", url="", outcome="no-url", checked_at=at(2)))
        assert [(r.page, r.outcome) for r in store.rechecks()] == [("p0", "no-url"), ("p1", "gone")]
        assert [r.http_status for r in store.rechecks(site="biquge")] == [404]
        with pytest.raises(ValueError):
            store.put_recheck(Recheck(page="p2", site="", url="", outcome="maybe"))
        with pytest.raises(NotFound):
            store.get_recheck("p2")
