"""The Redis the tests use: the one on 127.0.0.1:6379 when it answers, else one of
their own, started for the run on a free port in a temporary folder and stopped
after it (when `redis-server` is installed; scripts/test installs it as root).

FPT_TEST_REDIS=redis://HOST:PORT points the tests at another server; test modules
take database URLs from `redis_url(db)`, so they all follow the choice made here.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

DEFAULT = "redis://127.0.0.1:6379"


@dataclass
class RedisChoice:
    base: str = field(default_factory=lambda: os.environ.get("FPT_TEST_REDIS", DEFAULT).rstrip("/"))
    why: str = ""  # how the choice was made, for the report header
    process: subprocess.Popen | None = None
    folder: str | None = None


REDIS = RedisChoice()


def redis_url(db: int) -> str:
    """The URL of database `db` on the tests' Redis."""
    return f"{REDIS.base}/{db}"


def answers(base: str, timeout: float = 0.5) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(f"{base}/0", socket_connect_timeout=timeout, socket_timeout=timeout).ping())
    except redis.RedisError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_own(server: str, choice: RedisChoice = REDIS) -> None:
    """Start `server` on a free loopback port with no persistence; wait until it answers."""
    folder = tempfile.mkdtemp(prefix="fpt-test-redis-")
    for _ in range(3):  # the port can be taken between choosing it and binding it
        port = _free_port()
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", folder, "--logfile", os.path.join(folder, "redis.log"), "--databases", "16"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"redis://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            if answers(base, 0.2):
                choice.base, choice.process, choice.folder = base, proc, folder
                choice.why = f"no Redis on 127.0.0.1:6379: started {server} on 127.0.0.1:{port} for this run"
                return
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    log = ""
    try:
        with open(os.path.join(folder, "redis.log"), encoding="utf-8", errors="replace") as f:
            log = f.read()[-500:].strip()
    except OSError:
        pass
    shutil.rmtree(folder, ignore_errors=True)
    choice.why = f"no Redis on 127.0.0.1:6379, and {server} did not start: {log or 'no log'}"


def choose() -> None:
    """Keep the configured Redis when it answers; otherwise start one of our own if possible."""
    if "FPT_TEST_REDIS" in os.environ or answers(REDIS.base):
        REDIS.why = f"Redis at {REDIS.base}"
        return
    server = shutil.which("redis-server")
    if server is None:
        REDIS.why = ("no Redis on 127.0.0.1:6379 and no redis-server to start one: "
                     "apt-get install redis-server (scripts/test does it as root)")
        return
    start_own(server)
    if REDIS.process is not None:
        os.environ["FPT_TEST_REDIS"] = REDIS.base  # for the crawlers and workers the tests start


def stop(choice: RedisChoice = REDIS) -> None:
    """Stop the Redis started for the run, if any, and remove its folder."""
    if choice.process is not None:
        choice.process.terminate()
        try:
            choice.process.wait(10)
        except subprocess.TimeoutExpired:
            choice.process.kill()
            choice.process.wait()
        choice.process = None
    if choice.folder:
        shutil.rmtree(choice.folder, ignore_errors=True)
        choice.folder = None
