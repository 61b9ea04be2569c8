"""Site crawl schedules: when each watched site is crawled, and which sites are due now.

A site is crawled at one UTC hour of the day (its own `hour`, else FPT_RECRAWL_HOUR) every
`every` days (1 to 30); its `recrawl` flag off means paused. Its slots are the times HH:00
UTC of each day at its hour. Celery beat runs a check every hour (tracker.tasks.scheduled_crawls);
the check crawls the sites whose latest slot is due, after recording that slot as the site's
last scheduled crawl (Site.last_scheduled), so that:

- a lost check (a worker down at 03:00) is made up by the next one: the slot 03:00 is still
  the latest at 04:00, and still due;
- a slot is served once: at 05:00 the recorded 03:00 makes it not due until its next day,
  and two checks running at once cannot both claim it (Store.claim_site_slot);
- the days are counted between slot dates, so moving a site's hour never crawls it twice in
  one day, nor skips a day: last crawled 22:00 on the 1st, hour moved to 03, due 03:00 on the 2nd.

A site never crawled on schedule counts from its last crawl of any kind (the daily run of
earlier versions, or one started from the admin); a site never crawled at all is due at its
first slot after it was added.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

HOURS = range(24)
MAX_EVERY = 30
#: A check that starts a little before the hour (clocks of beat and worker apart) still serves that hour.
SLACK = timedelta(minutes=5)


class ScheduleError(ValueError):
    """A schedule value that cannot be used; the message names it and the range."""


def check_hour(hour: Any) -> int:
    """The hour if it is a whole number 0-23; ScheduleError naming the value otherwise."""
    if isinstance(hour, bool) or not isinstance(hour, int) or hour not in HOURS:
        raise ScheduleError(f"hour must be 0-23, got {hour!r} (the UTC hour of the site's scheduled crawl)")
    return hour


def check_every(every: Any) -> int:
    """The number of days if it is a whole number 1-30; ScheduleError naming the value otherwise."""
    if isinstance(every, bool) or not isinstance(every, int) or not 1 <= every <= MAX_EVERY:
        raise ScheduleError(f"every must be 1-{MAX_EVERY} (days between scheduled crawls), got {every!r}")
    return every


@dataclass(frozen=True)
class Schedule:
    hour: int  # UTC
    every: int = 1  # days
    paused: bool = False

    def describe(self) -> str:
        """'paused', 'daily at 03:00 UTC', 'every 2 days at 03:00 UTC'."""
        if self.paused:
            return "paused"
        return f"{'daily' if self.every == 1 else f'every {self.every} days'} at {self.hour:02d}:00 UTC"


def schedule_of(site: Any, default_hour: int) -> Schedule:
    """The schedule of a stored site (tracker.store.Site); no hour of its own: `default_hour`."""
    hour = default_hour if site.hour is None else site.hour
    return Schedule(hour=hour, every=site.every or 1, paused=not site.recrawl)


def _at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=UTC)


def latest_slot(hour: int, now: datetime) -> datetime:
    """The last HH:00 UTC at or before `now` (give or take SLACK).

    latest_slot(3, 2026-11-25 03:00) -> 2026-11-25 03:00; at 02:30 the same day -> 2026-11-24 03:00.
    """
    now = (now + SLACK).astimezone(UTC)
    slot = _at(now.date(), hour)
    return slot if slot <= now else slot - timedelta(days=1)


def first_due(schedule: Schedule, last: datetime | None, created: datetime) -> datetime:
    """The first slot the site may be crawled for: on the day `every` days after the date of its
    last crawl, or (never crawled) the first one at or after it was added."""
    if last is not None:
        return _at(last.astimezone(UTC).date() + timedelta(days=schedule.every), schedule.hour)
    slot = _at(created.astimezone(UTC).date(), schedule.hour)
    return slot if slot >= created else slot + timedelta(days=1)


def due_slot(schedule: Schedule, last: datetime | None, created: datetime, now: datetime) -> datetime | None:
    """The slot a check at `now` crawls the site for (the latest one, however late the check), or
    None when it is not due: paused, or its latest slot comes before its first due one."""
    if schedule.paused:
        return None
    slot = latest_slot(schedule.hour, now)
    return slot if slot >= first_due(schedule, last, created) else None


def next_crawl(schedule: Schedule, last: datetime | None, created: datetime, now: datetime) -> datetime | None:
    """When the site's next scheduled crawl starts: its first due slot, or, when that has passed
    already, the next hourly check. None when paused."""
    if schedule.paused:
        return None
    first = first_due(schedule, last, created)
    if first > now + SLACK:
        return first
    top = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return top if top == now else top + timedelta(hours=1)


# ---- sites in a store ------------------------------------------------------------------------

def last_crawl(store: Any, site: Any) -> datetime | None:
    """The slot of the site's last scheduled crawl, else the start of its last crawl of any kind."""
    if site.last_scheduled is not None:
        return site.last_scheduled
    runs = store.crawl_runs(site=site.name, limit=1)
    return runs[0].started_at if runs else None


def site_schedule(store: Any, site: Any, default_hour: int, now: datetime) -> dict[str, Any]:
    """A site's schedule as shown in the admin, the API and `fptrack sites`."""
    s = schedule_of(site, default_hour)
    return {"hour": s.hour, "default_hour": site.hour is None, "every": s.every, "paused": s.paused,
            "text": s.describe(), "last": site.last_scheduled,
            "next": next_crawl(s, last_crawl(store, site), site.created_at, now)}


def claim_due_sites(store: Any, default_hour: int, now: datetime) -> list[str]:
    """The sites due at `now`, each with its slot recorded as its last scheduled crawl (a site whose
    slot another check took meanwhile is left out)."""
    due = []
    for site in store.sites():
        slot = due_slot(schedule_of(site, default_hour), last_crawl(store, site), site.created_at, now)
        if slot is not None and store.claim_site_slot(site.name, slot):
            due.append(site.name)
    return due
