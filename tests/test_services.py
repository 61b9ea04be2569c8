"""The tests' own Redis, started for the run unless FPT_TEST_REDIS names one."""
from __future__ import annotations

import importlib.util
import os
import shutil

import redis

from . import services
from .conftest import need


def test_a_redis_of_our_own_starts_on_a_free_port_and_is_gone_after_stop():
    server = shutil.which("redis-server")
    need(server is not None, "redis-server is not installed: apt-get install redis-server (scripts/test does it)")
    choice = services.RedisChoice(base="redis://127.0.0.1:1")
    assert not services.answers(choice.base)
    services.start_own(server, choice)
    try:
        assert choice.process is not None, choice.why
        assert choice.base != "redis://127.0.0.1:6379" and "started" in choice.why
        client = redis.Redis.from_url(f"{choice.base}/5")
        client.set("k", "v")
        assert client.get("k") == b"v"
        assert client.config_get("save")["save"] == ""  # nothing written to disk
        folder = choice.folder
        assert folder and os.path.isdir(folder)
    finally:
        services.stop(choice)
    assert choice.process is None and not os.path.exists(folder)
    assert not services.answers(choice.base)


def test_the_run_has_a_redis_that_answers_and_urls_name_it():
    need(services.answers(services.REDIS.base), f"the tests have no Redis: {services.REDIS.why}")
    assert services.redis_url(13) == f"{services.REDIS.base}/13"
    assert redis.Redis.from_url(services.redis_url(13)).ping()


def test_without_fpt_test_redis_the_run_starts_its_own_even_when_one_answers_on_6379():
    server = shutil.which("redis-server")
    need(server is not None, "redis-server is not installed: apt-get install redis-server (scripts/test does it)")
    environ: dict[str, str] = {}
    choice = services.RedisChoice()
    services.choose(environ, choice, server)
    try:
        assert choice.process is not None, choice.why
        assert choice.base != services.DEFAULT and choice.base.startswith("redis://127.0.0.1:")
        assert environ["FPT_TEST_REDIS"] == choice.base  # the crawlers and workers the tests start follow it
        assert choice.why.startswith(f"started {server} on 127.0.0.1:")
        assert services.answers(choice.base)
    finally:
        services.stop(choice)


def test_fpt_test_redis_names_the_server_and_nothing_is_started(tmp_path):
    never = tmp_path / "redis-server"  # would leave a marker if it were started
    never.write_text(f"#!/bin/sh\ntouch {tmp_path}/started\n")
    never.chmod(0o755)
    choice = services.RedisChoice()
    services.choose({"FPT_TEST_REDIS": "redis://127.0.0.1:1/"}, choice, str(never))
    assert (choice.base, choice.process) == ("redis://127.0.0.1:1", None)
    assert not (tmp_path / "started").exists()
    assert choice.why.startswith("Redis at redis://127.0.0.1:1 (FPT_TEST_REDIS), which does not answer: start it")
    assert services.redis_url(3).endswith("/3")


def test_without_redis_server_the_redis_tests_skip_with_the_fix_and_never_use_6379(monkeypatch):
    monkeypatch.setattr(services.shutil, "which", lambda name: None)
    choice = services.RedisChoice()
    services.choose({}, choice)
    assert choice.base == services.NOWHERE and not services.answers(choice.base)
    assert "apt-get install redis-server" in choice.why and "FPT_TEST_REDIS=" in choice.why


class _Config:
    """What hands_tests_to_workers reads of a pytest config: the options, and workerinput in a worker."""

    def __init__(self, worker: bool = False, xdist: bool = True, **options):
        self.options = {"dist": "no", "tx": [], "collectonly": False, **options}
        self.xdist = xdist
        if worker:
            self.workerinput = {"workerid": "gw0"}

    def getoption(self, name):
        if name in ("dist", "tx") and not self.xdist:
            raise ValueError(f"no option named {name!r}")
        return self.options[name]


def test_under_xdist_the_process_handing_out_tests_starts_no_redis_and_each_worker_starts_its_own():
    from .conftest import hands_tests_to_workers

    # pytest -n 3: the controller hands the tests out, and would only share its Redis with the workers
    assert hands_tests_to_workers(_Config(dist="load", tx=["popen"] * 3))
    # a worker runs tests: it starts its own (pytest_configure runs in each worker)
    assert not hands_tests_to_workers(_Config(worker=True, dist="load", tx=["popen"] * 3))
    # no xdist, -n 0, -p no:xdist, --collect-only: one process runs (or lists) every test
    assert not hands_tests_to_workers(_Config())
    assert not hands_tests_to_workers(_Config(xdist=False))
    assert not hands_tests_to_workers(_Config(dist="load", tx=["popen"] * 3, collectonly=True))


def test_under_xdist_two_workers_have_two_redis_servers_and_the_controller_none(tmp_path):
    """A real `pytest -n 2` run of a file whose tests note the Redis their worker was given."""
    import subprocess
    import sys

    from .conftest import ROOT

    server = shutil.which("redis-server")
    need(server is not None, "redis-server is not installed: apt-get install redis-server (scripts/test does it)")
    need(importlib.util.find_spec("xdist") is not None, "pytest-xdist is not installed: pip install -e '.[test]'")
    notes = tmp_path / "notes"
    notes.mkdir()
    (tmp_path / "test_note.py").write_text(f"""
import os, time
import pytest
from tests import services

@pytest.mark.parametrize("n", range(8))
def test_note(n):
    worker = os.environ["PYTEST_XDIST_WORKER"]
    assert os.environ["FPT_TEST_REDIS"] == services.REDIS.base and services.answers(services.REDIS.base)
    with open(os.path.join({str(notes)!r}, worker), "a") as f:
        f.write(services.REDIS.base + "\\n")
    time.sleep(0.2)  # the other worker takes some of the eight
""", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("FPT_TEST_REDIS", "PYTEST_XDIST_WORKER")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_note.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "8 passed" in done.stdout
    assert "each pytest-xdist worker starts a Redis of its own" in done.stdout  # the controller's header
    seen = {p.name: set(p.read_text().split()) for p in notes.iterdir()}
    assert sorted(seen) == ["gw0", "gw1"], seen
    assert all(len(bases) == 1 for bases in seen.values()), seen  # one server for the whole of a worker's run
    assert seen["gw0"] != seen["gw1"]
    for base in set.union(*seen.values()):
        assert not services.answers(base)  # each stopped with its worker
