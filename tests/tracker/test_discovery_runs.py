"""Discovery runs as the admin follows them: a run is "running" in the store until it ends and
"failed" when an error stops it, reports its progress, records its work's id when named by
title; started in the background (tracker.discovery.child_runs), one at a time per work, its child's
failure and disappearance are said in its state."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tracker.child_jobs import write_state
from tracker.discovery import child_runs as discovery_runs
from tracker.discovery.discover import DiscoverySettings, discover
from tracker.store import Chapter, Work

SMALL = DiscoverySettings(discovery_sentences=1, discovery_chapter_titles=0)
TEXT = "陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。雨停了，码头上的人渐渐多起来。"


@pytest.fixture
def work(ctx):
    ctx.store.upsert_work(Work(id="shancheng", title="山城旧事", author="林岚"))
    ctx.store.upsert_chapter(Chapter(key="shancheng/1", work="shancheng", title="第一章", text=TEXT * 3, number=1))
    return ctx


class Watching:
    """A provider that looks at the run while it searches."""

    name = "watching"

    def __init__(self, store, fail_on: int | None = None):
        self.store, self.fail_on, self.outcomes = store, fail_on, []

    def search(self, query, *, limit):
        (run,) = self.store.discovery_runs()
        self.outcomes.append(run.outcome)
        if self.fail_on is not None and len(self.outcomes) > self.fail_on:
            raise RuntimeError("the plug-in broke")
        return []


def test_a_run_is_running_until_it_ends_reports_its_progress_and_records_the_works_id(work):
    provider, steps = Watching(work.store), []
    report = discover(work, SMALL, provider=provider, work="山城旧事", progress=steps.append)
    n = len(report.queries)
    assert n >= 1 and provider.outcomes == ["running"] * n
    assert report.run.outcome == "finished" and report.run.work == "shancheng"
    assert work.store.discovery_runs(work="shancheng") == [report.run]
    assert [(s["stage"], s["done"], s["queries"]) for s in steps] == [("search", i, n) for i in range(n)] + \
        [("crawl", n, n)]
    assert {s["run"] for s in steps} == {report.run.id}


def test_a_run_stopped_by_an_error_is_failed(work):
    with pytest.raises(RuntimeError, match="the plug-in broke"):
        discover(work, SMALL, provider=Watching(work.store, fail_on=0), work="shancheng")
    (run,) = work.store.discovery_runs()
    assert run.outcome == "failed" and run.finished_at >= run.started_at


def wait(settings, work: str, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    state = discovery_runs.read_state(settings, work)
    while state["running"] and time.monotonic() < deadline:
        time.sleep(0.2)
        state = discovery_runs.read_state(settings, work)
    return state


def test_a_background_run_without_a_search_api_fails_and_says_the_fix(work, settings, monkeypatch):
    for var in ("FPT_SEARCH_URL", "FPT_SEARCH_PROVIDER", "FPT_SEARCH_PRESET"):
        monkeypatch.delenv(var, raising=False)
    assert discovery_runs.read_state(settings, "shancheng") == {"state": "none", "work": "shancheng",
                                                                "running": False}
    first = discovery_runs.start(settings, "shancheng")
    assert first["work"] == "shancheng" and isinstance(first["pid"], int)
    state = wait(settings, "shancheng")
    assert state["state"] == "failed" and "FPT_SEARCH_URL" in state["error"] and "Traceback" not in state["error"]
    assert [s["work"] for s in discovery_runs.states(settings)] == ["shancheng"]


def test_one_background_run_per_work_and_a_vanished_one_is_failed(settings):
    path = discovery_runs.state_file(settings, "shancheng")
    # a live process that is a discovery run (its command line says so)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "tracker.discovery.child_runs"])
    try:
        write_state(path, {"state": "running", "work": "shancheng", "pid": proc.pid, "run": 7})
        again = discovery_runs.start(settings, "shancheng")
        assert again["pid"] == proc.pid and again["run"] == 7 and again["running"]
    finally:
        proc.kill()
        proc.wait()
    state = discovery_runs.read_state(settings, "shancheng")
    assert state["state"] == "failed" and "ended without a word" in state["error"] and not state["running"]
    # a process number now held by another program is not the run
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        write_state(path, {"state": "running", "work": "shancheng", "pid": other.pid})
        assert discovery_runs.read_state(settings, "shancheng")["state"] == "failed"
    finally:
        other.kill()
        other.wait()


def test_state_files_stay_in_their_folder_and_never_share(settings):
    folder = (settings.home / "discovery" / "admin").resolve()
    names = ["../../etc/passwd", "a/b", "a_b", "a b", ".", "..", "东城", "-x", "x" * 500]
    paths = [discovery_runs.state_file(settings, n) for n in names]
    assert all(p.parent == folder for p in paths)
    assert len(set(paths)) == len(names)
