"""Discovery for one work started from the admin or the API, in a child process of its own.

As a site's crawl from the admin (crawler.site_runs, through tracker.child_jobs), the web
server starts `python -m tracker.discovery.child_runs WORK_ID`, which runs
tracker.discovery.discover.discover for that work and keeps a small state file under FPT_HOME/discovery/admin: running or not,
its process, the id of its run in the store, the queries sent so far, and at the end the
outcome and counts. One run per work at a time: starting a work whose run is going returns
that run's state. The run itself, with every query's counts, is in the store as every run is.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from .. import child_jobs
from ..child_jobs import now_text, running
from ..safe_names import inside
from ..settings import Settings

MARKER = b"tracker.discovery.child_runs"  # in the command line of a run's process
WRITE_EVERY = 1.0  # seconds between two writes of the progress
LOST = "the discovery's process ended without a word (killed?); start it again"
_UNSAFE = re.compile(r"[^\w.+-]+")  # in a file name


def state_file(settings: Settings, work: str) -> Path:
    """The work's state file: its id made file-safe, with a digest so that two ids never share one."""
    safe = _UNSAFE.sub("_", work).strip("._")[:60]
    digest = hashlib.sha256(work.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return inside(settings.home / "discovery" / "admin", f"{safe}-{digest}.json" if safe else f"{digest}.json")


def read_state(settings: Settings, work: str) -> dict[str, Any]:
    """The work's last discovery started from the admin: {"state": ...}, "none" when there was none;
    "failed" when its process is gone without saying how it ended."""
    state = child_jobs.read_state(state_file(settings, work), MARKER, {"state": "none", "work": work}, LOST)
    return {**state, "running": running(state)}


def states(settings: Settings) -> list[dict[str, Any]]:
    """The last discovery of every work started from the admin, latest first."""
    folder = settings.home / "discovery" / "admin"
    out = []
    for path in folder.glob("*.json") if folder.is_dir() else ():
        state = child_jobs.read_state(path, MARKER, {"state": "none"}, LOST)
        if state["state"] != "none" and isinstance(state.get("work"), str):
            out.append({**state, "running": running(state)})
    return sorted(out, key=lambda s: str(s.get("started_at", "")), reverse=True)


def start(settings: Settings, work: str) -> dict[str, Any]:
    """Start discovery for the work (its id) in a child process; returns its state. A run of the
    work that is going is left alone (its state is returned)."""
    state = read_state(settings, work)
    if state["running"]:
        return state
    cmd = [sys.executable, "-m", "tracker.discovery.child_runs", "--", work]
    first = {"state": "starting", "work": work, "started_at": now_text(), "run": None, "done": 0, "queries": 0}
    state = child_jobs.launch(cmd, state_file(settings, work), first, {**os.environ, **settings.to_env()})
    return {**state, "running": running(state)}


# ---- the child -------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """`python -m tracker.discovery.child_runs WORK_ID`: one discovery run for the work, keeping the state file."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tracker.discovery.child_runs")
    parser.add_argument("work")
    args = parser.parse_args(argv)
    settings = Settings.load()
    path = state_file(settings, args.work)
    state: dict[str, Any] = {"state": "running", "work": args.work, "pid": os.getpid(), "started_at": now_text(),
                             "run": None, "stage": "search", "done": 0, "queries": 0}
    child_jobs.write_state(path, state)
    last = [0.0]
    failures: list[str] = []

    def progress(step: dict[str, Any]) -> None:
        state.update(step)
        if time.monotonic() - last[0] >= WRITE_EVERY or step.get("stage") != "search":
            last[0] = time.monotonic()
            child_jobs.write_state(path, state)

    try:
        from ..context import Context
        from .discover import discover

        ctx = Context(settings)
        try:
            report = discover(ctx, work=args.work, say=failures.append, progress=progress)
        finally:
            ctx.close()
    except BaseException as e:
        state.update(state="failed", finished_at=now_text(), error=(str(e).splitlines() or [type(e).__name__])[0][:500])
        child_jobs.write_state(path, state)
        return 1
    run = report.run
    state.update(state="finished", finished_at=now_text(), run=run.id if run else None,
                 outcome=run.outcome if run else "", counts=report.counts, sites_added=report.sites_added,
                 done=len(report.queries), error=report.crawl_error,
                 failures=[line[:300] for line in failures[:20]])
    child_jobs.write_state(path, state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
