"""`fptrack crawl` and `fptrack sites`: find reposted chapters on the web."""
from __future__ import annotations

import sys

import click

from clikit.cells import json_text, printable
from clikit.common import RECORD_FORMATS, quiet_option, show, write_records
from clikit.groups import SuggestingGroup
from clikit.plural import counted
from tracker.cli import click_errors, domain_errors, open_context
from tracker.media.pictures import counts_sentence
from tracker.safe_names import check_job, clean_site_name, job_for_urls
from tracker.sites.schedule import site_schedule
from tracker.store import NotFound, Site, now

from .frontier import FrontierError, note_start, noted_start, pending
from .rules import RulesError, SiteRules, load_rules_file, make_rules, rules_for_urls

SITE_COLUMNS = ["site", "start_urls", "recrawl", "schedule", "next_crawl", "last_crawl", "outcome", "fetched",
                "stored", "skipped", "failed", "matches"]
SUMMARY_COLUMNS = ["site", "fetched", "chapters", "rendered", "stored", "unchanged", "not modified", "skipped",
                   "failed", "matched", "images fetched", "images matched"]
#: Chapters posted as pictures: in the jsonl records when the crawl saw any (and as a sentence under the table).
PICTURE_COUNTS = ("pictures seen", "pictures read", "characters recognised", "picture pages matched")

# Rule mistakes, a busy job and a failing Redis become one line naming the cause and the fix.
rules_errors = click_errors(RulesError, FrontierError)


def stored_rules(site: Site) -> SiteRules:
    return make_rules({**site.rules, "name": site.name, "start_urls": site.start_urls, "recrawl": site.recrawl,
                       "hour": site.hour, "every": site.every}, where=f"the stored rules of site {site.name!r}")


def save_site(store, rules: SiteRules) -> Site:
    """Keep a site's rules in the store (start URLs, the recrawl flag and the schedule in their own fields)."""
    data = rules.to_dict()
    start = data.pop("start_urls", [])
    data.pop("name", None)
    recrawl, hour, every = data.pop("recrawl", True), data.pop("hour", None), data.pop("every", 1)
    return store.upsert_site(Site(name=rules.name, start_urls=start, rules=data, recrawl=recrawl, hour=hour,
                                  every=every))


def schedule_text(store, site: Site, default_hour: int) -> tuple[str, str]:
    """('daily at 03:00 UTC', '2026-11-26 03:00'): a site's schedule and its next scheduled crawl."""
    shown = site_schedule(store, site, default_hour, now())
    return shown["text"], shown["next"].strftime("%Y-%m-%d %H:%M") if shown["next"] else ""


@click.command()
@click.argument("urls", nargs=-1)
@click.option("--rules", "rules_file", type=click.Path(exists=True, dir_okay=False),
              help="A TOML or JSON file of site rules (see `fptrack sites add --help`).")
@click.option("--site", "site_names", multiple=True, help="Crawl a site configured with `fptrack sites add` (repeatable).")
@click.option("--all-sites", is_flag=True, help="Crawl every configured site whose schedule is not paused.")
@click.option("--max-pages", type=click.IntRange(1), help="Stop after fetching this many pages (resumable).")
@click.option("--depth", type=click.IntRange(0), help="Follow links this many steps from a start URL [6].")
@click.option("--timeout", type=click.FloatRange(0.1), help="Seconds to wait for one page [30].")
@click.option("--retries", type=click.IntRange(0), help="Retries of a page that timed out or got a 5xx [2].")
@click.option("--delay", type=click.FloatRange(0), help="Seconds between requests to one site [0.25, adapted].")
@click.option("--concurrency", type=click.IntRange(1), help="Requests at once to one site [4].")
@click.option("--max-bytes", type=click.IntRange(1024), help="Largest page accepted, in bytes [4 MiB].")
@click.option("--job", default="",
              help="Name of the crawl job, to resume it (default: from the site names, and the URLs when given).")
