"""The shared crawl frontier on a real three-node Redis Cluster (tests/cluster.py), with
FPT_REDIS_URL at one node and no other setting: the same pages as on one instance, no
URL fetched twice by two crawlers, a pause that keeps held parts, and a master killed
during a crawl shown as one line, the crawl resumed once the cluster is back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from crawler.frontier import (
    STALE_AFTER,
    FrontierUnavailable,
    Membership,
    clear_frontier,
    pending,
    redis_keys,
    spool_files,
)
from crawler.spiders.chapters import JOINED, LONE
from tracker.context import Context
from tracker.settings import Settings
from web.demo.chapters import chapters_from_folder
from web.demo.server import SampleSite

from ..conftest import ROOT, need, redis_settings_for, redis_url

ORIGINALS = ROOT / "samples" / "originals"
SINGLE = redis_url(13)
CRAWL = ["--timeout", "5", "--retries", "0", "--depth", "3", "--no-process"]

pytestmark = pytest.mark.slow


@pytest.fixture
def on_cluster(cluster_url, tmp_path, monkeypatch):
    settings, _ = redis_settings_for(cluster_url, tmp_path / "cluster-home", monkeypatch)
    return settings


@pytest.fixture
def on_single(tmp_path, monkeypatch):
    settings, cleanup = redis_settings_for(SINGLE, tmp_path / "single-home", monkeypatch)
    yield settings
    cleanup()


@pytest.fixture
def site():
    with SampleSite(chapters_from_folder(ORIGINALS), slow_delay=0.5, huge_bytes=200_000) as s:
        yield s


def start(settings: Settings, url: str, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "crawler", url, "--job", "shared", *CRAWL, *extra]
    return subprocess.Popen(cmd, env={**os.environ, **settings.to_env()}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    return out, err


def crawl(settings: Settings, url: str, *extra: str) -> dict:
    out, _ = finish(start(settings, url, "--format", "jsonl", "-q", *extra))
    (line,) = out.splitlines()
    return json.loads(line)


def stored_paths(settings: Settings, base: str) -> set[str]:
    """The pages in the job's store (embedded SQLite under FPT_HOME, read without Redis)."""
    ctx = Context(Settings.load({"FPT_HOME": str(settings.home)}))
    try:
        return {p.key.removeprefix(base) for p in ctx.store.pages()}
    finally:
        ctx.close()


def test_the_keys_of_a_job_share_one_slot_and_jobs_spread(on_cluster):
    from redis.cluster import key_slot

    slots = {key_slot(k.encode()) for k in redis_keys(on_cluster, "biquge").values()}
    assert len(slots) == 1
    jobs = {key_slot(redis_keys(on_cluster, f"site-{i}")["requests"].encode()) for i in range(20)}
    assert len(jobs) > 10  # not every job on one node


def test_a_crawl_on_the_cluster_finds_the_same_pages_as_on_one_instance(on_cluster, on_single):
    found = {}
    for name, settings in (("single", on_single), ("cluster", on_cluster)):
        with SampleSite(chapters_from_folder(ORIGINALS), slow_delay=0.5, huge_bytes=200_000) as s:
            result = crawl(settings, s.url + "/", "--delay", "0")
            found[name] = (stored_paths(settings, s.url), dict(s.hits), result)
            chapters = {p for p, kind in s.expected.items() if kind == "chapter"}
        assert result["outcome"] == "finished"
        assert chapters <= found[name][0]
        assert not pending(settings, "shared")  # the finished job cleared its frontier
    (single_pages, single_hits, single), (cluster_pages, cluster_hits, cluster) = found["single"], found["cluster"]
    assert cluster_pages == single_pages
    assert cluster_hits == single_hits
    counts = ("fetched", "chapters", "stored", "skipped", "failed")
    assert {k: cluster[k] for k in counts} == {k: single[k] for k in counts}


def test_two_crawlers_sharing_a_job_on_the_cluster_never_fetch_a_url_twice(on_cluster, site):
    procs = [start(on_cluster, site.url + "/", "--delay", "0.5", "--concurrency", "1", "--format", "jsonl", "-q")
             for _ in range(2)]
    results = [json.loads(finish(p)[0]) for p in procs]
    twice = {path: n for path, n in site.hits.items() if n > 1 and path != "/robots.txt"}
    assert twice == {}
    assert all(r["fetched"] > 0 for r in results), results  # both did part of the work
    assert sum(r["fetched"] for r in results) == len(site.hits) - 2  # robots.txt and the redirect are not counted
    chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
    assert chapters <= stored_paths(on_cluster, site.url)
    assert not pending(on_cluster, "shared")


def test_a_pause_on_the_cluster_resumes_where_it_stopped(on_cluster, site):
    paused = crawl(on_cluster, site.url + "/", "--max-pages", "3", "--concurrency", "1", "--delay", "0")
    assert paused["outcome"] == "closespider_pagecount"
    assert pending(on_cluster, "shared")
    rest = crawl(on_cluster, site.url + "/", "--delay", "0")
    assert rest["outcome"] == "finished"
    chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
    assert chapters <= stored_paths(on_cluster, site.url)
    assert site.hits["/"] == 1  # resumed, not restarted
    assert {p for p, n in site.hits.items() if n > 1} <= {"/robots.txt"}


