"""A crawl in a child process: `python -m fptrack crawl ARGS --format jsonl`, the `fptrack crawl`
command a person runs (Scrapy's reactor starts only once per process, and a worker or a
discovery run starts many crawls). The tracker knows the crawl by that command and the JSON
line it prints per site, never by the crawler's code: the crawler sits above it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: The program and command a child crawl runs.
COMMAND = ("-m", "fptrack", "crawl")


@dataclass
class ChildCrawl:
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per site: its counts ("site", "stored", ...)
    returncode: int | None = None  # None: stopped at the time limit
    stderr: str = ""

    @property
    def failed(self) -> bool:
        return self.returncode != 0

    def last_error(self, limit: int = 500) -> str:
        """The child's last line of error output (what `fptrack crawl` says on a failure)."""
        if self.returncode is None:
            return "stopped at the time limit"
        return (self.stderr.strip().splitlines() or [f"exit {self.returncode}"])[-1][-limit:]


def crawl_in_child(settings: Any, args: Sequence[str], *, timeout: float,
                   environ: dict[str, str] | None = None) -> ChildCrawl:
    """Run `fptrack crawl ARGS --format jsonl --quiet` with the settings' FPT_* variables and wait
    for it, at most `timeout` seconds; its rows are the JSON lines it printed (lines that are not a
    JSON object are passed over)."""
    cmd = [sys.executable, *COMMAND, *args, "--format", "jsonl", "--quiet"]
    env = {**(os.environ if environ is None else environ), **settings.to_env()}
    try:
        # errors="replace": the child's output carries crawled site names; one bad byte must not cost the counts.
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return ChildCrawl()
    rows = []
    for line in done.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return ChildCrawl(rows, done.returncode, done.stderr)
