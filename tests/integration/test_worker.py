"""Real Celery workers (subprocesses) on the real Redis broker: pages sent by
dispatch_pages are processed into matches, and a task whose worker is killed
(SIGKILL) is delivered again and leaves exactly one match.

Each run uses its own Redis db (14), queue name and key prefix, and removes its keys."""
from __future__ import annotations

import json
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

from ..conftest import ROOT, need, redis_url
from ..task_delay import PRELUDE
from ..tracker.test_tasks import ADS_ONLY, CHAPTERS, PIRATED, WORK

BROKER = os.environ.get("FPT_TEST_BROKER_URL", redis_url(14))
VISIBILITY_TIMEOUT = 4  # seconds before an unacknowledged task is delivered again

# A worker built like `fptrack worker`, with the test's Celery settings (private queue, key prefix).
WORKER = PRELUDE + """
import json, sys
from tracker.workers.app import create_celery
from tracker.settings import Settings
app = create_celery(Settings.load(), **json.loads(sys.argv[1]))
app.worker_main(["worker", "--pool=solo", "--loglevel=INFO", "--without-mingle", "--without-gossip",
                 "--without-heartbeat", "-n", sys.argv[2]])
"""

pytestmark = pytest.mark.slow


def _redis():
    import redis

    client = redis.Redis.from_url(BROKER, socket_connect_timeout=1, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as e:
        need(False, f"Redis is not reachable at {BROKER} ({e}); start it (redis-server) to run the worker tests")
    return client


@pytest.fixture
def broker():
    """(redis client, Celery settings private to this test), keys removed afterwards."""
    client = _redis()
    run = uuid.uuid4().hex[:12]
    prefix = f"fpt-test-{run}:"
    conf = {
        "task_default_queue": f"fptrack-test-{run}",
        "worker_enable_remote_control": False,
        "broker_transport_options": {
            "global_keyprefix": prefix,
            "visibility_timeout": VISIBILITY_TIMEOUT,
            "unacked_restore_interval": 1,
            "unacked_restore_throttle": 1,
        },
    }
    yield client, prefix, conf
    for key in client.scan_iter(match=f"{prefix}*", count=500):
        client.delete(key)
    client.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A store with the work registered and three pages queued."""
    home = tmp_path / "home"
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    folder = tmp_path / "originals"
    folder.mkdir()
    for name, text in CHAPTERS.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    register_work(ctx, WORK, folder)
    for key, text in (("biquge/2", PIRATED), ("ads", ADS_ONLY), ("copy/3", CHAPTERS["第三章"])):
        ctx.store.upsert_page(Page(key=key, text=text, site=key.split("/")[0]))
    ctx.close()
    return home


class Workers:
    def __init__(self, home: Path, conf: dict, tmp: Path):
        self.home, self.conf, self.tmp = home, conf, tmp
        self.procs: list[subprocess.Popen] = []

    def start(self, name: str, **env: str) -> subprocess.Popen:
        e = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
        e.update(FPT_HOME=str(self.home), FPT_BROKER_URL=BROKER, PYTHONPATH=str(ROOT), **env)
        log = open(self.tmp / f"{name}.log", "wb")
        p = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(self.conf), f"{name}@%h"],
                             cwd=ROOT, env=e, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(p)
        return p

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def workers(home, broker, tmp_path):
    w = Workers(home, broker[2], tmp_path)
    yield w
    w.stop_all()


def wait_for(cond, timeout: float, what: str, logs=lambda: ""):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")


def open_ctx(home: Path) -> Context:
    return Context(Settings.load({"FPT_HOME": str(home)}))


def test_worker_processes_dispatched_pages(home, broker, workers):
    client, prefix, conf = broker
    workers.start("w1")
    ctx = open_ctx(home)
    sender = create_celery(Settings.load({"FPT_HOME": str(home), "FPT_BROKER_URL": BROKER}), **conf)
    keys = ["biquge/2", "ads", "copy/3"]
    assert dispatch_pages(ctx, keys, app=sender) == "queued 3 pages for the workers"
    wait_for(lambda: all(ctx.store.get_page(k).status != "queued" for k in keys), 40,
             "the worker to process the pages", lambda: workers.log("w1"))
    assert ctx.store.get_page("biquge/2").status == "done"
    assert ctx.store.get_page("copy/3").status == "done"
    ads = ctx.store.get_page("ads")
    assert ads.status == "failed" and ads.reason
    found = sorted((m.page, m.chapter) for m in ctx.store.matches())
    assert found == [("biquge/2", f"{WORK}/第二章"), ("copy/3", f"{WORK}/第三章")]
    assert client.llen(prefix + conf["task_default_queue"]) == 0
    ctx.close()


@pytest.mark.parametrize("when", ["before", "after"])
def test_killed_worker_task_is_delivered_again(home, broker, workers, when):
    """SIGKILL while the task sleeps before writing (or after writing, before the ack):
    a new worker gets the task again once the visibility timeout has passed, and the
    page ends done with one match."""
    client, prefix, conf = broker
    queue = conf["task_default_queue"]
    ctx = open_ctx(home)
    sender = create_celery(Settings.load({"FPT_HOME": str(home), "FPT_BROKER_URL": BROKER}), **conf)
    delay = "30" if when == "before" else "after:30"
    first = workers.start("doomed", FPT_TEST_TASK_DELAY=delay)
    dispatch_pages(ctx, ["biquge/2"], app=sender)

    # The worker holds the message, unacknowledged, while the task runs.
    wait_for(lambda: client.llen(prefix + queue) == 0 and client.hlen(prefix + "unacked") == 1, 20,
             "the first worker to take the task", lambda: workers.log("doomed"))
    if when == "after":
        wait_for(lambda: ctx.store.get_page("biquge/2").status == "done", 20,
                 "the first worker to write its results", lambda: workers.log("doomed"))
    else:
        time.sleep(0.5)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    page = ctx.store.get_page("biquge/2")
    assert (page.status, page.attempts) == (("queued", 0) if when == "before" else ("done", 1))

    workers.start("rescuer")
    expected_attempts = 1 if when == "before" else 2
    wait_for(lambda: ctx.store.get_page("biquge/2").attempts == expected_attempts, 30,
             "the task to be delivered again", lambda: workers.log("rescuer"))
    wait_for(lambda: client.hlen(prefix + "unacked") == 0, 10, "the task to be acknowledged",
             lambda: workers.log("rescuer"))
    page = ctx.store.get_page("biquge/2")
    assert page.status == "done" and page.attempts == expected_attempts  # no extra run
    [m] = ctx.store.matches()
    assert (m.page, m.chapter) == ("biquge/2", f"{WORK}/第二章")
    assert client.llen(prefix + queue) == 0
    ctx.close()