@pytest.mark.parametrize("where", ["single", "cluster"])
def test_parts_held_at_a_pause_are_taken_back_once(where, request):
    """With a Redis frontier there is no job folder to keep spider.state: the held parts go to Redis."""
    settings = request.getfixturevalue("on_single" if where == "single" else "on_cluster")
    ext, spider = held_parts_of(settings)
    ext.spider_opened(spider)
    spider.state[LONE]["http://novel.test/b/3_2.html"] = HELD
    spider.state[JOINED].add("http://novel.test/b/2_2.html")
    ext.spider_closed(spider, "shutdown")
    assert pending(settings, "held")

    ext, spider = held_parts_of(settings)
    ext.spider_opened(spider)
    assert spider.state[LONE] == {"http://novel.test/b/3_2.html": HELD}
    assert spider.state[JOINED] == {"http://novel.test/b/2_2.html"}
    other, other_spider = held_parts_of(settings)  # a second crawler of the job does not get them too
    other.spider_opened(other_spider)
    assert other_spider.state[LONE] == {}
    clear_frontier(settings, "held")
    assert not pending(settings, "held")


def test_parts_held_when_redis_fails_wait_on_disk_for_the_next_crawler(on_cluster, redis_cluster):
    ext, spider = held_parts_of(on_cluster)
    ext.spider_opened(spider)
    spider.state[LONE]["http://novel.test/b/3_2.html"] = HELD
    node = job_node(redis_cluster, on_cluster, "held")
    redis_cluster.kill(node)
    ext.spider_closed(spider, "redis_unavailable")
    assert spool_files(on_cluster, "held")["held"].exists()
    redis_cluster.revive(node)
    ext, spider = held_parts_of(on_cluster)
    ext.spider_opened(spider)
    assert spider.state[LONE] == {"http://novel.test/b/3_2.html": HELD}
    assert not spool_files(on_cluster, "held")["held"].exists()


HELD = {"site": "novel.test", "title": "第三章（2/2）", "text": "后半章", "next": "", "depth": 2,
        "extractor": "density", "encoding": "utf-8", "etag": "", "last_modified": ""}


def held_parts_of(settings: Settings):
    from scrapy.utils.test import get_crawler

    from crawler.extensions.heldparts import HeldParts
    from crawler.frontier import frontier_settings
    from crawler.spiders.novel import NovelSpider

    crawler = get_crawler(NovelSpider, frontier_settings(settings, "held"))
    spider = NovelSpider(urls="http://novel.test/")
    crawler.spider = spider
    return HeldParts.from_crawler(crawler), spider


def test_links_found_while_the_cluster_is_down_are_queued_by_the_next_crawler(on_cluster, redis_cluster):
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from crawler.frontier import frontier_settings
    from crawler.redis_frontier import Scheduler
    from crawler.spiders.novel import NovelSpider

    def scheduler():
        crawler = get_crawler(NovelSpider, frontier_settings(on_cluster, "shared"))
        spider = NovelSpider(urls="http://novel.test/")
        spider.settings = crawler.settings
        s = Scheduler.from_crawler(crawler)
        s.open(spider)
        return s

    first = scheduler()
    victim = (job_node(redis_cluster, on_cluster) + 1) % len(redis_cluster.ports)
    redis_cluster.kill(victim)  # the cluster goes down once the others see it fail
    sent = []
    deadline = time.monotonic() + 30
    while not first.failed and time.monotonic() < deadline:
        sent.append(f"http://novel.test/b/{len(sent)}.html")
        assert first.enqueue_request(Request(sent[-1]))
        time.sleep(0.05)
    assert "127.0.0.1" in first.failed and "\n" not in first.failed
    assert first.next_request() is None and first.has_pending_requests()  # not idle: stopping
    first.close("redis_unavailable")
    assert spool_files(on_cluster, "shared")["requests"].exists()

    redis_cluster.revive(victim)
    second = scheduler()
    assert not spool_files(on_cluster, "shared")["requests"].exists()
    queued = []
    while (request := second.next_request()) is not None:
        queued.append(request.url)
    assert sorted(queued) == sorted(sent)  # those queued before the failure, and the one after it


def test_membership_on_the_cluster(on_cluster):
    import redis

    a, b = Membership(on_cluster, "job"), Membership(on_cluster, "job")
    a.join()
    b.join()
    key = redis_keys(on_cluster, "job")["crawlers"]
    assert a.client.zcard(key) == 2
    assert a.leave() is False  # b is still working
    a.client.zadd(key, {"killed-long-ago": time.time() - STALE_AFTER - 1})
    assert b.leave() is True  # the one killed long ago no longer counts
    assert isinstance(a.client, redis.cluster.RedisCluster)


def job_node(cluster, settings: Settings, job: str = "shared") -> int:
    """The index of the cluster node that holds the job's keys."""
    from redis.cluster import RedisCluster

    client = RedisCluster.from_url(cluster.url)
    try:
        return cluster.ports.index(client.get_node_from_key(redis_keys(settings, job)["requests"]).port)
    finally:
        client.close()


