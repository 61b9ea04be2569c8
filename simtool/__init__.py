"""`simtool`: the offline face of the fingerprint engine.

May import: fingerprint, pagetext, ocr, clikit and simtool.
"""
from __future__ import annotations

import re

import click

from clikit.groups import SuggestingGroup
from fingerprint import __version__

_NUMBER = re.compile(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?")


# command name -> module of simtool holding it as `command`; imported when the command runs
# (or when --help lists them all), so that `simtool fingerprint` does not load the other commands.
COMMANDS = {"course": "course", "fingerprint": "fingerprint", "compare": "compare", "dedup": "dedup",
            "track": "track", "samples": "samples"}


class SimtoolGroup(SuggestingGroup):
    """A command group that also accepts the course form `simtool N M`, and loads commands lazily."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and _NUMBER.fullmatch(args[0]):  # `simtool 1000 16`, and its bad forms get the course's errors
            args = ["course", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        from importlib import import_module

        return import_module(f".{COMMANDS[name]}", __name__).command


@click.group(cls=SimtoolGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="simtool")
def main() -> None:
    """Find copied and near-duplicate texts offline, with the fptrack engine.

    \b
    Examples:
      simtool 1000 16                       # the BUAA course mode, in the data folder
      simtool compare original.txt page.html
      simtool track originals/ pages/ --format table
      simtool dedup pages/ --threshold 3
      simtool fingerprint book.txt --channels all
      simtool samples                       # the sample novel and pages, into ./samples
    """
