"""Two crawler processes sharing one frontier in a real Redis: they split the site
between them, fetch no page twice, and what they store is matched as usual."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from crawler.frontier import pending
from tracker.context import Context
from tracker.registry import register_work
from web.demo.chapters import chapters_from_folder
from web.demo.server import SampleSite

from ..conftest import ROOT, redis_settings_for, redis_url

REDIS = redis_url(13)
ORIGINALS = ROOT / "samples" / "originals"

pytestmark = pytest.mark.slow


@pytest.fixture
def shared_settings(tmp_path, monkeypatch):
    settings, cleanup = redis_settings_for(REDIS, tmp_path / "home", monkeypatch)
    yield settings
    cleanup()


def test_two_crawlers_share_one_frontier(shared_settings):
    ctx = Context(shared_settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    env = {**os.environ, **shared_settings.to_env()}
    with SampleSite(chapters_from_folder(ORIGINALS), slow_delay=0.5, huge_bytes=200_000) as site:
        cmd = [sys.executable, "-m", "crawler", site.url + "/", "--job", "shared", "--delay", "0.5",
               "--concurrency", "1", "--timeout", "5", "--retries", "0", "--depth", "3", "--format", "jsonl", "-q"]
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
                 for _ in range(2)]
        outs = [p.communicate(timeout=180) for p in procs]
        for p, (_out, err) in zip(procs, outs):
            assert p.returncode == 0, err
        results = [json.loads(out) for out, _ in outs]
        hits, base = site.hits, site.url
    # each page fetched by one of them only (robots.txt is read by each process)
    twice = {path: n for path, n in hits.items() if n > 1 and path != "/robots.txt"}
    assert twice == {}
    assert all(r["fetched"] > 0 for r in results), results  # both did part of the work
    # together they fetched every page the crawl reached (hits also count robots.txt and the redirect)
    assert sum(r["fetched"] for r in results) == len(hits) - 2
    chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
    ctx = Context(shared_settings)
    stored = {p.key.removeprefix(base) for p in ctx.store.pages()}
    assert chapters <= stored
    assert {m.page.removeprefix(base) for m in ctx.store.matches()} == chapters
    ctx.close()
    assert not pending(shared_settings, "shared")  # the finished job cleared its frontier


def test_with_a_broker_the_crawl_sends_the_pages_to_the_workers(shared_settings, tmp_path):
    import redis

    from tracker.workers.app import DEFAULT_QUEUE

    broker = redis_url(12)
    client = redis.Redis.from_url(broker)
    client.delete(DEFAULT_QUEUE)
    ctx = Context(shared_settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    env = {**os.environ, **shared_settings.to_env(), "FPT_BROKER_URL": broker}
    try:
        with SampleSite(chapters_from_folder(ORIGINALS), slow_delay=0.5, huge_bytes=200_000) as site:
            r = subprocess.run([sys.executable, "-m", "crawler", site.url + "/", "--delay", "0", "--timeout", "5",
                                "--depth", "3"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=180)
            chapters = {p for p, kind in site.expected.items() if kind == "chapter"}
        assert r.returncode == 0, r.stderr
        sent = len(chapters) + 1  # and the unrelated news page
        assert f"{sent} pages sent to the workers" in r.stdout
        assert client.llen(DEFAULT_QUEUE) == sent  # one process_page task per stored page, for the workers
        ctx = Context(shared_settings)
        assert len(list(ctx.store.pages(status="queued"))) == sent and ctx.store.count_matches() == 0
        ctx.close()
    finally:
        client.delete(DEFAULT_QUEUE)
