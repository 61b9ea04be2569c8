"""Crawl jobs: one process at a time on disk; in Redis, the last crawler out clears the frontier."""
from __future__ import annotations

import time

import fakeredis
import pytest

from crawler.frontier import STALE_AFTER, JobBusy, Membership, redis_keys
from tracker.settings import Settings


def test_a_job_on_disk_runs_in_one_process_at_a_time(tmp_path):
    settings = Settings.load({"FPT_HOME": str(tmp_path)})
    first = Membership(settings, "biquge")
    first.join()
    with pytest.raises(JobBusy, match="running in another process"):
        Membership(settings, "biquge").join()
    Membership(settings, "other-site").join()  # another job is free to run
    assert first.leave()
    again = Membership(settings, "biquge")
    again.join()  # free once the first one left
    again.leave()


def test_only_the_last_crawler_of_a_shared_job_says_it_may_clear():
    client = fakeredis.FakeRedis()
    settings = Settings.load({"FPT_HOME": "/tmp/unused", "FPT_REDIS_URL": "redis://fake", "FPT_REDIS_PREFIX": "t:"})
    a, b = Membership(settings, "job", client), Membership(settings, "job", client)
    a.join()
    b.join()
    assert client.zcard(redis_keys(settings, "job")["crawlers"]) == 2
    assert a.leave() is False  # b is still working
    assert b.leave() is True


def test_a_crawler_killed_outright_stops_counting_after_a_while():
    client = fakeredis.FakeRedis()
    settings = Settings.load({"FPT_HOME": "/tmp/unused", "FPT_REDIS_URL": "redis://fake", "FPT_REDIS_PREFIX": "t:"})
    key = redis_keys(settings, "job")["crawlers"]
    client.zadd(key, {"killed-long-ago": time.time() - STALE_AFTER - 1})
    me = Membership(settings, "job", client)
    me.join()
    assert me.leave() is True and client.zcard(key) == 0
