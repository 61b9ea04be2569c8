"""Crawls of one site started from the admin or the API, each in a child process of its own.

Scrapy's reactor runs once per process, so the admin never crawls in its own: it starts
`python -m crawler.site_runs NAME` (as the daily run starts `python -m crawler`), which
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
import sys
import time
from pathlib import Path
from typing import Any

from tracker import child_jobs
from tracker.child_jobs import now_text
from tracker.safe_names import inside, job_for_sites
from tracker.settings import Settings

STATES = ("starting", "running", "pausing", "paused", "finished", "failed")
WRITE_EVERY = 1.0  # seconds between two writes of the progress
MARKER = b"crawler.site_runs"  # in the command line of a crawl's process


def job_of(site: str) -> str:
    """The crawl job of one site: the same as `fptrack crawl --site NAME`'s, so either resumes the other."""
    return job_for_sites([site])


def state_file(settings: Settings, site: str) -> Path:
    return inside(settings.home / "crawls" / "admin", job_of(site) + ".json")


_now = now_text
write_state = child_jobs.write_state
running = child_jobs.running


def read_state(settings: Settings, site: str) -> dict[str, Any]:
    """The site's last crawl started from the admin: {"state": ...}; "none" when there was none. A
    crawl whose process is gone without saying how it ended is "failed"."""
    return child_jobs.read_state(state_file(settings, site), MARKER, {"state": "none", "site": site},
                                 "the crawl's process ended without a word (killed?); start it again")


def _alive(pid: Any) -> bool:
    return child_jobs.alive(pid, MARKER)


def start(settings: Settings, site: str, *, max_pages: int | None = None) -> dict[str, Any]:
    """Start crawling `site` (stored rules) in a child process; returns its state. A crawl of it
    already running is left alone (its state is returned)."""
    state = read_state(settings, site)
    if running(state):
        return state
    cmd = [sys.executable, "-m", "crawler.site_runs", site]
    if max_pages:
        cmd += ["--max-pages", str(int(max_pages))]
    first = {"state": "starting", "site": site, "job": job_of(site), "started_at": _now(), "fetched": 0,
             "last_url": ""}
    return child_jobs.launch(cmd, state_file(settings, site), first, {**os.environ, **settings.to_env()})


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
    """`python -m crawler.site_runs NAME [--max-pages N]`: crawl one stored site, keeping the state file."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m crawler.site_runs")
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

        store = open_store(settings)
        try:
            rules = stored_rules(store.get_site(args.site))
        finally:
            store.close()
        result = run_crawl(settings, [rules], CrawlLimits(max_pages=args.max_pages), job=job_of(args.site),
                           log_level="WARNING", on_response=on_response)
    except BaseException as e:
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
