"""Every command a person runs, under a real pseudo-terminal and piped: its exit code, what it
says, progress bars on a terminal only, no traceback; servers start and stop on Ctrl-C."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from fptrack.cli import main as fptrack
from simtool import main as simtool

from ..conftest import need
from ..services import REDIS, answers, redis_url
from .cases import CASES, SERVERS, Case, Server
from .conftest import SAMPLES, WORK, World, free_port, run_ok
from .terminal import Ran, clean_env, in_terminal, leaf_commands, piped, program, serve_in_terminal, serve_piped

MODES = ["terminal", "piped"]


def all_commands() -> set[str]:
    return ({" ".join(("fptrack", *c)) for c in leaf_commands(fptrack)}
            | {" ".join(("simtool", *c)) for c in leaf_commands(simtool)})


def test_every_command_has_a_terminal_case() -> None:
    missing = sorted(all_commands() - set(CASES) - set(SERVERS))
    assert not missing, f"commands with no case in tests/cli/cases.py: {missing}"
    stale = sorted((set(CASES) | set(SERVERS)) - all_commands())
    assert not stale, f"cases for commands that no longer exist: {stale}"


def test_the_walk_finds_nested_commands() -> None:
    found = all_commands()
    assert {"fptrack notify send", "fptrack user passwd", "fptrack sites show", "simtool track"} <= found
    assert "fptrack notify" not in found  # a group is walked, not run


def values(world: World, tmp: Path) -> dict[str, str]:
    data = tmp / "course"
    if not data.exists():
        from ..simtool.test_buaa import TINY, write_course

        data.mkdir()
        write_course(data, TINY)
    return {"samples": str(SAMPLES), "site": world.site, "tmp": str(tmp), "port": str(free_port()),
            "data": str(data), "token": world.facts["token"], "smtp": world.facts["smtp"],
            "search": world.facts["search"], "work": WORK}


def fill(args, v: dict[str, str]) -> list[str]:
    return [a.format(**v) for a in args]


def no_traceback(r: Ran) -> None:
    assert "Traceback (most recent call last)" not in r.text, r.text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_command(name: str, mode: str, world: World, home: Path, tmp_path: Path) -> None:
    case: Case = CASES[name]
    v = values(world, tmp_path)
    env = clean_env(FPT_HOME=str(home), **{k: x.format(**v) for k, x in case.env})
    for before in case.before:
        run_ok(fill(before, v), home)  # piped: no terminal in the preparations
    if mode == "terminal":
        argv = fill(case.args, v)
        r = in_terminal([program(argv[0]), *argv[1:]], env=env, cwd=tmp_path, answers=case.answers)
        said = r.text
    else:
        argv = fill(case.piped_args or case.args, v)
        r = piped([program(argv[0]), *argv[1:]], env=env, cwd=tmp_path, stdin=case.stdin)
        said = r.err if case.on == "err" else r.out
    no_traceback(r)
    assert r.code == case.code, f"{' '.join(argv)} exited {r.code}:\n{r.text}"
    assert re.search(case.says.format(**v), said), f"{' '.join(argv)} ({mode}) did not say {case.says!r}:\n{said}"
    if case.progress:
        # tqdm's "dedup: 3doc [00:00, ..." (no total) or "matching pages:  25%|██   | 2/8 [..." (a total)
        bar = re.compile(rf"{re.escape(case.progress)}: +(\d+\w* \[|\d+%\|)")
        if mode == "terminal":
            assert bar.search(r.text), f"no progress bar {case.progress!r} on the terminal:\n{r.text}"
        else:
            assert not bar.search(r.err) and "\r" not in r.err, f"a progress bar in a pipe:\n{r.err}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SERVERS))
def test_server_starts_and_stops_on_ctrl_c(name: str, mode: str, world: World, home: Path, tmp_path: Path) -> None:
    server: Server = SERVERS[name]
    extra = {"FPT_HOME": str(home)}
    if server.needs == "redis":
        need(answers(REDIS.base), f"no Redis for the broker ({REDIS.why})")
        extra["FPT_BROKER_URL"] = redis_url(14)
    argv = fill(server.args, values(world, tmp_path))
    run = serve_in_terminal if mode == "terminal" else serve_piped
    r, how = run([program(argv[0]), *argv[1:]], env=clean_env(**extra), cwd=tmp_path, ready=server.ready)
    assert how == "stopped", f"{' '.join(argv)} ({mode}): {how}:\n{r.text}"
    no_traceback(r)
    # Ctrl-C is how a person stops a server: success, or the conventional 130, never a crash.
    assert r.code in (0, 130, -2), f"{' '.join(argv)} ({mode}) ended with {r.code}:\n{r.text}"
    assert "Aborted!" not in r.text, r.text  # a stop asked for is no failure


def listed_in_help(prog, path: tuple[str, ...]) -> list[str]:
    """The commands `prog PATH --help` lists under "Commands:"."""
    from click.testing import CliRunner

    r = CliRunner().invoke(prog, [*path, "--help"], terminal_width=200)
    assert r.exit_code == 0, r.output
    lines = r.output.split("\nCommands:\n", 1)[1].splitlines()
    return [line.split()[0] for line in lines if line.startswith("  ") and line.strip()]


@pytest.mark.parametrize("prog, name", [(fptrack, "fptrack"), (simtool, "simtool")])
def test_help_lists_the_commands_the_walk_finds(prog, name: str) -> None:
    leaves = [c for c in all_commands() if c.startswith(name + " ")]
    seen = set()
    groups = {()} | {tuple(c.split()[1:-1][:i]) for c in leaves for i in range(1, len(c.split()) - 1)}
    for path in sorted(groups):
        for cmd in listed_in_help(prog, path):
            seen.add(" ".join((name, *path, cmd)))
    groups_named = {" ".join((name, *g)) for g in groups if g}
    assert seen - groups_named == set(leaves)
