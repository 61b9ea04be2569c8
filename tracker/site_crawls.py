"""Crawls of one site started from the admin or the API, each in a child process of its own.

Scrapy's reactor runs once per process, so the admin never crawls in its own: it starts
`python -m tracker.site_crawls NAME` (as the daily run starts `python -m crawler`), which
crawls the site with its stored rules through crawler.run.run_crawl and keeps a small state
file beside the crawl's job under FPT_HOME/crawls/admin: running or not, its process, pages
fetched so far, the last URL, and at the end the outcome and counts. The admin reads that
file to show progress, and pauses a crawl by sending its process SIGTERM: Scrapy then stops
gracefully ("shutdown"), keeps the job's frontier, and the next crawl of the site resumes it.
The crawl's statistics reach the store as every crawl's do (crawler.extensions.sitestats).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .names import inside, job_for_sites
from .settings import Settings

STATES = ("starting", "running", "pausing", "paused", "finished", "failed")
WRITE_EVERY = 1.0  # seconds between two writes of the progress


def job_of(site: str) -> str:
    """The crawl job of one site: the same as `fptrack crawl --site NAME`'s, so either resumes the other."""
    return job_for_sites([site])


def state_file(settings: Settings, site: str) -> Path:
    return inside(settings.home / "crawls" / "admin", job_of(site) + ".json")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace the state file at once (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def read_state(settings: Settings, site: str) -> dict[str, Any]:
    """The site's last crawl started from the admin: {"state": ...}; "none" when there was none. A
    crawl whose process is gone without saying how it ended is "failed"."""
    path = state_file(settings, site)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {"state": "none", "site": site}
    if state.get("state") in ("starting", "running", "pausing") and not _alive(state.get("pid")):
        # The child writes its end before it exits; give a process that just ended a moment.
        time.sleep(0.2)
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {"state": "none", "site": site}
        if state.get("state") in ("starting", "running", "pausing") and not _alive(state.get("pid")):
            state.update(state="failed", error="the crawl's process ended without a word (killed?); start it again")
    return state


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (ended, not yet waited for) is not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            if f.read().rsplit(")", 1)[-1].split()[0] == "Z":
                return False
        # A number the system gave to another process since: not our crawl (never signalled).
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"tracker.site_crawls" in f.read()
    except OSError:
        return True  # no /proc to ask: trust the number


def running(state: dict[str, Any]) -> bool:
    return state.get("state") in ("starting", "running", "pausing")


def start(settings: Settings, site: str, *, max_pages: int | None = None) -> dict[str, Any]:
    """Start crawling `site` (stored rules) in a child process; returns its state. A crawl of it
    already running is left alone (its state is returned)."""
    state = read_state(settings, site)
    if running(state):
        return state
    path = state_file(settings, site)
    write_state(path, {"state": "starting", "site": site, "job": job_of(site), "pid": None, "started_at": _now(),
                       "fetched": 0, "last_url": ""})
    cmd = [sys.executable, "-m", "tracker.site_crawls", site]
    if max_pages:
        cmd += ["--max-pages", str(int(max_pages))]
    env = {**os.environ, **settings.to_env()}
    log = open(path.with_suffix(".log"), "wb")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)  # not stopped with the web server's process group
    finally:
        log.close()
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped when it ends
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {"state": "starting", "site": site, "job": job_of(site)}
    if state.get("pid") is None:  # the child has not written yet: its pid, so that it can be paused
        state = {**state, "pid": proc.pid}
        write_state(path, state)
    return state


def pause(settings: Settings, site: str) -> dict[str, Any]:
    """Stop the site's running crawl gracefully: its frontier is kept and the next crawl resumes it."""
    state = read_state(settings, site)
    if not running(state):
        return state
    pid = state.get("pid")
    if not _alive(pid):
        return read_state(settings, site)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return read_state(settings, site)
    state = {**state, "state": "pausing"}
    write_state(state_file(settings, site), state)
    return state


# ---- the child -------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """`python -m tracker.site_crawls NAME [--max-pages N]`: crawl one stored site, keeping the state file."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tracker.site_crawls")
    parser.add_argument("site")
    parser.add_argument("--max-pages", type=int, default=None)
    args = parser.parse_args(argv)
    settings = Settings.load()
    path = state_file(settings, args.site)
    state: dict[str, Any] = {"state": "running", "site": args.site, "job": job_of(args.site), "pid": os.getpid(),
                             "started_at": _now(), "fetched": 0, "last_url": ""}
    write_state(path, state)
    last = [0.0]

    def on_response(url: str) -> None:
        state["fetched"] += 1
        state["last_url"] = url[:500]
        if time.monotonic() - last[0] >= WRITE_EVERY:
            last[0] = time.monotonic()
            try:
                current = json.loads(path.read_text(encoding="utf-8"))
                if current.get("state") == "pausing":
                    state["state"] = "pausing"
            except (OSError, ValueError):
                pass
            write_state(path, state)

    try:
        from crawler.cli import stored_rules
        from crawler.run import CrawlLimits, run_crawl
        from tracker.store.open import open_store

        store = open_store(settings.mongo_url or None, settings.home, db=settings.mongo_db)
        try:
            rules = stored_rules(store.get_site(args.site))
        finally:
            store.close()
        result = run_crawl(settings, [rules], CrawlLimits(max_pages=args.max_pages), job=job_of(args.site),
                           log_level="WARNING", on_response=on_response)
    except BaseException as e:  # noqa: BLE001 - whatever stopped it is said in the state, in one line
        state.update(state="failed", finished_at=_now(), error=(str(e).splitlines() or [type(e).__name__])[0][:500])
        write_state(path, state)
        return 1
    counts = result.sites.get(args.site, {}).get("counts", {})
    state.update(state="paused" if result.resumable else "finished", finished_at=_now(), outcome=result.outcome,
                 counts=counts, error=result.error)
    write_state(path, state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
