"""Long jobs started from the admin or the API, each in a child process, followed through a
small state file.

The web server never runs a crawl or a discovery run in its own process (Scrapy's reactor
starts once per process, and a server worker may be recycled at any time): it starts
`python -m MODULE ...`, which writes its state (running or not, its process, progress, and
at the end its outcome) to a JSON file that the admin reads. crawler.site_runs and
tracker.discovery.child_runs are such jobs; this module holds what they share.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ACTIVE = ("starting", "running", "pausing")  # states of a job whose process should be alive


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace the state file at once (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def load_state(path: Path) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def alive(pid: Any, marker: bytes) -> bool:
    """Whether process `pid` runs and is the job: its command line holds `marker` (a number the
    system gave to another process since is not the job, and is never signalled)."""
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
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return marker in f.read()
    except OSError:
        return True  # no /proc to ask: trust the number


def running(state: dict[str, Any]) -> bool:
    return state.get("state") in ACTIVE


def read_state(path: Path, marker: bytes, none: dict[str, Any], lost: str) -> dict[str, Any]:
    """The job's state; `none` when it never ran. A job whose process is gone without saying how
    it ended is "failed", with `lost` as its error."""
    state = load_state(path)
    if state is None:
        return dict(none)
    if running(state) and not alive(state.get("pid"), marker):
        # The child writes its end before it exits; give a process that just ended a moment.
        time.sleep(0.2)
        state = load_state(path)
        if state is None:
            return dict(none)
        if running(state) and not alive(state.get("pid"), marker):
            state.update(state="failed", error=lost)
    return state


def launch(cmd: list[str], path: Path, first: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Write the `first` state ("starting"), start `cmd` in a session of its own (not stopped with
    the web server's process group; its output goes to the state file's .log), and return its
    state with its process number, so that it can be signalled before it writes its own."""
    write_state(path, {**first, "pid": None})
    log = open(path.with_suffix(".log"), "wb")
    try:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        log.close()
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped when it ends
    state = load_state(path) or dict(first)
    if state.get("pid") is None:  # the child has not written yet
        state = {**state, "pid": proc.pid}
        write_state(path, state)
    return state
