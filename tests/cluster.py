"""A real three-node Redis Cluster for the tests, started on free loopback ports in a
temporary folder (`redis-server` with `cluster-enabled yes`, then
`redis-cli --cluster create`) and stopped after the run.

Tests take it through the `redis_cluster` fixture of conftest.py, which starts it on
first use only; `LocalCluster.kill(i)` stops one master for the failure tests.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field


def free_ports(n: int) -> list[int]:
    """n free ports whose cluster-bus ports (port + 10000) are free as well."""
    out: list[int] = []
    while len(out) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535 or port in out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        out.append(port)
    return out


def _answers(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.2, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


@dataclass
class LocalCluster:
    """Three masters, no replicas, every slot covered."""

    nodes: int = 3
    ports: list[int] = field(default_factory=list)
    folder: str = ""
    processes: list[subprocess.Popen | None] = field(default_factory=list)
    error: str = ""

    @property
    def url(self) -> str:
        """The URL of the first node: what a user puts in FPT_REDIS_URL."""
        return f"redis://127.0.0.1:{self.ports[0]}"

    def node_url(self, i: int) -> str:
        return f"redis://127.0.0.1:{self.ports[i]}"

    def start(self) -> bool:
        server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        if not server or not cli:
            self.error = "redis-server and redis-cli are needed for a local cluster: apt-get install redis-server"
            return False
        self.folder = tempfile.mkdtemp(prefix="fpt-test-cluster-")
        for _attempt in range(3):
            self.ports = free_ports(self.nodes)
            self.processes = [self._start_node(server, p) for p in self.ports]
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not all(_answers(p) for p in self.ports):
                if any(proc.poll() is not None for proc in self.processes if proc):
                    break
                time.sleep(0.05)
            if all(_answers(p) for p in self.ports):
                break
            self.stop(keep_folder=True)
        else:
            self.error = f"the cluster's nodes did not start: {self._log_tail()}"
            return False
        made = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports), "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        if made.returncode != 0:
            self.error = f"redis-cli --cluster create failed: {(made.stdout + made.stderr)[-500:]}"
            self.stop()
            return False
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all(self._state(p) == "ok" for p in self.ports):
                return True
            time.sleep(0.1)
        self.error = "the cluster did not reach cluster_state:ok within 20 s"
        self.stop()
        return False

    def _start_node(self, server: str, port: int) -> subprocess.Popen:
        d = os.path.join(self.folder, str(port))
        os.makedirs(d, exist_ok=True)
        return subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", os.path.join(d, "nodes.conf"), "--cluster-node-timeout", "2000",
             "--save", "", "--appendonly", "no", "--dir", d, "--logfile", os.path.join(d, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @staticmethod
    def _state(port: int) -> str:
        import redis

        try:
            info = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1).execute_command("CLUSTER", "INFO")
        except redis.RedisError:
            return "down"
        text = info.decode() if isinstance(info, bytes) else str(info)
        for line in text.splitlines():
            if line.startswith("cluster_state:"):
                return line.split(":", 1)[1].strip()
        return "unknown"

    def _log_tail(self) -> str:
        tails = []
        for p in self.ports:
            try:
                with open(os.path.join(self.folder, str(p), "redis.log"), encoding="utf-8", errors="replace") as f:
                    tails.append(f.read()[-200:].strip())
            except OSError:
                pass
        return " | ".join(tails) or "no log"

    def flush(self) -> None:
        """Empty every node (between tests that want a clean cluster)."""
        import redis

        for p, proc in zip(self.ports, self.processes):
            if proc is not None and proc.poll() is None:
                redis.Redis(host="127.0.0.1", port=p).flushall()

    def kill(self, i: int) -> None:
        """Kill node i outright (SIGKILL), as a crashed master."""
        proc = self.processes[i]
        if proc is not None:
            proc.kill()
            proc.wait()
            self.processes[i] = None

    def revive(self, i: int) -> None:
        """Start node i again on its port with its cluster configuration (its data is gone)."""
        server = shutil.which("redis-server")
        assert server
        self.processes[i] = self._start_node(server, self.ports[i])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all(self._state(p) == "ok" for p in self.ports):
                return
            time.sleep(0.1)
        raise RuntimeError(f"node {self.ports[i]} rejoined, but the cluster is not ok: {self._log_tail()}")

    def stop(self, keep_folder: bool = False) -> None:
        for proc in self.processes:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in self.processes:
            if proc is not None:
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.processes = []
        if not keep_folder and self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
