"""The store contract for site schedules: hour and every kept by upsert_site, the last
scheduled slot written only by claim_site_slot, forward only and once per slot."""
from __future__ import annotations

from tracker.store import Site

from .store_contract import at


def site(name: str = "biquge", **kw) -> Site:
    return Site(name=name, start_urls=[f"https://{name}.test/"], **kw)


class SiteScheduleContract:
    def test_a_site_without_a_schedule_has_the_defaults(self, store):
        s = store.upsert_site(site())
        assert (s.hour, s.every, s.last_scheduled) == (None, 1, None)

    def test_hour_and_every_round_trip_and_change(self, store):
        s = store.upsert_site(site(hour=22, every=7, recrawl=False))
        assert (s.hour, s.every, s.recrawl) == (22, 7, False)
        store.upsert_site(site(hour=0, every=30))
        assert (store.get_site("biquge").hour, store.get_site("biquge").every) == (0, 30)
        store.upsert_site(site())  # back to the defaults
        assert [(x.hour, x.every) for x in store.sites()] == [(None, 1)]

    def test_a_slot_is_claimed_once_and_only_forward(self, store):
        store.upsert_site(site(hour=3))
        assert store.claim_site_slot("biquge", at(60))
        assert not store.claim_site_slot("biquge", at(60))  # another check had it
        assert not store.claim_site_slot("biquge", at(0))  # never backwards
        assert store.get_site("biquge").last_scheduled == at(60)
        assert store.claim_site_slot("biquge", at(120))
        assert store.get_site("biquge").last_scheduled == at(120)

    def test_upsert_keeps_the_last_scheduled_slot(self, store):
        store.upsert_site(site())
        store.claim_site_slot("biquge", at(60))
        store.upsert_site(site(hour=5, last_scheduled=at(1)))  # an edit of the rules never moves it
        s = store.get_site("biquge")
        assert (s.hour, s.last_scheduled) == (5, at(60))

    def test_no_slot_for_a_site_that_is_not_there(self, store):
        assert not store.claim_site_slot("nowhere", at(0))
        store.upsert_site(site("other"))
        assert not store.claim_site_slot("nowhere", at(0))
        assert store.get_site("other").last_scheduled is None
