"""`fptrack`: register originals, feed pages, run workers, read the reports.

The tracker's own commands come from tracker.cli; the crawler's, the admin's and the
follow-up's are imported only when they run, so `fptrack --help` and the tracker's
commands never load Scrapy or Flask.
"""
from __future__ import annotations

import importlib
import sys

import click

from clikit.groups import SuggestingGroup
from tracker.cli import commands

#: command name -> "module:attribute" of the click command, imported when it runs.
LAZY = {
    "crawl": "crawler.cli:crawl",
    "sites": "crawler.cli:sites",
    "web": "web.cli:web",
    "user": "web.cli:user",
    "demo": "web.demo.command:demo",
    "evidence": "web.evidence.cli:evidence",
    "recheck": "tracker.followup.cli:recheck",
    "notify": "tracker.followup.cli:notify",
    "discover": "tracker.discovery.cli:discover",
    "org": "tracker.tenancy.cli:org",
    "token": "tracker.tenancy.cli:token",
}


class FptrackGroup(SuggestingGroup):
    """The tracker's commands, and the others of LAZY imported on first use."""

    def list_commands(self, ctx):
        return sorted({*commands.list_commands(ctx), *LAZY})

    def get_command(self, ctx, name):
        if name in LAZY:
            module, _, attr = LAZY[name].partition(":")
            return getattr(importlib.import_module(module), attr)
        return commands.get_command(ctx, name)


@click.group(cls=FptrackGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fptrack", prog_name="fptrack")
def main() -> None:
    """Track where registered novels are copied: originals, pages, matches.

    Works on embedded defaults with nothing set (data in FPT_HOME, default
    ~/.local/share/fptrack); FPT_MONGO_URL, FPT_REDIS_URL and FPT_BROKER_URL
    switch to MongoDB, Redis indexes and Celery workers.

    \b
    Example:
      fptrack add-work 山城旧事 --author 林岚 samples/originals/
      fptrack ingest samples/pages/ --site biquge
      fptrack report 山城旧事
      fptrack matches --format csv > matches.csv
    """


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
