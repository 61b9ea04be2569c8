"""Every Redis failure a user can cause is one line that names the cause and the fix: from
`connect`, from the index, in the CLI (no traceback) and in the admin's status. Real
servers: a redis-server with a password, one with 1 MB of memory, one with APPEND
renamed, the tests' cluster with a master killed, and a cluster node that serves only half
of the slots."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

import pytest
import redis
from click.testing import CliRunner

from fingerprint.index import IndexParams
from fptrack.cli import main
from tracker.redis_client import RedisUnavailable, connect
from tracker.redisindex import IndexUnavailable, RedisIndex
from tracker.settings import Settings

from ..cluster import free_ports
from ..conftest import ROOT, need
from ..fingerprint.index_contract import CONFIG
from .test_redis_index import _synthetic

SAMPLES = ROOT / "samples"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(*args: str, config: str = ""):
    """A redis-server of its own on a free port with `args` (and a config file holding
    `config`), stopped after the block; yields its port."""
    exe = shutil.which("redis-server")
    need(exe is not None, "redis-server is needed: apt-get install redis-server")
    folder = tempfile.mkdtemp(prefix="fpt-test-redis-err-")
    conf = os.path.join(folder, "redis.conf")
    with open(conf, "w", encoding="utf-8") as f:
        f.write(config)
    # a cluster node also listens on port + 10000 (its bus): both must be free and below 65536
    port = free_ports(1)[0] if "--cluster-enabled" in args else _free_port()
    proc = subprocess.Popen([exe, conf, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                             "no", "--dir", folder, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail(f"redis-server {' '.join(args)} did not start")
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def _cli_line(args: list[str], env: dict) -> str:
    """Run fptrack; it must fail with one line (no traceback), returned."""
    base = {"FPT_MONGO_URL": None, "FPT_BROKER_URL": None, "FPT_CONFIG": None}
    r = CliRunner().invoke(main, args, env={**base, **env})
    assert r.exit_code == 1 and not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit), (
        r.output, r.exception)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in r.output, r.output
    return lines[0]


# -- URLs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("url, says", [
    ("http://127.0.0.1:6379", "is not a Redis URL"),
    ("redis://127.0.0.1:notaport", "is not a Redis URL"),
    ("redis://no-such-host.invalid:6379/0", "unknown"),
])
def test_a_wrong_url_names_what_is_wrong(url, says):
    with pytest.raises(RedisUnavailable, match=says):
        connect(url, timeout=1)


def test_a_closed_port_says_to_start_redis_or_unset_the_url(tmp_path):
    url = f"redis://127.0.0.1:{_free_port()}/0"
    with pytest.raises(RedisUnavailable, match="cannot reach Redis .*start it.*unset FPT_REDIS_URL"):
        connect(url, timeout=0.5)
    line = _cli_line(["reindex"], {"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": url})
    assert "cannot reach Redis" in line


# -- a password ----------------------------------------------------------------------------------


def test_a_missing_or_wrong_password_says_where_to_put_the_right_one(tmp_path):
    with server("--requirepass", "s3cret") as port:
        for url in (f"redis://127.0.0.1:{port}/0", f"redis://:wrong@127.0.0.1:{port}/0"):
            with pytest.raises(RedisUnavailable, match="refused the password.*FPT_REDIS_URL") as e:
                connect(url)
            assert "wrong" not in str(e.value)  # the password is not echoed
            line = _cli_line(["add-work", "山城旧事", str(SAMPLES / "originals")],
                             {"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": url})
            assert "refused the password" in line
        idx = RedisIndex(connect(f"redis://:s3cret@127.0.0.1:{port}/0"), CONFIG, IndexParams(), prefix="pw:")
        idx.add_many(enumerate(_synthetic(10)))
        assert len(idx) == 10


# -- out of memory -------------------------------------------------------------------------------


def test_out_of_memory_says_to_raise_maxmemory(tmp_path):
    with server("--maxmemory", "1mb", "--maxmemory-policy", "noeviction") as port:
        url = f"redis://127.0.0.1:{port}/0"
        idx = RedisIndex(connect(url), CONFIG, IndexParams(), prefix="oom:", capacity=20_000)
        with pytest.raises(IndexUnavailable, match="out of memory.*raise maxmemory"):
            for start in range(0, 20_000, 500):
                idx.add_many((start + i, k) for i, k in enumerate(_synthetic(500, seed=start)))
        line = _cli_line(["add-work", "山城旧事", str(SAMPLES / "originals")],
                         {"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": url})
        assert "out of memory" in line and "maxmemory" in line


# -- a command the server refuses ----------------------------------------------------------------


def test_a_disabled_command_says_which_commands_fptrack_needs():
    with server(config="rename-command APPEND APPEND_HIDDEN\n") as port:
        idx = RedisIndex(connect(f"redis://127.0.0.1:{port}/0"), CONFIG, IndexParams(), prefix="ren:")
        with pytest.raises(IndexUnavailable, match="refused a command fptrack needs.*APPEND"):
            idx.add_many(enumerate(_synthetic(5)))


# -- a cluster with a slot no node serves ----------------------------------------------------------


def test_a_slot_no_node_serves_says_to_fix_the_cluster():
    with server("--cluster-enabled", "yes", "--cluster-require-full-coverage", "no",
                "--cluster-config-file", f"nodes-{_free_port()}.conf") as port:
        single = redis.Redis(host="127.0.0.1", port=port)
        single.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)  # the other half: nobody's
        deadline = time.monotonic() + 10
        while b"cluster_state:ok" not in single.execute_command("CLUSTER", "INFO") and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(RedisUnavailable, match="served by no node.*redis-cli --cluster fix"):
            connect(f"redis://127.0.0.1:{port}")
        # a client that connected while every slot was served, then lost half of them
        single.execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
        while b"cluster_state:ok" not in single.execute_command("CLUSTER", "INFO"):
            time.sleep(0.1)
        idx = RedisIndex(connect(f"redis://127.0.0.1:{port}"), CONFIG, IndexParams(), prefix="half:", capacity=1000)
        idx.add_many(enumerate(_synthetic(20)))
        single.execute_command("CLUSTER", "DELSLOTSRANGE", 8192, 16383)
        with pytest.raises(IndexUnavailable, match="served by no node.*redis-cli --cluster fix"):
            idx.add_many(enumerate(_synthetic(20)))


# -- a cluster whose master is down --------------------------------------------------------------


def test_a_killed_master_says_the_cluster_is_down_and_to_start_it(redis_cluster, cluster_url):
    client = connect(cluster_url)
    idx = RedisIndex(client, CONFIG, IndexParams(), prefix="down:", capacity=1000)
    items = _synthetic(50)
    idx.add_many(enumerate(items))
    redis_cluster.kill(2)
    # before the others notice: the dead master cannot be reached
    with pytest.raises(IndexUnavailable, match="Redis Cluster.*(cannot be reached|down).*start"):
        idx.candidates(items[0])
    deadline = time.monotonic() + 15
    while redis_cluster._state(redis_cluster.ports[0]) != "fail" and time.monotonic() < deadline:
        time.sleep(0.2)
    # after: every node says CLUSTERDOWN
    with pytest.raises(IndexUnavailable, match="Redis Cluster.*(is down|cannot be reached).*start"):
        idx.candidates(items[0])
    with pytest.raises(RedisUnavailable, match="Redis Cluster|cannot reach"):
        connect(cluster_url)


# -- the admin's status --------------------------------------------------------------------------


def test_the_admin_status_is_the_same_line(tmp_path):
    from web.services import Services

    assert Services(Settings.load({"FPT_HOME": str(tmp_path)})).redis_status().startswith("embedded")
    with server("--requirepass", "s3cret") as port:
        bad = Services(Settings.load({"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": f"redis://127.0.0.1:{port}/0"}))
        assert "refused the password" in bad.redis_status()
        good = Services(Settings.load({"FPT_HOME": str(tmp_path),
                                       "FPT_REDIS_URL": f"redis://:s3cret@127.0.0.1:{port}/0"}))
        status = good.redis_status()
        assert status.startswith("ok: Redis at") and "s3cret" not in status


def test_a_check_in_the_admin_with_redis_down_is_a_503_naming_the_cause(tmp_path):
    from web.services import RedisDown, Services  # a StoreError: the admin's 503 page shows its message

    url = f"redis://127.0.0.1:{_free_port()}/0"
    s = Services(Settings.load({"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": url}))
    with pytest.raises(RedisDown, match="cannot reach Redis.*start it") as e:
        with s.engine():
            pass
    assert str(e.value).count("\n") == 0