def test_a_master_killed_during_a_crawl_gives_one_line_and_the_crawl_resumes(on_cluster, redis_cluster, site):
    """Another master than the job's: the cluster goes down, the job's frontier survives."""
    victim = (job_node(redis_cluster, on_cluster) + 1) % len(redis_cluster.ports)
    proc = start(on_cluster, site.url + "/", "--delay", "0.5", "--concurrency", "1", "-q")
    deadline = time.monotonic() + 60
    while sum(site.hits.values()) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    redis_cluster.kill(victim)
    _, err = finish(proc)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("paused: ") and "127.0.0.1" in lines[0] and "resume job 'shared'" in lines[0]
    before = dict(site.hits)
    assert before["/"] == 1

    redis_cluster.revive(victim)
    rest = crawl(on_cluster, site.url + "/", "--delay", "0")
    assert rest["outcome"] == "finished"
    chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
    assert chapters <= stored_paths(on_cluster, site.url)
    assert {p for p, n in site.hits.items() if n > 1} <= {"/robots.txt"}  # resumed, nothing fetched twice
    assert not pending(on_cluster, "shared")


def test_the_job_master_killed_gives_one_line_not_a_traceback(on_cluster, redis_cluster, site):
    """The master holding the job (no replica): its frontier is gone with it, the user is told in one line."""
    proc = start(on_cluster, site.url + "/", "--delay", "0.5", "--concurrency", "1", "-q")
    deadline = time.monotonic() + 60
    while sum(site.hits.values()) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    redis_cluster.kill(job_node(redis_cluster, on_cluster))
    _, err = finish(proc)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("paused: "), err


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


@pytest.mark.parametrize("url, says", [
    # {closed}: a port chosen when the test runs, so the test's name is the same in every
    # process that collects it (pytest-xdist's workers compare their lists of tests)
    ("redis://127.0.0.1:{closed}", "cannot reach Redis"),
    ("http://127.0.0.1:6379", "is not a Redis URL"),
])
def test_a_redis_url_that_cannot_be_used_gets_one_line_and_exit_1(url, says, tmp_path):
    url = url.format(closed=closed_port()) if "{closed}" in url else url
    env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    env.update(FPT_HOME=str(tmp_path), FPT_REDIS_URL=url)
    r = subprocess.run([sys.executable, "-m", "crawler", "http://127.0.0.1:9/", *CRAWL], env=env,
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.strip()]
    assert says in line and url.split("//")[1] in line


@pytest.fixture
def own_redis():
    """A Redis of this test's own, whose memory limit it may change."""
    import shutil

    from ..services import RedisChoice, start_own, stop

    server = shutil.which("redis-server")
    need(server is not None, "redis-server is needed for a Redis of the test's own: apt-get install redis-server")
    choice = RedisChoice(base="")
    start_own(server, choice)
    need(choice.process is not None, choice.why)
    yield choice.base
    stop(choice)


def test_redis_out_of_memory_during_a_crawl_pauses_with_one_line_and_resumes(own_redis, tmp_path, monkeypatch,
                                                                             site):
    import redis

    settings, _ = redis_settings_for(own_redis + "/0", tmp_path / "home", monkeypatch)
    client = redis.Redis.from_url(own_redis)
    proc = start(settings, site.url + "/", "--delay", "0.5", "--concurrency", "1", "-q")
    deadline = time.monotonic() + 60
    while sum(site.hits.values()) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    client.config_set("maxmemory", 1)  # every write refused (noeviction)
    _, err = finish(proc)
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith("paused: ") and "out of memory" in line and "maxmemory" in line

    client.config_set("maxmemory", 0)
    rest = crawl(settings, site.url + "/", "--delay", "0")
    assert rest["outcome"] == "finished"
    chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
    assert chapters <= stored_paths(settings, site.url)
    assert {p for p, n in site.hits.items() if n > 1} <= {"/robots.txt"}


FAIL_ON_OPEN = """
import sys
from tracker.redis_client import RedisUnavailable
import crawler.redis_frontier

def refuse(url, **_):
    raise RedisUnavailable("Redis went away: start it again")

crawler.redis_frontier.Connect.from_url = staticmethod(refuse)
from crawler.cli import crawl
crawl(sys.argv[1:], prog_name="python -m crawler")
"""


def test_redis_failing_when_the_frontier_opens_pauses_with_one_line(on_single):
    """Between joining the job and opening the frontier: Scrapy would log a traceback of its own."""
    r = subprocess.run([sys.executable, "-c", FAIL_ON_OPEN, "http://127.0.0.1:9/", *CRAWL],
                       env={**os.environ, **on_single.to_env()}, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.strip()]
    assert line.startswith("paused: Redis went away: start it again; then run the same command again")


def test_a_frontier_that_cannot_be_cleared_is_one_message(tmp_path):
    settings = Settings.load({"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": "redis://127.0.0.1:9"})
    with pytest.raises(FrontierUnavailable, match="127.0.0.1:9"):
        clear_frontier(settings, "job")
