"""Many workers, same answers: two real `fptrack worker` processes on a Redis broker, sharing
one embedded store (SQLite, WAL) and the Redis index, record the same matches as one process
working in-process. And a worker whose Redis is gone logs one line per failure, no traceback.

Each test has its own queue on the broker (db 14) and its own key prefix in the index (db 15),
and deletes both."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tracker.context import Context
from tracker.registry import register_work
from tracker.settings import Settings
from tracker.store import Page
from tracker.workers.app import create_celery
from tracker.workers.queue import dispatch_pages

from ..conftest import ROOT, need, redis_settings_for, redis_url
from ..task_delay import ENV, PRELUDE
from .test_tasks import ADS_ONLY, CHAPTERS, PIRATED, WORK

BROKER = os.environ.get("FPT_TEST_BROKER_URL", redis_url(14))
INDEX = redis_url(15)

pytestmark = pytest.mark.slow

_one, _two, _three = (CHAPTERS[k].splitlines() for k in ("第一章", "第二章", "第三章"))
# Pirated pages as sites show them: whole, wrapped in ads, merged, cut short, reordered, or nothing copied.
PAGES = {
    "biquge/2": PIRATED,
    "copy/3": CHAPTERS["第三章"],
    "merged/1-3": CHAPTERS["第一章"] + CHAPTERS["第三章"],
    "excerpt/1": ADS_ONLY + "\n".join(_one[1:3]) + "\n" + ADS_ONLY,
    "reordered/2": "\n".join([_two[0], *reversed(_two[1:])]),
    "half/3": "\n".join(_three[:3]),
    "ads": ADS_ONLY,
    "other": "今天天气很好，我们去公园散步，看见湖边有很多人在钓鱼，孩子们在草地上放风筝。" * 8,
}


def _broker():
    import redis

    client = redis.Redis.from_url(BROKER, socket_connect_timeout=1, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as e:
        need(False, f"no Redis broker at {BROKER} ({e}); start redis-server to run the worker tests")
    return client


def filled(settings: Settings, folder: Path) -> tuple[Context, list[str]]:
    """A store with the work registered, its keys in the index, and PAGES stored as queued."""
    ctx = Context(settings)
    if not folder.exists():
        folder.mkdir()
        for name, text in CHAPTERS.items():
            (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    register_work(ctx, WORK, folder)
    for key, text in PAGES.items():
        ctx.store.upsert_page(Page(key=key, text=text, site=key.split("/")[0]))
    return ctx, list(PAGES)


def results(ctx: Context) -> tuple[dict, dict]:
    """(page -> status, (page, chapter, verdict) -> every score)."""
    statuses = {p.key: p.status for p in ctx.store.pages()}
    matches = {(m.page, m.chapter, m.verdict): (m.similarity, m.containment, m.page_share, m.scores, m.spans)
               for m in ctx.store.matches()}
    return statuses, matches


class Workers:
    """`fptrack worker` subprocesses on a queue of their own; stop() ends them and drops the queue."""

    def __init__(self, tmp: Path, settings: Settings, **env: str):
        self.tmp, self.queue = tmp, f"fptrack-test-{uuid.uuid4().hex[:10]}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
        self.env.update(settings.to_env(), FPT_BROKER_URL=BROKER, PYTHONPATH=str(ROOT), **env)
        self.procs: list[subprocess.Popen] = []
        self.sender = create_celery(Settings.load(self.env), task_default_queue=self.queue)

    def start(self, n: int) -> None:
        fptrack = Path(sys.executable).with_name("fptrack")
        cmd = [str(fptrack)] if fptrack.exists() and ENV not in self.env else [
            sys.executable, "-c", PRELUDE + "from fptrack.cli import main; main()"]
        for i in range(n):
            with open(self.log_path(i), "wb") as log:
                self.procs.append(subprocess.Popen(
                    [*cmd, "worker", "-Q", self.queue, "--concurrency=1", "-n", f"w{i}-{self.queue}@%h",
                     "--without-mingle", "--without-gossip", "--without-heartbeat"],
                    cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT))
        wait_for(lambda: all(" ready." in self.log(i) for i in range(n)), 60, "the workers to start", self.logs)

    def log_path(self, i: int) -> Path:
        return self.tmp / f"{self.queue}-{i}.log"

    def log(self, i: int) -> str:
        return self.log_path(i).read_text(errors="replace")

    def logs(self) -> str:
        return "\n".join(f"--- worker {i}\n{self.log(i)[-3000:]}" for i in range(len(self.procs)))

    def stop(self, client) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        client.delete(self.queue, f"_kombu.binding.{self.queue}", f"_kombu.binding_permanent.{self.queue}")


def wait_for(cond, timeout: float, what: str, logs=lambda: ""):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")


def test_two_workers_record_what_one_process_records(tmp_path, monkeypatch):
    client = _broker()
    ref_settings, ref_cleanup = redis_settings_for(INDEX, tmp_path / "ref", monkeypatch)
    settings, cleanup = redis_settings_for(INDEX, tmp_path / "workers", monkeypatch)
    # A short pause before each page, so that neither worker can take every page alone.
    workers = Workers(tmp_path, settings, FPT_TEST_TASK_DELAY="0.3")
    ref = ctx = None
    try:
        ref, keys = filled(ref_settings, tmp_path / "originals")
        assert dispatch_pages(ref, keys) == "7 pages done, 1 failed, 7 matches"  # no broker: here
        expected = results(ref)
        assert {k[:2] for k in expected[1]} >= {("biquge/2", f"{WORK}/第二章"), ("copy/3", f"{WORK}/第三章"),
                                                ("merged/1-3", f"{WORK}/第一章"), ("merged/1-3", f"{WORK}/第三章")}

        ctx, keys = filled(settings, tmp_path / "originals")
        workers.start(2)
        assert dispatch_pages(ctx, keys, app=workers.sender) == f"queued {len(keys)} pages for the workers"
        wait_for(lambda: not ctx.store.counts()["pages"].get("queued"), 60, "the pages to be processed",
                 workers.logs)
        assert results(ctx) == expected
        took = [workers.log(i).count("succeeded in") for i in range(2)]
        assert all(took) and sum(took) == len(keys), took  # both worked, and each page ran once
    finally:
        workers.stop(client)
        for c in (ref, ctx):
            if c is not None:
                c.close()
        ref_cleanup()
        cleanup()
        client.close()


def test_worker_logs_a_redis_failure_in_one_line(tmp_path, monkeypatch):
    """Nothing listens on port 1: the page's task retries once, each failure is one line that
    names the address and the fix, and the log has no traceback."""
    client = _broker()
    monkeypatch.delenv("FPT_MONGO_URL", raising=False)
    settings = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_REDIS_URL": "redis://127.0.0.1:1/0",
                              "FPT_MAX_ATTEMPTS": "1"})
    ctx = Context(settings)
    ctx.store.upsert_page(Page(key="biquge/2", text=PIRATED, site="biquge"))
    workers = Workers(tmp_path, settings)
    try:
        workers.start(1)
        dispatch_pages(ctx, ["biquge/2"], app=workers.sender)
        wait_for(lambda: ctx.store.get_page("biquge/2").status == "failed", 30, "the page to fail", workers.logs)
        wait_for(lambda: "gave up" in workers.log(0), 10, "the last line", workers.logs)
        log = workers.log(0)
        lines = [line for line in log.splitlines() if "process_page biquge/2: " in line]
        assert len(lines) == 2, log
        assert "WARNING" in lines[0] and "retry 1 of 1" in lines[0]
        assert "ERROR" in lines[1] and "gave up after 1 retries" in lines[1]
        assert all("127.0.0.1:1" in line and "FPT_REDIS_URL" in line for line in lines)
        assert "Traceback" not in log
        assert "127.0.0.1:1" in ctx.store.get_page("biquge/2").reason
    finally:
        workers.stop(client)
        ctx.close()
        client.close()
