"""A mistyped command gets the closest one suggested, at every level of both programs."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from clikit.groups import SuggestingGroup
from fptrack.cli import main as fptrack
from simtool import main as simtool


def groups(group: click.Group, path: str):
    yield path, group
    ctx = click.Context(group, info_name=path)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from groups(cmd, f"{path} {name}")


def test_every_group_suggests() -> None:
    plain = [p for prog, name in ((fptrack, "fptrack"), (simtool, "simtool")) for p, g in groups(prog, name)
             if not isinstance(g, SuggestingGroup)]
    assert not plain, f"groups that do not suggest a command (use cls=SuggestingGroup): {plain}"


@pytest.mark.parametrize("prog, args, meant", [
    (simtool, ["trak"], "track"),
    (simtool, ["dedupe", "x"], "dedup"),
    (fptrack, ["notfy"], "notify"),  # a command loaded lazily
    (fptrack, ["reprot", "山城旧事"], "report"),
    (fptrack, ["notify", "sned"], "send"),  # nested groups
    (fptrack, ["sites", "lsit"], "list"),
    (fptrack, ["user", "passwrd", "alice"], "passwd"),
    (fptrack, ["token", "revok", "abc"], "revoke"),
    (fptrack, ["org", "asign"], "assign"),
])
def test_a_typo_names_the_closest_command(prog, args, meant) -> None:
    r = CliRunner().invoke(prog, args)
    assert r.exit_code == 2
    typo = next(a for a in args if a not in ("notify", "sites", "user", "token", "org"))
    assert f"Error: No such command {typo!r}. Did you mean {meant!r}?" in r.output, r.output


def test_nothing_close_gets_no_guess() -> None:
    r = CliRunner().invoke(fptrack, ["zzzzzz"])
    assert r.exit_code == 2
    assert "Error: No such command 'zzzzzz'." in r.output and "Did you mean" not in r.output


def test_options_and_the_course_form_still_work() -> None:
    assert CliRunner().invoke(simtool, ["--help"]).exit_code == 0
    assert CliRunner().invoke(fptrack, ["notify", "--help"]).exit_code == 0
    r = CliRunner().invoke(simtool, ["1000", "16", "--dir", "/nonexistent-folder"])
    assert "No such command" not in r.output  # numbers still run the course mode
