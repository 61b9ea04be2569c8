"""The tests' own Redis, started for the run unless FPT_TEST_REDIS names one."""
from __future__ import annotations

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
