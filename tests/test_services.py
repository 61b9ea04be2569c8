"""The tests' own Redis, started when none answers on 127.0.0.1:6379."""
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
