"""`fptrack recheck` and `fptrack notify`: the follow-up of takedowns, and who is told what."""
from __future__ import annotations

import time

import click

from clikit.common import note, progress, quiet_option, show, write_records
from clikit.groups import SuggestingGroup
from clikit.plural import counted

from ..cli import click_errors, open_context
from ..store.followup import EVENT_KINDS
from .notify import NotifyError

domain_errors = click_errors(NotifyError)
FORMAT = click.option("--format", "fmt", type=click.Choice(["table", "csv", "jsonl"]), default="table",
                      show_default=True)


@click.command()
@click.option("--site", default=None, help="Only this site's pages.")
@click.option("--delay", type=click.FloatRange(0), default=1.0, show_default=True,
              help="Seconds between two requests to one host (a site's own delay rule asks for more).")
@click.option("--timeout", type=click.FloatRange(0.1), default=30.0, show_default=True, help="Seconds per request.")
@click.option("--removed-days", type=click.IntRange(0), default=30, show_default=True,
              help="Also look at copies marked removed this many days back, to catch one that comes back.")
@FORMAT
@quiet_option
@domain_errors
def recheck(site, delay, timeout, removed_days, fmt, quiet):
    """Re-fetch every page whose takedown was sent: a page that is gone (404, 410,
    451, or the copy no longer on it) marks its matches removed; one still up stays
    open, counted in days since the notice; a removed copy found again reopens its
    match. Obeys robots.txt and the sites' delays. The daily run does this at
    FPT_RECHECK_HOUR; `fptrack notify send` then tells the subscribers.

    \b
    Example:
      fptrack recheck
      fptrack recheck --site biquge --format jsonl
    """
    from ..egress import EgressPolicy
    from .recheck import PoliteClient
    from .recheck import recheck as run

    ctx = open_context()
    t0 = time.perf_counter()
    bar = progress(None, quiet=quiet, desc="re-checking pages", unit="page")
    client = PoliteClient(delay=delay, timeout=timeout, policy=EgressPolicy.load(ctx.settings))
    report = run(ctx, site=site, client=client, removed_days=removed_days,
                 each=lambda c: bar.update(1))
    bar.close()
    write_records(({"page": c.page, "url": c.url, "outcome": c.outcome, "http": c.http_status,
                    "removed": len(c.removed), "reopened": len(c.reopened), "reason": c.reason}
                   for c in report.checks), fmt, ["page", "url", "outcome", "http", "removed", "reopened", "reason"])
    note(f"{report.summary()} in {time.perf_counter() - t0:.1f} s", quiet=quiet)


@click.group(cls=SuggestingGroup)
def notify():
    """Who is told about new matches, copies back after their removal, takedowns
    that worked and failed crawls: an e-mail digest or a signed webhook, per work or
    site. Events wait in the store until `fptrack notify send` or the daily run.

    \b
    Example:
      fptrack notify add --email rights@example.com --work 山城旧事
      fptrack notify add --webhook https://hooks.example.com/fpt --secret S --site biquge
      fptrack notify send
    """


@notify.command("add")
@click.option("--email", default=None, metavar="ADDRESS", help="Send a digest to this e-mail address.")
@click.option("--webhook", default=None, metavar="URL", help="POST each event, signed, to this URL.")
@click.option("--secret", default="", envvar="FPT_WEBHOOK_SECRET",
              help="The webhook's signing key (HMAC-SHA256 in X-Fptrack-Signature); or FPT_WEBHOOK_SECRET.")
@click.option("--work", default="", help="Only events of this work (its title, as registered).")
@click.option("--site", default="", help="Only events of this site.")
@click.option("--all", "everything", is_flag=True, help="Every event, of every work and site.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(EVENT_KINDS),
              help="Only these kinds of event (repeatable; default: all).")
@domain_errors
def add(email, webhook, secret, work, site, everything, kinds):
    """Tell an e-mail address or a webhook about the events of a work or a site
    (both: that work on that site). Adding the same again updates it.

    \b
    Example:
      fptrack notify add --email rights@example.com --work 山城旧事
      fptrack notify add --webhook https://hooks.example.com/fpt --secret S --site biquge --kind copy-back
    """
    from .notify import subscribe

    if bool(email) == bool(webhook):
        raise click.UsageError("give one of --email ADDRESS or --webhook URL")
    if not (work or site or everything):
        raise click.UsageError("give --work TITLE, --site NAME (or both), or --all for every event")
    if everything and (work or site):
        raise click.UsageError("--all means every work and site: leave out --work and --site")
    s = subscribe(open_context().store, "email" if email else "webhook", email or webhook, work=work.strip(),
                  site=site.strip(), secret=secret, kinds=kinds or EVENT_KINDS)
    show(f"{s.id}: {s.channel} {s.target} for {_scope(s)} ({', '.join(s.kinds)})")