@click.option("--fresh", is_flag=True, help="Forget a paused crawl of the same job and start over.")
@click.option("--no-process", is_flag=True, help="Only store the pages as queued (`fptrack process` matches them).")
@click.option("-v", "--verbose", count=True, help="Scrapy's log: -v for INFO, -vv for DEBUG.")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl"]), default="table", show_default=True)
@quiet_option
@rules_errors
def crawl(urls, rules_file, site_names, all_sites, max_pages, depth, timeout, retries, delay, concurrency,
          max_bytes, job, fresh, no_process, verbose, fmt, quiet):
    """Crawl sites for reposted chapters and match every chapter page found.

    Follows links within each site, recognises chapter pages, extracts their
    main text (site chrome and ads removed), joins chapters split over pages,
    and stores each page; without FPT_BROKER_URL the pages are matched before
    the command ends, so `fptrack matches` shows the results. Obeys robots.txt.
    Ctrl-C (once) pauses: run the same command again to resume (a crawl of other
    URLs is another job). A site none of whose pages could be fetched gets one
    line per cause ("could not crawl URL: connection refused"); the exit status
    is 1 when no page at all could be fetched, 0 otherwise (the summary counts
    the failed pages), 2 for a usage mistake.

    \b
    Example:
      fptrack crawl https://www.biquge.test/book/1/ --max-pages 500
      fptrack crawl --rules sites.toml --depth 3
      fptrack crawl --site biquge
    """
    from .run import CrawlLimits, run_crawl

    if job:
        check_job(job)  # before anything is read, made or deleted
    site_names = [clean_site_name(n) for n in site_names]
    ctx = open_context()
    store = ctx.store
    known = [stored_rules(s) for s in store.sites()]
    from_file = load_rules_file(rules_file) if rules_file else []
    for name in site_names:
        try:
            known_site = stored_rules(store.get_site(name))
        except NotFound:
            raise click.ClickException(f"no site {name!r}; add it with `fptrack sites add {name} URL` "
                                       "or see `fptrack sites list`") from None
        from_file.append(known_site)
    if all_sites:
        from_file.extend(s for s in known if s.recrawl)
        if not from_file and not urls:
            click.echo("no sites are configured for re-crawling (fptrack sites add NAME URL)", err=True)
            return
    if urls:
        sites = rules_for_urls(urls, [*from_file, *known])
    else:
        sites = list({s.name: s for s in from_file}.values())
    if not sites:
        raise click.UsageError("give URLs to crawl, --rules FILE, --site NAME or --all-sites")
    for s in sites:
        if not s.start_urls:
            raise click.ClickException(f"site {s.name!r} has no start URLs; add start_urls to its rules")
    limits = CrawlLimits(max_pages=max_pages, depth=depth, timeout=timeout, retries=retries, delay=delay,
                         concurrency=concurrency, max_bytes=max_bytes)
    given = sorted({u for s in sites for u in s.start_urls}) if urls else []
    if urls and not job:  # a crawl of other URLs on the same site is another job, never a resumed one
        job = job_for_urls([s.name for s in sites], given)
    if urls and not fresh:
        check_resumable(ctx.settings, job, given)
    log_level = {0: "NONE" if quiet else "WARNING", 1: "INFO"}.get(verbose, "DEBUG")
    ctx.close()
    bar = None
    if not quiet and verbose == 0 and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(desc="crawling", unit="page", file=sys.stderr, leave=False)
    try:
        # `bar is not None`: a tqdm bar with no total has no truth value (bool() raises TypeError).
        result = run_crawl(ctx.settings, sites, limits, job=job, fresh=fresh, process=not no_process,
                           log_level=log_level, on_response=(lambda _url: bar.update()) if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    if urls and result.resumable:
        note_start(ctx.settings, result.job, given)
    _report(result, fmt, quiet)
    failures = failure_lines(result, sites)
    for line in failures:  # said even with --quiet: nothing could be fetched there
        click.echo(printable(line), err=True)
    if nothing_fetched(result):
        sys.exit(1)


def check_resumable(settings, job: str, given: list[str]) -> None:
    """A paused crawl of other start URLs is not resumed by a crawl of these: one line saying so, and the fix."""
    before = noted_start(settings, job)
    if before is not None and before != given and pending(settings, job):
        raise click.ClickException(printable(
            f"job {job!r} is a paused crawl of {' '.join(before)}, not of {' '.join(given)}: add --fresh to "
            "start it over with these URLs, or give this crawl another --job NAME"))


def failure_lines(result, sites: list[SiteRules]) -> list[str]:
    """One line per cause for each site of which no page at all could be fetched:
    "could not crawl http://127.0.0.1:1/: connection refused"."""
    start = {s.name: s.start_urls for s in sites}
    lines = []
    for name, entry in sorted(result.sites.items()):
        if entry["counts"].get("fetched", 0):
            continue
        where = " ".join(start.get(name, ())) or name
        lines.extend(f"could not crawl {where}: {reason}" for reason in sorted(entry.get("failed", {})))
    return lines


def nothing_fetched(result) -> bool:
    """Exit status 1: the crawl ran to its end, no page of any site was fetched, and some requests failed
    (a crawl where some pages failed but others were fetched succeeds; its summary counts the failed)."""
    counts = [entry["counts"] for entry in result.sites.values()]
    return (not result.resumable and not any(c.get("fetched", 0) for c in counts)
            and any(c.get("failed", 0) for c in counts))


def _report(result, fmt: str, quiet: bool) -> None:
    rows = []
    for name, entry in sorted(result.sites.items()):
        c = entry["counts"]
        rows.append({"site": name, **{k: c.get(k, 0) for k in SUMMARY_COLUMNS[1:]},
                     "skipped_reasons": entry.get("skipped", {}), "failed_reasons": entry.get("failed", {}),
                     **{k: c[k] for k in PICTURE_COUNTS if k in c}})
    if fmt == "jsonl":
        for r in rows:
            click.echo(json_text({**r, "job": result.job, "outcome": result.outcome}))
    else:
        write_records(rows, "table", SUMMARY_COLUMNS)
        for name, entry in sorted(result.sites.items()):  # chapters posted as pictures (tracker.media.pictures)
            said = counts_sentence(entry["counts"], entry.get("skipped", {}), entry.get("failed", {}))
            if said:
                show(f"  {name}: {said}")
        for r in rows:
            for kind in ("skipped", "failed"):
                for reason, n in sorted(r[f"{kind}_reasons"].items(), key=lambda kv: -kv[1]):
                    show(f"  {r['site']}: {n} {kind}: {reason}")
    sent = sum(entry["counts"].get("sent to the workers", 0) for entry in result.sites.values())
    if sent and fmt == "table":  # "matched" is 0 then: the workers match the pages after the crawl
        click.echo(f"{counted(sent, 'page')} sent to the workers; their matches appear as they are processed "
                   "(fptrack stats, fptrack matches)")
    if result.error:  # a Redis failure: one line with its cause and fix, then how to go on
        click.echo(printable(f"paused: {result.error}; then run the same command again to resume job "
                             f"{result.job!r}") if result.resumable else printable(result.error), err=True)
    elif result.resumable:  # said even with --quiet: the next run of the command behaves differently
        click.echo(printable(f"paused ({result.outcome}); run the same command again to resume job "
                             f"{result.job!r}, or add --fresh to start over"), err=True)
    elif not quiet and fmt == "table" and not nothing_fetched(result):
        click.echo(printable("see the matches: fptrack matches" + (f" --site {rows[0]['site']}" if len(rows) == 1
                                                                  else "")), err=True)


@click.group(cls=SuggestingGroup)
def sites():
    """Configure the sites to crawl, and see their crawl statistics.

    \b
    Example:
      fptrack sites add biquge https://www.biquge.test/book/1/ --content '#content'
      fptrack sites list
    """


@sites.command("add")
@click.argument("name")
@click.argument("urls", nargs=-1)
@click.option("--rules", "rules_file", type=click.Path(exists=True, dir_okay=False),
              help="Take the rules of NAME (or of its only site) from this TOML or JSON file.")
@click.option("--content", default=None, help="CSS (or XPath starting with /) of the chapter text.")
@click.option("--title", default=None, help="CSS or XPath of the chapter title.")
@click.option("--next-page", default=None, help="CSS or XPath of the link to the next part of a chapter.")
@click.option("--chapter-links", default=None, help="CSS or XPath of the chapter links on a catalogue page.")
@click.option("--follow", multiple=True, help="Regex: follow only links matching one of these (repeatable).")
@click.option("--deny", multiple=True, help="Regex: never follow links matching one of these (repeatable).")
@click.option("--encoding", default=None, help="Force this encoding (gbk, big5, utf-8, ...).")
@click.option("--delay", type=click.FloatRange(0), default=None, help="Seconds between requests to the site.")
@click.option("--concurrency", type=click.IntRange(1), default=None, help="Requests at once to the site.")
@click.option("--depth", type=click.IntRange(0), default=None, help="Link depth for this site.")
@click.option("--render/--no-render", default=None,
              help="Render in headless chromium every page with scripts and no chapter text in its HTML "
                   "[no: only pages whose scripts look like they write the chapter].")
@click.option("--recrawl/--no-recrawl", default=None, help="Crawl it on its schedule; --no-recrawl pauses it [yes].")
@click.option("--hour", type=int, default=None, help="UTC hour of its scheduled crawl, 0-23 [FPT_RECRAWL_HOUR].")
@click.option("--every", type=int, default=None, help="Days between its scheduled crawls, 1-30 [1].")
@rules_errors
def sites_add(name, urls, rules_file, **options):
    """Add a site to watch, or change its rules (given options replace the stored ones).

    Rules files hold [[site]] tables with the keys: name, start_urls,
    allowed_domains, follow, deny, chapter_urls, title, content, next_page,
    chapter_links, encoding, delay, concurrency, obey_robots, max_pages,
    depth, render, recrawl, hour, every.

    The site is crawled at --hour (UTC) every --every days; --no-recrawl
    pauses its schedule.

    \b
    Example:
      fptrack sites add biquge https://www.biquge.test/book/1/ --content '#content' --delay 1
      fptrack sites add biquge --hour 4 --every 2
      fptrack sites add biquge --rules sites.toml
    """
    name = clean_site_name(name)
    ctx = open_context()
    store = ctx.store
    values: dict = {}
    try:
        known = store.get_site(name)
    except NotFound:
        pass
    else:
        values.update(known.rules, start_urls=known.start_urls, recrawl=known.recrawl, hour=known.hour,
                      every=known.every)
    if rules_file:
        found = load_rules_file(rules_file)
        chosen = [s for s in found if s.name == name] or (found if len(found) == 1 else [])
        if not chosen:
            raise click.ClickException(f"{rules_file} has no site named {name!r} "
                                       f"(it has: {', '.join(s.name for s in found)})")
        values.update(chosen[0].to_dict())
    if urls:
        values["start_urls"] = list(urls)
    for key, value in options.items():
        if value is not None and value != ():
            values[key] = list(value) if isinstance(value, tuple) else value
    values["name"] = name
    rules = make_rules(values, where=f"site {name!r}")
    if not rules.start_urls:
        raise click.UsageError(f"site {name!r} needs at least one start URL: fptrack sites add {name} URL")
    site = save_site(store, rules)
    show(f"site {site.name}: {counted(len(site.start_urls), 'start URL')}, rules: "
         + (", ".join(f"{k}={v}" for k, v in site.rules.items()) or "none (automatic)")
         + "; schedule: " + schedule_text(store, site, ctx.settings.recrawl_hour)[0])


@sites.command("import")
@click.argument("rules_file", type=click.Path(exists=True, dir_okay=False))
@rules_errors
def sites_import(rules_file):
    """Add (or update) every site of a TOML or JSON rules file.

    \b
    Example:
      fptrack sites import sites.toml
    """
    store = open_context().store
    for rules in load_rules_file(rules_file):
        if not rules.start_urls:
            raise click.ClickException(f"{rules_file}: site {rules.name!r} has no start_urls")
        save_site(store, rules)
        show(f"site {rules.name}: {counted(len(rules.start_urls), 'start URL')}")


@sites.command("list")
@click.option("--format", "fmt", type=click.Choice(RECORD_FORMATS), default="table", show_default=True)
@domain_errors
def sites_list(fmt):
    """The configured sites with their last crawl and match counts.

    \b
    Example:
      fptrack sites list --format jsonl
    """
    ctx = open_context()
    store = ctx.store
    rows = []
    for s in store.sites():
        last = store.crawl_runs(site=s.name, limit=1)
        run = last[0] if last else None
        shown = site_schedule(store, s, ctx.settings.recrawl_hour, now())
        rows.append({
            "site": s.name, "start_urls": " ".join(s.start_urls), "recrawl": "yes" if s.recrawl else "no",
            "schedule": shown["text"], "next_crawl": shown["next"],  # dates: ISO 8601 with offset in json/csv
            "last_crawl": run.finished_at if run else ("never" if fmt == "table" else None),
            "outcome": run.outcome if run else "", "fetched": run.counts.get("fetched", 0) if run else 0,
            "stored": run.counts.get("stored", 0) if run else 0,
            "skipped": run.counts.get("skipped", 0) if run else 0, "failed": run.counts.get("failed", 0) if run else 0,
            "matches": store.count_matches(site=s.name),
        })
    if not rows and fmt == "table":
        click.echo("no sites yet: fptrack sites add NAME URL", err=True)
        return
    write_records(rows, fmt, SITE_COLUMNS)


@sites.command("show")
@click.argument("name")
@click.option("--runs", type=click.IntRange(1), default=5, show_default=True, help="How many recent crawls to show.")
@domain_errors
def sites_show(name, runs):
    """A site's rules and its recent crawls with skipped and failed reasons.

    \b
    Example:
      fptrack sites show biquge
    """
    ctx = open_context()
    store = ctx.store
    s = store.get_site(clean_site_name(name))
    schedule, next_crawl = schedule_text(store, s, ctx.settings.recrawl_hour)
    show(f"site {s.name} (schedule: {schedule}" + (f"; next crawl {next_crawl} UTC)" if next_crawl else ")"))
    for url in s.start_urls:
        show(f"  start: {url}")
    for k, v in s.rules.items():
        show(f"  {k}: {v}")
    for run in store.crawl_runs(site=s.name, limit=runs):
        counts = ", ".join(f"{k} {v}" for k, v in run.counts.items())
        show(f"crawl {run.started_at:%Y-%m-%d %H:%M} - {run.finished_at:%H:%M} ({run.outcome}): {counts}")
        for kind, reasons in (("skipped", run.skipped), ("failed", run.failed)):
            for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
                show(f"    {n} {kind}: {reason}")


@sites.command("remove")
@click.argument("name")
@domain_errors
def sites_remove(name):
    """Stop watching a site (its pages, matches and crawl history stay).

    \b
    Example:
      fptrack sites remove biquge
    """
    name = clean_site_name(name)
    open_context().store.delete_site(name)
    show(f"removed site {name}")
