"""The Redis the tests use: one of their own, started for the run on a free loopback
port in a temporary folder with nothing kept on disk, and stopped after it (needs
`redis-server`; scripts/test installs it as root). A Redis already running on
127.0.0.1:6379 is a developer's, with their data: the tests never touch it unless told.

FPT_TEST_REDIS=redis://HOST:PORT points the tests at that server instead (CI may name
one); test modules take database URLs from `redis_url(db)`, so they all follow the
choice made here.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

DEFAULT = "redis://127.0.0.1:6379"  # a developer's Redis: used only when FPT_TEST_REDIS names it
NOWHERE = "redis://127.0.0.1:1"  # no Redis listens there: the Redis tests skip with REDIS.why


@dataclass
class RedisChoice:
    base: str = NOWHERE
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
                choice.why = (f"started {server} on 127.0.0.1:{port} for this run "
                              "(FPT_TEST_REDIS=redis://HOST:PORT uses another)")
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
    choice.why = f"{server} did not start: {log or 'no log'}"


def choose(environ=os.environ, choice: RedisChoice = REDIS, server: str | None = None) -> None:
    """Take the Redis FPT_TEST_REDIS names; otherwise start one of our own, never using one
    that merely happens to answer on 127.0.0.1:6379."""
    named = environ.get("FPT_TEST_REDIS", "").strip()
    if named:
        choice.base = named.rstrip("/")
        choice.why = f"Redis at {choice.base} (FPT_TEST_REDIS)"
        if not answers(choice.base):
            choice.why += ", which does not answer: start it, or unset FPT_TEST_REDIS to let the tests start their own"
        return
    choice.base = NOWHERE
    server = server or shutil.which("redis-server")
    if server is None:
        choice.why = ("no redis-server to start a Redis of the tests' own: apt-get install redis-server "
                      "(scripts/test does it as root), or set FPT_TEST_REDIS=redis://HOST:PORT")
        return
    start_own(server, choice)
    if choice.process is not None:
        environ["FPT_TEST_REDIS"] = choice.base  # for the crawlers and workers the tests start


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
