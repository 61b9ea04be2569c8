"""`fptrack discover`: search the web for copies of the registered works and crawl what is new."""
from __future__ import annotations

import click

from clikit.cells import json_text, printable
from clikit.common import note, quiet_option, write_records
from clikit.plural import counted

from ..cli import click_errors, open_context
from .discover import DiscoveryError, DiscoverySettings
from .discover import discover as run_discovery
from .providers import SearchError

COLUMNS = ["n", "work", "kind", "query", "returned", "new", "stored", "matches", "sites", "error"]
DRY_COLUMNS = ["n", "work", "kind", "query"]


@click.command()
@click.option("--work", "work", default=None, help="Only this work (its title or id) [every work].")
@click.option("--provider", default=None,
              help="The search provider: http (the API set by FPT_SEARCH_URL and FPT_SEARCH_PRESET), or "
                   "package.module:Class for a plug-in [FPT_SEARCH_PROVIDER, http].")
@click.option("--max-queries", type=click.IntRange(1), default=None,
              help="Send at most this many queries in this run [FPT_DISCOVERY_MAX_QUERIES, 500].")
@click.option("--dry-run", is_flag=True, help="Only print the queries: nothing is sent, crawled or stored.")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl"]), default="table", show_default=True)
@quiet_option
@click_errors(DiscoveryError, SearchError)
def discover(work, provider, max_queries, dry_run, fmt, quiet):
    """Find copies where search engines point: for each work, search its
    distinctive sentences, title and chapter titles as quoted phrases, crawl
    the result URLs never seen before (grouped by site; robots.txt and each
    site's politeness apply), and count per query the URLs returned, the new
    ones, the pages stored and the matches made. A site that was not tracked
    and whose pages match is added to the sites (fptrack sites list).

    One line per query the search API did not answer; the run goes on.
    The API: FPT_SEARCH_URL (a template with {query}, {page}...),
    FPT_SEARCH_PRESET (searxng, bing, google, brave), FPT_SEARCH_KEY.

    \b
    Example:
      export FPT_SEARCH_PRESET=searxng
      export FPT_SEARCH_URL='https://searx.example.org/search?q={query}&format=json&pageno={page}'
      fptrack discover --dry-run
      fptrack discover --work 山城旧事 --max-queries 5
    """
    settings = DiscoverySettings.load()
    ctx = open_context()
    try:
        report = run_discovery(ctx, settings, provider_name=provider, work=work, max_queries=max_queries,
                               dry_run=dry_run, say=lambda line: click.echo(printable(line), err=True))
    finally:
        ctx.close()
    rows = [{"n": n, "work": o.query.work, "kind": o.query.kind, "query": o.query.text, "returned": len(o.results),
             "new": len(o.new), "stored": o.stored, "matches": o.matches, "sites": " ".join(o.sites),
             "error": o.error} for n, o in enumerate(report.queries)]
    if fmt == "jsonl":
        for r in rows:
            out = {k: r[k] for k in DRY_COLUMNS} if dry_run else {**r, "sites": r["sites"].split(),
                                                                    "run": report.run.id}
            click.echo(json_text(out))
    elif rows:
        write_records(rows, "table", DRY_COLUMNS if dry_run else COLUMNS)
    else:
        note("no queries: register a work first (fptrack add-work TITLE FILE)", quiet=False)
    if report.run is not None:
        c = report.counts
        note(f"discovery run {report.run.id}: {counted(c['queries'], 'query')} ({c['failed']} failed), "
             f"{counted(c['returned'], 'URL')} returned, {c['new']} new, {counted(c['stored'], 'page')} stored, "
             f"{counted(c['matches'], 'match')}"
             + (f"; now tracking {', '.join(report.sites_added)}" if report.sites_added else "")
             + (" (stopped at the query budget)" if report.run.outcome == "budget" else ""), quiet=quiet)
