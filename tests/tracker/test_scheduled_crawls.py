"""The hourly check (tracker.tasks.scheduled_crawls) run eagerly against an SQLite store: it crawls
the sites due now and only those, once per slot; the crawl's child process is replaced at its
launch (subprocess.run), the selection is real. And stores made before schedules existed."""
from __future__ import annotations

import json
import sqlite3
import subprocess
from datetime import UTC, datetime

import mongomock
import pytest

from tracker.settings import Settings
from tracker.store import Site
from tracker.store.mongo import MongoStore
from tracker.store.sqlite import SQLiteStore
from tracker.workers import tasks
from tracker.workers.app import create_celery

CREATED = datetime(2026, 11, 24, 6, tzinfo=UTC)  # after the 24th's slots of 03:00 and 05:00


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


@pytest.fixture
def app(tmp_path):
    settings = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_RECRAWL_HOUR": "3"})
    app = create_celery(settings, task_always_eager=True)
    yield app
    tasks.use_context(app, None)


@pytest.fixture
def store(app):
    s = tasks.context(app).store
    for name, kw in (("daily", {}), ("at-five", {"hour": 5}), ("paused", {"recrawl": False}),
                     ("weekly", {"hour": 3, "every": 7})):
        s.upsert_site(Site(name=name, start_urls=[f"https://{name}.test/"], created_at=CREATED, **kw))
    return s


@pytest.fixture
def launched(monkeypatch):
    """The crawl commands started; each 'stores' one page per site it names."""
    commands: list[list[str]] = []

    def run(cmd, **kw):
        commands.append(cmd)
        sites = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--site"]
        out = "".join(json.dumps({"site": s, "stored": 1}) + "\n" for s in sites)
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr="")

    monkeypatch.setattr(subprocess, "run", run)
    return commands


def check(app, monkeypatch, when: datetime) -> dict:
    monkeypatch.setattr(tasks, "now", lambda: when)
    return app.tasks["tracker.tasks.scheduled_crawls"].apply_async().get()


def sites_of(cmd: list[str]) -> list[str]:
    return [cmd[i + 1] for i, a in enumerate(cmd) if a == "--site"]


def test_beat_sends_the_check_every_hour(app):
    entry = app.conf.beat_schedule["hourly-scheduled-crawls"]
    assert entry["task"] == "tracker.tasks.scheduled_crawls"
    assert entry["schedule"].minute == {0} and entry["schedule"].hour == set(range(24))
    assert entry["options"]["expires"] < 3600  # a check left waiting an hour is dropped for the next one


def test_the_hourly_check_crawls_only_the_sites_due(app, store, launched, monkeypatch):
    assert check(app, monkeypatch, at(25, 3)) == {"due": ["daily", "weekly"], "stored": 2}
    (cmd,) = launched
    assert sites_of(cmd) == ["daily", "weekly"] and "--all-sites" not in cmd
    assert cmd[1:4] == ["-m", "fptrack", "crawl"] and "--no-process" not in cmd  # the crawl sends its pages on
    assert check(app, monkeypatch, at(25, 4)) == {"due": [], "stored": 0}
    assert check(app, monkeypatch, at(25, 5)) == {"due": ["at-five"], "stored": 1}
    assert [sites_of(c) for c in launched] == [["daily", "weekly"], ["at-five"]]


def test_a_check_sent_twice_in_one_hour_crawls_nothing_twice(app, store, launched, monkeypatch):
    check(app, monkeypatch, at(25, 3))
    assert check(app, monkeypatch, at(25, 3, 20)) == {"due": [], "stored": 0}
    assert len(launched) == 1


def test_lost_checks_are_made_up_once(app, store, launched, monkeypatch):
    check(app, monkeypatch, at(25, 3))
    check(app, monkeypatch, at(25, 5))
    # the worker was down from 02:00 to 06:00 on the 26th
    assert check(app, monkeypatch, at(26, 6)) == {"due": ["at-five", "daily"], "stored": 2}
    assert check(app, monkeypatch, at(26, 7)) == {"due": [], "stored": 0}
    assert store.get_site("daily").last_scheduled == at(26, 3)


def test_a_changed_schedule_applies_at_the_next_check(app, store, launched, monkeypatch):
    check(app, monkeypatch, at(25, 3))
    check(app, monkeypatch, at(25, 5))
    store.upsert_site(Site(name="daily", start_urls=["https://daily.test/"], hour=22))
    store.upsert_site(Site(name="paused", start_urls=["https://paused.test/"], recrawl=True, hour=22))
    assert check(app, monkeypatch, at(25, 22)) == {"due": ["paused"], "stored": 1}  # daily had the 25th
    assert check(app, monkeypatch, at(26, 22))["due"] == ["at-five", "daily", "paused"]  # at-five: 05:00 lost


def test_no_site_due_starts_no_crawl(app, store, monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: pytest.fail("no crawl should start"))
    assert check(app, monkeypatch, at(25, 1)) == {"due": [], "stored": 0}


def test_the_daily_run_crawls_no_site(app, store, monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: pytest.fail("the daily run crawls no site"))
    summary = app.tasks["tracker.tasks.daily"].apply_async().get()
    assert "crawled" not in summary and summary["queued"] == 0


# ---- stores made before schedules -------------------------------------------------------------

def test_an_sqlite_store_made_before_schedules_gets_their_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE sites (name TEXT PRIMARY KEY, start_urls TEXT NOT NULL, rules TEXT NOT NULL, "
                "recrawl INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)")
    raw.execute("INSERT INTO sites VALUES ('old', '[\"https://old.test/\"]', '{}', 1, "
                "'2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')")
    raw.commit()
    raw.close()
    s = SQLiteStore(path)
    old = s.get_site("old")
    assert (old.hour, old.every, old.last_scheduled, old.recrawl) == (None, 1, None, True)
    assert s.claim_site_slot("old", at(25, 3)) and s.get_site("old").last_scheduled == at(25, 3)
    s.close()


def test_a_mongo_site_stored_before_schedules_reads_with_the_defaults():
    client = mongomock.MongoClient()
    client["fpt"]["sites"].insert_one({"name": "old", "start_urls": ["https://old.test/"], "rules": {},
                                       "recrawl": True, "created_at": CREATED, "updated_at": CREATED})
    s = MongoStore(client=client, db="fpt")
    old = s.get_site("old")
    assert (old.hour, old.every, old.last_scheduled) == (None, 1, None)
    assert s.claim_site_slot("old", at(25, 3)) and not s.claim_site_slot("old", at(25, 3))
    s.close()