def _scope(s) -> str:
    parts = [f"work {s.work}" if s.work else "", f"site {s.site}" if s.site else ""]
    return " on ".join(p for p in parts if p) or "every work and site"


@notify.command("list")
@FORMAT
@domain_errors
def list_(fmt):
    """List the subscriptions, with their pending events.

    \b
    Example:
      fptrack notify list
    """
    store = open_context().store
    pending: dict[str, int] = {}
    for d in store.deliveries(status="pending"):
        pending[d.subscription] = pending.get(d.subscription, 0) + 1
    write_records(({"id": s.id, "channel": s.channel, "target": s.target, "work": s.work, "site": s.site,
                    "kinds": ",".join(s.kinds), "secret": "set" if s.secret else "",
                    "pending": pending.get(s.id, 0), "since": s.created_at.isoformat(timespec="seconds")}
                   for s in store.subscriptions()), fmt,
                  ["id", "channel", "target", "work", "site", "kinds", "secret", "pending", "since"])


@notify.command("remove")
@click.argument("key")
@domain_errors
def remove(key):
    """Remove a subscription: its id, or every subscription of an e-mail address or URL.

    \b
    Example:
      fptrack notify remove rights@example.com
      fptrack notify remove 3f9a1c0b2d4e
    """
    from .notify import unsubscribe

    for s in unsubscribe(open_context().store, key):
        show(f"removed {s.id}: {s.channel} {s.target} for {_scope(s)}")


@notify.command("send")
@click.option("--attempts", type=click.IntRange(1, 10), default=4, show_default=True,
              help="Tries per webhook event now (1, 2, 4... seconds apart).")
@domain_errors
def send(attempts):
    """Send what is pending now: one e-mail digest per address (FPT_SMTP_URL, from
    FPT_MAIL_FROM) and one signed POST per webhook and event. What fails stays
    pending, tried again next time, and the exit status is 1.

    \b
    Example:
      FPT_SMTP_URL=smtp://127.0.0.1:25 fptrack notify send
    """
    from .notify import send_pending

    ctx = open_context()
    r = send_pending(ctx.store, ctx.settings, attempts=attempts)
    for line in r.problems:
        note(line, quiet=False)
    click.echo(f"{counted(r.digests, 'digest')} and {counted(r.webhooks, 'webhook event')} sent "
               f"({counted(r.events, 'delivery')}); "
               f"{r.waiting} waiting")
    if r.problems:
        raise SystemExit(1)  # for cron and scripts: something waits for the next send


@notify.command("log")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@FORMAT
@domain_errors
def delivery_log(limit, fmt):
    """The latest deliveries: event, subscription, status, attempts and what the last one got.

    \b
    Example:
      fptrack notify log --limit 20
    """
    store = open_context().store
    rows = sorted(store.deliveries(), key=lambda d: d.created_at, reverse=True)[:limit]
    write_records(({"event": d.event, "subscription": d.subscription, "status": d.status, "attempts": d.attempts,
                    "last": d.log[-1]["detail"] if d.log else "", "created": d.created_at.isoformat(timespec="seconds")}
                   for d in rows), fmt, ["event", "subscription", "status", "attempts", "last", "created"])


@notify.command("purge")
@click.option("--days", type=click.IntRange(1), default=None,
              help="Remove events older than this many days (default FPT_EVENTS_DAYS, 180; 0 there keeps them).")
@click.option("--dry-run", is_flag=True, help="Count what would be removed; remove nothing.")
@domain_errors
def purge(days, dry_run):
    """Remove the events older than FPT_EVENTS_DAYS (or --days) whose deliveries
    are all sent, with their deliveries. An event with a delivery still pending, or
    not yet routed, is kept whatever its age. The daily run does this too.

    \b
    Example:
      fptrack notify purge --dry-run
      fptrack notify purge --days 30
    """
    from .notify import expire_events

    ctx = open_context()
    days = ctx.settings.events_days if days is None else days
    if days == 0:
        click.echo("FPT_EVENTS_DAYS is 0: events are kept for ever; give --days N to remove older ones")
        return
    r = expire_events(ctx.store, days, dry_run=dry_run)
    if dry_run:
        click.echo(f"would remove {counted(r.events, 'event')} and {counted(r.deliveries, 'delivery')} older than "
                   f"{counted(days, 'day')} "
                   "(--dry-run: nothing removed)")
    else:
        click.echo(f"removed {counted(r.events, 'event')} and {counted(r.deliveries, 'delivery')} older than "
                   f"{counted(days, 'day')}")
