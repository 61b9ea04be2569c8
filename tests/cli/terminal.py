"""Run a command as a person does: under a real pseudo-terminal (pexpect), or piped.

Under a terminal the command sees a tty on all three streams, so progress bars and
prompts appear; piped, standard output and error are pipes and standard input is
empty (or the text given). A server is started, awaited until it says it is ready,
and stopped with Ctrl-C (SIGINT), as a person stops it.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import pexpect

ANSWER_TIMEOUT = 30  # seconds to wait for a prompt or a ready line


@dataclass
class Ran:
    """How a run ended: exit code and what it wrote (under a terminal both streams are one)."""
    code: int | None
    out: str
    err: str = ""

    @property
    def text(self) -> str:
        return self.out + self.err


def program(name: str) -> str:
    """The installed entry point (fptrack, simtool) next to this Python, else on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed: pip install -e '.[test]'")
    return found


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without FPT_ settings, plus `extra` (FPT_HOME and the like)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    env.update(TERM="xterm-256color", COLUMNS="120", LINES="30", PYTHONUNBUFFERED="1")
    env["FPT_FETCH_ALLOW"] = "127.0.0.1/32"  # the fixture sites and servers are all on loopback
    env.update(extra)
    return env


def _text(raw: str | bytes | None) -> str:
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    return raw.replace("\r\n", "\n")


def in_terminal(argv: Sequence[str], *, env: dict[str, str], cwd: str | Path, timeout: float = 300,
                answers: Sequence[tuple[str, str]] = ()) -> Ran:
    """Run under a pseudo-terminal; answer each (prompt regex, line) in order; wait for the end."""
    child = pexpect.spawn(argv[0], list(argv[1:]), env=env, cwd=str(cwd), encoding="utf-8",
                          codec_errors="replace", dimensions=(30, 120), timeout=timeout)
    seen = []
    try:
        for prompt, line in answers:
            child.expect(prompt, timeout=ANSWER_TIMEOUT)
            seen.append(child.before + child.after)
            child.sendline(line)
        child.expect(pexpect.EOF)
        seen.append(child.before)
    finally:
        child.close(force=True)
    code = child.exitstatus if child.exitstatus is not None else -(child.signalstatus or 0)
    return Ran(code, _text("".join(seen)))


def piped(argv: Sequence[str], *, env: dict[str, str], cwd: str | Path, timeout: float = 300,
          stdin: str = "") -> Ran:
    """Run with pipes on every stream (standard input: `stdin`, then end of file)."""
    done = subprocess.run(list(argv), env=env, cwd=str(cwd), input=stdin.encode("utf-8"),
                          capture_output=True, timeout=timeout)
    return Ran(done.returncode, _text(done.stdout), _text(done.stderr))


def serve_in_terminal(argv: Sequence[str], *, env: dict[str, str], cwd: str | Path, ready: str,
                      timeout: float = 300) -> tuple[Ran, str]:
    """Start a server under a pseudo-terminal, wait for `ready`, press Ctrl-C; (how it ended, its output
    up to ready). A server that does not stop within ANSWER_TIMEOUT seconds is killed and reported as such."""
    child = pexpect.spawn(argv[0], list(argv[1:]), env=env, cwd=str(cwd), encoding="utf-8",
                          codec_errors="replace", dimensions=(30, 120), timeout=timeout)
    try:
        try:
            child.expect(ready)
        except (pexpect.EOF, pexpect.TIMEOUT) as e:
            child.close(force=True)
            return Ran(child.exitstatus, _text(child.before)), f"never ready ({type(e).__name__})"
        before = _text(child.before + child.after)
        time.sleep(0.5)  # let it settle into serving
        child.sendintr()  # Ctrl-C, through the terminal's line discipline, as a person presses it
        try:
            child.expect(pexpect.EOF, timeout=ANSWER_TIMEOUT)
            how = "stopped"
        except pexpect.TIMEOUT:
            how = "did not stop on Ctrl-C"
        after = _text(child.before)
    finally:
        child.close(force=True)
    code = child.exitstatus if child.exitstatus is not None else -(child.signalstatus or 0)
    return Ran(code, before + after), how


def serve_piped(argv: Sequence[str], *, env: dict[str, str], cwd: str | Path, ready: str,
                timeout: float = 300) -> tuple[Ran, str]:
    """Start a server with pipes, wait for `ready` on stdout or stderr, send SIGINT; as serve_in_terminal."""
    proc = subprocess.Popen(list(argv), env=env, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out: list[bytes] = []
    err: list[bytes] = []
    found = threading.Event()
    pattern = re.compile(ready)

    def pump(stream, into) -> None:
        for line in iter(stream.readline, b""):
            into.append(line)
            if pattern.search(line.decode("utf-8", "replace")):
                found.set()

    pumps = [threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
             threading.Thread(target=pump, args=(proc.stderr, err), daemon=True)]
    for t in pumps:
        t.start()
    deadline = time.monotonic() + timeout
    while not found.is_set() and proc.poll() is None and time.monotonic() < deadline:
        found.wait(0.2)
    how = "stopped"
    if not found.is_set():
        how = "never ready"
        proc.kill()
    else:
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(ANSWER_TIMEOUT)
    except subprocess.TimeoutExpired:
        how = "did not stop on SIGINT"
        proc.kill()
        proc.wait(5)
    for t in pumps:
        t.join(5)
    return Ran(proc.returncode, _text(b"".join(out)), _text(b"".join(err))), how


def leaf_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command a person can run, as its words after the program name, nested groups walked."""
    ctx = click.Context(group, info_name=prefix[-1] if prefix else "prog")
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or getattr(cmd, "hidden", False):
            continue
        if isinstance(cmd, click.Group):
            yield from leaf_commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name)
