"""Site crawl schedules (tracker.sites.schedule): which slot a check serves, across day, month and
year boundaries, lost checks and changed hours; and the selection against a real store."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.sites.schedule import (
    Schedule,
    ScheduleError,
    check_every,
    check_hour,
    claim_due_sites,
    due_slot,
    first_due,
    last_crawl,
    latest_slot,
    next_crawl,
    schedule_of,
    site_schedule,
)
from tracker.store import CrawlRun, Site
from tracker.store.sqlite import SQLiteStore

UTC = UTC
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def t(day: int, hour: int = 0, minute: int = 0, month: int = 11, year: int = 2026) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


DAILY_3 = Schedule(hour=3)


# ---- values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [-1, 24, 25, "3", 3.0, True, None])
def test_a_bad_hour_names_the_range_and_the_value(bad):
    with pytest.raises(ScheduleError, match=r"hour must be 0-23, got "):
        check_hour(bad)
    if bad == 25:
        with pytest.raises(ScheduleError, match="hour must be 0-23, got 25"):
            check_hour(bad)


@pytest.mark.parametrize("bad", [0, 31, -2, "2", 1.5, False])
def test_a_bad_every_names_the_range_and_the_value(bad):
    with pytest.raises(ScheduleError, match=r"every must be 1-30 \(days between scheduled crawls\), got "):
        check_every(bad)


def test_good_values_pass():
    assert [check_hour(h) for h in (0, 23)] == [0, 23] and [check_every(n) for n in (1, 30)] == [1, 30]


def test_a_site_without_schedule_fields_is_daily_at_the_deployments_hour():
    old = Site(name="old", start_urls=["https://old.test/"])
    assert schedule_of(old, 3) == Schedule(hour=3, every=1, paused=False)
    assert schedule_of(Site(name="s", start_urls=[], hour=0, every=7, recrawl=False), 3) == Schedule(0, 7, True)
    assert Schedule(3).describe() == "daily at 03:00 UTC" and Schedule(22, 2).describe() == "every 2 days at 22:00 UTC"
    assert Schedule(3, paused=True).describe() == "paused"


# ---- slots ----------------------------------------------------------------------------------

@pytest.mark.parametrize("hour, now, slot", [
    (3, t(25, 3), t(25, 3)),  # on the hour
    (3, t(25, 3, 59), t(25, 3)),
    (3, t(25, 2, 30), t(24, 3)),  # before today's: yesterday's
    (3, t(25, 2, 56), t(25, 3)),  # a check a few minutes early (clocks apart) serves the hour
    (23, t(26, 0, 30), t(25, 23)),  # just past midnight
    (0, t(25, 23, 30), t(25, 0)),
    (0, t(1, 0, 0, month=12), t(1, 0, 0, month=12)),  # month boundary
    (23, t(1, 1, 0, month=1, year=2027), t(31, 23, 0, month=12, year=2026)),  # year boundary
    (12, datetime(2026, 11, 25, 20, 0, tzinfo=timezone(timedelta(hours=8))), t(25, 12)),  # any zone: UTC
])
def test_latest_slot(hour, now, slot):
    assert latest_slot(hour, now) == slot


def test_first_due_counts_days_between_slot_dates():
    assert first_due(DAILY_3, t(24, 3), LONG_AGO) == t(25, 3)
    assert first_due(Schedule(3, every=7), t(24, 3), LONG_AGO) == t(1, 3, month=12)
    assert first_due(DAILY_3, t(24, 22), LONG_AGO) == t(25, 3)  # hour moved earlier: the next day still
    assert first_due(Schedule(22), t(24, 3), LONG_AGO) == t(25, 22)  # moved later: not twice on the 24th
    assert first_due(DAILY_3, None, t(24, 2, 59)) == t(24, 3)  # never crawled: the first slot after it was added
    assert first_due(DAILY_3, None, t(24, 3, 1)) == t(25, 3)


# ---- due or not -----------------------------------------------------------------------------

@pytest.mark.parametrize("schedule, last, now, slot", [
    # crawled yesterday: due at its hour today, not before
    (DAILY_3, t(24, 3), t(25, 3), t(25, 3)),
    (DAILY_3, t(24, 3), t(25, 2), None),
    # served today already: the later checks leave it
    (DAILY_3, t(25, 3), t(25, 4), None),
    (DAILY_3, t(25, 3), t(25, 23, 59), None),
    # the 03:00 check was lost: the 04:00 one (or any later that day) serves 03:00
    (DAILY_3, t(24, 3), t(25, 4), t(25, 3)),
    (DAILY_3, t(24, 3), t(26, 2, 50), t(25, 3)),
    # a whole day of checks lost: the latest slot, once
    (DAILY_3, t(22, 3), t(25, 5), t(25, 3)),
    # every 3 days
    (Schedule(3, 3), t(22, 3), t(24, 3), None),
    (Schedule(3, 3), t(22, 3), t(25, 3), t(25, 3)),
    (Schedule(3, 3), t(22, 3), t(27, 10), t(27, 3)),  # late: served on the day it is checked
    # midnight and the last hour of the day, across a month's end
    (Schedule(0), t(30, 0), t(1, 0, month=12), t(1, 0, month=12)),
    (Schedule(23), t(29, 23), t(1, 0, 30, month=12), t(30, 23)),  # 23:00 on the 30th lost, served at 00:30
    (Schedule(23), t(30, 23), t(1, 0, 30, month=12), None),
    # year's end, every 2 days
    (Schedule(6, 2), t(30, 6, month=12), t(1, 6, month=1, year=2027), t(1, 6, month=1, year=2027)),
    # the hour moved: earlier, later
    (DAILY_3, t(24, 22), t(25, 3), t(25, 3)),
    (Schedule(22), t(25, 3), t(25, 22), None),
    (Schedule(22), t(25, 3), t(26, 22), t(26, 22)),
    # last crawled from the admin at 10:00 (no slot): daily at 03:00 from the next day
    (DAILY_3, t(24, 10, 12), t(25, 3), t(25, 3)),
    (DAILY_3, t(25, 10, 12), t(25, 11), None),
    # paused
    (Schedule(3, paused=True), t(1, 3), t(25, 3), None),
])
def test_due_slot(schedule, last, now, slot):
    assert due_slot(schedule, last, LONG_AGO, now) == slot


def test_a_new_site_is_due_at_its_first_slot_after_it_was_added():
    assert due_slot(DAILY_3, None, t(25, 2), t(25, 3)) == t(25, 3)
    assert due_slot(DAILY_3, None, t(25, 10), t(25, 11)) is None  # added after today's slot
    assert due_slot(DAILY_3, None, t(25, 10), t(26, 3)) == t(26, 3)
    assert due_slot(DAILY_3, None, LONG_AGO, t(25, 11)) == t(25, 3)


def test_next_crawl():
    assert next_crawl(DAILY_3, t(24, 3), LONG_AGO, t(24, 15, 20)) == t(25, 3)
    assert next_crawl(Schedule(3, 7), t(24, 3), LONG_AGO, t(24, 15)) == t(1, 3, month=12)
    assert next_crawl(DAILY_3, t(23, 3), LONG_AGO, t(24, 15, 20)) == t(24, 16)  # overdue: the next check
    assert next_crawl(DAILY_3, t(23, 3), LONG_AGO, t(24, 16)) == t(24, 16)
    assert next_crawl(DAILY_3, None, t(24, 15), t(24, 15, 1)) == t(25, 3)
    assert next_crawl(Schedule(3, paused=True), None, LONG_AGO, t(24, 15)) is None


@settings(max_examples=200, deadline=None)
@given(hour=st.integers(0, 23), every=st.integers(1, 30), start=st.integers(0, 24 * 30),
       lost=st.lists(st.booleans(), min_size=24 * 40, max_size=24 * 40))
def test_hourly_checks_serve_each_slot_once_and_make_up_lost_ones(hour, every, start, lost):
    """Forty days of hourly checks, any of them lost: never two crawls on one day or closer than
    `every` days, every crawl on the site's hour, and a crawl on each day a check ran after a
    slot that was due."""
    schedule, created = Schedule(hour, every), t(1, 0, month=10) + timedelta(hours=start)
    last, served = None, []
    for h, is_lost in enumerate(lost):
        now = t(1, 0, month=10) + timedelta(hours=h)
        if now < created:
            continue
        slot = due_slot(schedule, last, created, now)
        if is_lost:
            continue
        if slot is not None:
            assert slot.hour == hour and slot <= now + timedelta(minutes=5) and slot >= created
            served.append(slot)
            last = slot
    for a, b in zip(served, served[1:]):
        assert (b.date() - a.date()).days >= every
    if not any(lost):  # nothing lost: exactly every `every` days from the first slot
        assert served and served[0] == first_due(schedule, None, created)
        assert all((b - a) == timedelta(days=every) for a, b in zip(served, served[1:]))


# ---- against a store ------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.sqlite3")
    yield s
    s.close()


def add(store, name: str, created: datetime | None = None, **kw) -> Site:
    created = t(24, 6) if created is None else created
    return store.upsert_site(Site(name=name, start_urls=[f"https://{name}.test/"], created_at=created, **kw))


def test_the_sites_due_are_claimed_once(store):
    add(store, "daily")  # the deployment's hour, 3
    add(store, "at-five", hour=5)
    add(store, "paused", recrawl=False)
    add(store, "weekly", hour=3, every=7)
    assert claim_due_sites(store, 3, t(25, 3)) == ["daily", "weekly"]
    assert claim_due_sites(store, 3, t(25, 3, 1)) == []  # the same hour again (a second beat)
    assert claim_due_sites(store, 3, t(25, 4)) == []
    assert claim_due_sites(store, 3, t(25, 5)) == ["at-five"]
    assert claim_due_sites(store, 3, t(26, 3)) == ["daily"]
    # no checks from the 26th on until 2 December: at-five's slot of 1 December is made up too
    assert claim_due_sites(store, 3, t(2, 3, month=12)) == ["at-five", "daily", "weekly"]
    add(store, "added-long-ago", hour=5, created=LONG_AGO)  # never crawled: its latest slot, at once
    assert claim_due_sites(store, 3, t(2, 4, month=12)) == ["added-long-ago"]
    assert store.get_site("weekly").last_scheduled == t(2, 3, month=12)
    assert store.get_site("paused").last_scheduled is None


def test_a_lost_hour_is_made_up_by_the_next_check_and_not_twice(store):
    add(store, "s")
    assert claim_due_sites(store, 3, t(25, 3)) == ["s"]
    # the 26th's 03:00 and 04:00 checks are lost
    assert claim_due_sites(store, 3, t(26, 5)) == ["s"]
    assert store.get_site("s").last_scheduled == t(26, 3)
    assert claim_due_sites(store, 3, t(26, 6)) == [] and claim_due_sites(store, 3, t(27, 2)) == []
    assert claim_due_sites(store, 3, t(27, 3)) == ["s"]


def test_a_site_crawled_before_schedules_counts_from_its_last_crawl(store):
    s = add(store, "old")
    # the daily run of an earlier version crawled it at 03:02 today; updated at noon, it waits for tomorrow
    store.add_crawl_run(CrawlRun(site="old", started_at=t(25, 3, 2), finished_at=t(25, 4), outcome="finished"))
    assert last_crawl(store, s) == t(25, 3, 2)
    assert claim_due_sites(store, 3, t(25, 12)) == []
    assert claim_due_sites(store, 3, t(26, 3)) == ["old"]
    # from then on its own slots count, not the crawls started from the admin
    store.add_crawl_run(CrawlRun(site="old", started_at=t(26, 20), finished_at=t(26, 21), outcome="finished"))
    assert last_crawl(store, store.get_site("old")) == t(26, 3)


def test_site_schedule_shows_hour_every_and_the_next_crawl(store):
    add(store, "s", hour=22, every=2, created=t(25, 10))
    shown = site_schedule(store, store.get_site("s"), 3, t(25, 12))
    assert shown == {"hour": 22, "default_hour": False, "every": 2, "paused": False,
                     "text": "every 2 days at 22:00 UTC", "last": None, "next": t(25, 22)}
    shown = site_schedule(store, add(store, "d", recrawl=False), 3, t(25, 12))
    assert (shown["hour"], shown["default_hour"], shown["paused"], shown["next"]) == (3, True, True, None)
