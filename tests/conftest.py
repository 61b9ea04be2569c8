"""Shared fixtures. Tests that need ../shared or a service skip locally with a
message, and fail instead when FPT_REQUIRE_SERVICES=1 (as .ci/run sets it)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import services
from .services import REDIS, redis_url  # noqa: F401  (test modules import redis_url from here)

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FPT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
REQUIRED = os.environ.get("FPT_REQUIRE_SERVICES") == "1"


def hands_tests_to_workers(config) -> bool:
    """True in the pytest process that only hands tests out to pytest-xdist's workers (`-n N`):
    it runs no test, and each worker starts services of its own."""
    if hasattr(config, "workerinput"):
        return False  # a worker
    try:
        dist, tx = config.getoption("dist"), config.getoption("tx")
    except ValueError:  # pytest-xdist not installed, or -p no:xdist
        return False
    return dist != "no" and bool(tx) and not config.getoption("collectonly")


def pytest_configure(config) -> None:
    if hands_tests_to_workers(config):
        # Not started here: the workers would inherit FPT_TEST_REDIS and share one server, the
        # tests of one emptying the queues and keys of another. Each worker starts its own.
        named = os.environ.get("FPT_TEST_REDIS", "").strip()
        services.REDIS.why = (f"Redis at {named} (FPT_TEST_REDIS), shared by every pytest-xdist worker: "
                              "run with -n 0 to keep their tests apart" if named else
                              "each pytest-xdist worker starts a Redis of its own "
                              "(FPT_TEST_REDIS=redis://HOST:PORT names one for all of them)")
    else:
        services.choose()
    # The fixture sites, receivers and mail servers of the tests listen on loopback, which the
    # egress policy refuses unless allowed (tracker.egress); tests/security takes this away.
    os.environ.setdefault("FPT_FETCH_ALLOW", "127.0.0.0/8,::1")


# Folders whose modules share a session-scoped setup of their own conftest.py: under
# `--dist loadscope` (scripts/test) all their tests go to one worker, so it is made once.
# tests/cli: the terminal tests' world (the sample site crawled, a search engine, an SMTP server).
SHARED_WORLDS = ("tests/cli/",)


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's loadscope (a module whole to one worker), with each of SHARED_WORLDS one scope."""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            world = next((w for w in SHARED_WORLDS if nodeid.startswith(w)), None)
            return world.rstrip("/") if world else super()._split_scope(nodeid)

    return Scopes(config, log)


def pytest_unconfigure(config) -> None:
    services.stop()
    if _CLUSTER is not None:
        _CLUSTER.stop()


_CLUSTER = None  # the local Redis Cluster, started by the first test that asks for it


@pytest.fixture(scope="session")
def redis_cluster():
    """A real three-node Redis Cluster on temporary ports (tests/cluster.py), emptied before
    each test that takes it through `cluster_url`; stopped at the end of the run."""
    global _CLUSTER
    from .cluster import LocalCluster

    if _CLUSTER is None:
        _CLUSTER = LocalCluster()
        if not _CLUSTER.start():
            why = _CLUSTER.error
            _CLUSTER = None
            need(False, f"no local Redis Cluster: {why}")
    return _CLUSTER


@pytest.fixture
def cluster_url(redis_cluster) -> str:
    """FPT_REDIS_URL for a test on the local cluster: one node's URL, the cluster emptied first.
    A test that kills a node leaves it to the next test to start it again."""
    for i, proc in enumerate(redis_cluster.processes):
        if proc is None:
            redis_cluster.revive(i)
    redis_cluster.flush()
    return redis_cluster.url


def pytest_report_header(config) -> str:
    return f"redis: {REDIS.why}"


def need(condition: bool, why: str) -> None:
    """Skip with `why` when `condition` is false; fail instead where services are required."""
    if condition:
        return
    if REQUIRED:
        pytest.fail(f"{why} (FPT_REQUIRE_SERVICES=1, so this is an error, not a skip)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus folder (../shared/corpus)."""
    need(CORPUS.is_dir(), f"the shared corpus is not at {CORPUS}; set FPT_SHARED or check out ../shared")
    return CORPUS


@pytest.fixture(scope="session")
def buaa_dir(corpus: Path) -> Path:
    d = corpus / "buaa_simtool"
    need((d / "article.txt").is_file(), f"the BUAA data set is missing from {d}")
    return d


def redis_settings_for(url: str, home: Path, monkeypatch):
    """Settings on the real Redis at `url` under a fresh key prefix (skips, or fails in CI,
    when no Redis answers); returns (settings, cleanup) where cleanup deletes the prefix's keys."""
    import uuid

    import redis

    from tracker.settings import Settings

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
        up = True
    except redis.RedisError:
        up = False
    need(up, f"no Redis at {url} ({REDIS.why})")
    for var in ("FPT_MONGO_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    prefix = f"fpt-test-{uuid.uuid4().hex[:8]}:"

    def cleanup() -> None:
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)

    return Settings.load({"FPT_HOME": str(home), "FPT_REDIS_URL": url, "FPT_REDIS_PREFIX": prefix,
                          "FPT_FETCH_ALLOW": os.environ.get("FPT_FETCH_ALLOW", "")}), cleanup
