"""The command group every `simtool` and `fptrack` group is made of: a mistyped command gets
the closest one suggested, whether the group's commands are registered or loaded lazily."""
from __future__ import annotations

import difflib

import click


class SuggestingGroup(click.Group):
    """A click group that answers `simtool trak` with "No such command 'trak'. Did you mean 'track'?".

    Click suggests only among the commands registered on the group itself, so groups that load
    their commands on demand (as both programs' top groups do) got no suggestion; this one asks
    `list_commands`, which every group answers."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = click.utils.make_str(args[0]) if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            ctx.fail(f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""))
        return super().resolve_command(ctx, args)
