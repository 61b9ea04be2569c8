"""`fptrack`: register originals, feed pages, run workers, read the reports."""
from __future__ import annotations

import functools
import time

import click

from clikit.cells import printable
from clikit.common import RECORD_FORMATS, note, progress, quiet_option, show, write_records
from clikit.plural import counted
from fingerprint.errors import FingerprintError

from .settings import Settings, SettingsError
from .store import ACTIVE_STATUSES, MATCH_STATUSES, NotFound, StoreError
from .store.totals import best_kind, describe, kind_counts

MATCH_COLUMNS = ["page", "original", "work", "site", "verdict", "similarity", "containment", "page_share",
                 "status", "first_seen", "last_seen"]
IMAGE_MATCH_COLUMNS = ["image", "original", "work", "site", "found_on", "distance", "colour_agreement", "status",
                       "first_seen", "last_seen"]


def click_errors(*more: type[Exception]):
    """A decorator: domain errors (and `more` kinds) become one line with the fix; never a
    traceback for a user mistake."""
    kinds = (FingerprintError, SettingsError, StoreError, *more)

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            # Messages quote names from crawled pages and files: printed with their control characters escaped.
            try:
                return fn(*args, **kwargs)
            except kinds as e:
                raise click.ClickException(printable(str(e))) from e
            except NotFound as e:
                raise click.ClickException(printable(f"not found: {e.args[0] if e.args else e}")) from e
            except Exception as e:  # Redis' errors, without importing redis here
                line = redis_line(e)
                if line is None:
                    raise
                raise click.ClickException(printable(line)) from e

        return wrapper

    return decorate


def redis_line(e: BaseException) -> str | None:
    """The one line that names a Redis failure's cause and fix (None for other errors):
    RedisUnavailable carries it; redis-py's own errors are explained for FPT_REDIS_URL."""
    if type(e).__name__ in ("RedisUnavailable", "IndexUnavailable"):
        return str(e)
    if not type(e).__module__.startswith("redis."):
        return None
    from .redis_client import explain

    try:
        url = Settings.load().redis_url
    except SettingsError:
        url = ""
    return explain(e, url or "FPT_REDIS_URL", cluster="Cluster" in type(e).__name__)


domain_errors = click_errors()
verbose_option = click.option("-v", "--verbose", is_flag=True,
                              help="List every skipped input (file:line) with its reason, and every input "
                                   "with bad characters replaced.")


def read_summary(report, *, verbose: bool, quiet: bool) -> None:
    """What reading the inputs skipped or repaired: one line, and with -v one line per input."""
    if report.problems:
        note(report.summary(), quiet=quiet)
        if verbose:
            for line in report.details():
                note(f"  {line}", quiet=quiet)


def open_context():
    from .context import Context

    return Context(Settings.load())


@click.group()
def commands() -> None:
    """The tracker's own commands; the `fptrack` program (fptrack.cli) adds them to its group."""


@commands.command("add-work")
@click.argument("title")
@click.argument("path", type=click.Path(exists=True), required=False)
@click.option("--author", default="", help="The work's author.")
@click.option("--cover", "covers", multiple=True, type=click.Path(exists=True),
              help="An image of the work (its cover, an illustration), or a folder of them; repeatable. "
                   "Image files inside PATH's folder are registered too.")
@verbose_option
@quiet_option
@domain_errors
def add_work(title, path, author, covers, verbose, quiet):
    """Register a novel: a whole-book file (split at 第X章/回/卷 or "Chapter N"
    headings), a folder with one chapter per file (key = file name without
    extension), or a JSON Lines file of {"id", "text"} records; and its covers
    and illustrations (JPEG, PNG, GIF, WebP, BMP), which crawled pages are
    checked against too.

    Registering again updates changed chapters and their fingerprints.

    \b
    Example:
      fptrack add-work 三国演义 --author 罗贯中 sanguoyanyi.txt --cover cover.jpg
      fptrack add-work 山城旧事 samples/originals/
      fptrack add-work 山城旧事 --cover art/
    """
    from .registry import register_work

    ctx = open_context()
    t0 = time.perf_counter()
    r = register_work(ctx, title, path, author=author, images=covers,
                      progress=lambda it: progress(it, quiet=quiet, desc="registering chapters", unit="chapter"))
    n = len(r.added) + len(r.changed) + len(r.unchanged)
    images = r.images
    pictures = (f", {counted(images.registered, 'image')} ({len(images.added)} new, {len(images.changed)} changed, "
                f"{len(images.unchanged)} unchanged)") if images.registered or covers else ""
    show(f"{r.work.title}: {counted(n, 'chapter')} ({len(r.added)} new, {len(r.changed)} changed, "
         f"{len(r.unchanged)} unchanged){pictures} in {time.perf_counter() - t0:.1f} s")
    if r.empty:
        note(f"not indexed (no text left after removing boilerplate): {', '.join(r.empty)}", quiet=quiet)
    read_summary(r.skipped, verbose=verbose, quiet=quiet)
    for source, reason in images.skipped:
        note(f"image skipped: {source}: {reason}", quiet=quiet)


@commands.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--site", default="", help="The site the pages come from (default: from the records, or none).")
@click.option("--no-process", is_flag=True, help="Only store and queue the pages.")
@verbose_option
@quiet_option
@domain_errors
def ingest(paths, site, no_process, verbose, quiet):
    """Take saved pages (text, HTML in any common encoding, JSON Lines with
    id/text/url) and images as if crawled, then process them: with FPT_BROKER_URL
    set the workers do it, otherwise it runs here. Unchanged pages are not
    reprocessed. Images are checked against the works' registered images.

    \b
    Example:
      fptrack ingest samples/pages/ --site biquge
      fptrack ingest crawl.jsonl --no-process && fptrack process
    """
    from .pipeline import ingest as do_ingest
    from .workers.queue import dispatch_images, dispatch_pages

    ctx = open_context()
    r = do_ingest(ctx, list(paths), site=site)
    click.echo(f"{counted(len(r.queued), 'page')} queued, {len(r.unchanged)} unchanged"
               + (f"; {counted(len(r.images), 'image')} queued, {len(r.images_unchanged)} unchanged"
                  if r.images or r.images_unchanged else ""))
    read_summary(r.read, verbose=verbose, quiet=quiet)
    if r.queued and not no_process:
        click.echo(dispatch_pages(ctx, r.queued, progress=lambda it: progress(it, quiet=quiet, desc="processing pages",
                                                                             unit="page")))
    if r.images and not no_process:
        click.echo(dispatch_images(ctx, r.images))


@commands.command()
@click.option("--limit", type=click.IntRange(1), default=None, help="Process at most this many pages.")
@quiet_option
@domain_errors
def process(limit, quiet):
    """Process the queued pages, and the queued images found on pages, here, in this process.

    \b
    Example:
      fptrack process --limit 1000
    """
    from .pipeline import process_queued, process_queued_images

    ctx = open_context()
    t0 = time.perf_counter()
    bar = progress(None, quiet=quiet, desc="processing pages", total=limit, unit="page")
    counts = process_queued(ctx, limit=limit, each=lambda r: bar.update(1))
    bar.close()
    click.echo(f"{counted(counts['done'], 'page')} done, {counts['failed']} failed, {counted(counts['matches'], 'match')} "
               f"in {time.perf_counter() - t0:.1f} s")
    images = process_queued_images(ctx, limit=limit)
    if images["done"] or images["failed"]:
        click.echo(f"{counted(images['done'], 'image')} done, {images['failed']} failed, "
                   f"{counted(images['matches'], 'image match')}"
                   + (f", {counted(images['pictures read'], 'picture')} read by OCR, "
                      f"{counted(images['picture matches'], 'match', 'matches')} in their text"
                      if images["pictures read"] else ""))


@commands.command(context_settings={"ignore_unknown_options": True})
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@domain_errors
def worker(celery_args):
    """Run a Celery worker (needs FPT_BROKER_URL); extra arguments go to Celery.

    \b
    Example:
      FPT_BROKER_URL=redis://127.0.0.1:6379/1 fptrack worker --concurrency 2
    """
    from .workers.app import run_worker

    run_worker(Settings.load(), list(celery_args))


@commands.command(context_settings={"ignore_unknown_options": True})
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@domain_errors
def beat(celery_args):
    """Run Celery beat: the hourly check that crawls the sites on their schedules, and the daily run
    (needs FPT_BROKER_URL).

    \b
    Example:
      FPT_BROKER_URL=redis://127.0.0.1:6379/1 fptrack beat
    """
    from .workers.app import run_beat

    run_beat(Settings.load(), list(celery_args))


@commands.command()
@click.option("--refingerprint", is_flag=True, help="Fingerprint every chapter again, not only those missing.")
@quiet_option
@domain_errors
def reindex(refingerprint, quiet):
    """Rebuild the index (Redis or in-process) from the store.

    \b
    Example:
      fptrack reindex
    """
    from .pipeline import reindex as do_reindex

    ctx = open_context()
    t0 = time.perf_counter()
    n = do_reindex(ctx, refingerprint=refingerprint,
                   progress=lambda it: progress(it, quiet=quiet, desc="fingerprinting", unit="chapter"))
    click.echo(f"indexed {counted(n, 'chapter')} in {time.perf_counter() - t0:.1f} s")


@commands.command()
@click.option("--format", "fmt", type=click.Choice(RECORD_FORMATS), default="table", show_default=True)
@domain_errors
def works(fmt):
    """List the registered works with their chapter and match counts.

    \b
    Example:
      fptrack works
    """
    ctx = open_context()
    rows = []
    for w in ctx.store.works():
        n = sum(1 for _ in ctx.store.chapters(work=w.id))
        ms = ctx.store.matches(work=w.id)
        rows.append({"work": w.id, "author": w.author, "chapters": n, "matches": len(ms),
                     "sites": len({m.site for m in ms}), "registered": w.created_at})
    write_records(rows, fmt, ["work", "author", "chapters", "matches", "sites", "registered"])


@commands.command()
@click.argument("work")
@click.option("--format", "fmt", type=click.Choice(RECORD_FORMATS), default="table", show_default=True)
@domain_errors
def report(work, fmt):
    """Where a work's chapters are copied: per chapter, the pages and sites that
    copy it, how much (in full, in part or an excerpt), and since when. Counts the
    copies still up (new, confirmed, takedown-sent).

    \b
    Example:
      fptrack report 山城旧事
    """
    ctx = open_context()
    w = ctx.store.get_work(work)
    by_chapter: dict[str, list] = {}
    for m in ctx.store.matches(work=w.id):
        if m.status in ACTIVE_STATUSES:  # the copies still up
            by_chapter.setdefault(m.chapter, []).append(m)
    rows = []
    for ch in ctx.store.chapters(work=w.id):
        ms = by_chapter.get(ch.key, [])
        rows.append({
            # "copied": full, part or excerpt, the most any copy still up carries
            "chapter": ch.key.split("/", 1)[1], "copied": best_kind(m.verdict for m in ms) or "",
            "copies": len(ms), "sites": len({m.site for m in ms}),
            "best_containment": max((m.containment for m in ms), default=0.0),
            "first_seen": min((m.first_seen for m in ms), default=None),
            "last_seen": max((m.last_seen for m in ms), default=None),
            "pages": " ".join(sorted(m.page for m in ms)),
        })
    write_records(rows, fmt, ["chapter", "copied", "copies", "sites", "best_containment", "first_seen", "last_seen",
                              "pages"])
    note(f"{w.title}: {describe(kind_counts(r['copied'] or None for r in rows), len(rows))}", quiet=fmt != "table")


@commands.command()
@click.option("--work", default=None, help="Only this work's matches.")
@click.option("--site", default=None, help="Only this site's matches.")
@click.option("--status", type=click.Choice(MATCH_STATUSES), default=None)
@click.option("--images", is_flag=True, help="List the images found on pages that copy registered images instead.")
@click.option("--limit", type=click.IntRange(1), default=None)
@click.option("--format", "fmt", type=click.Choice(RECORD_FORMATS), default="table", show_default=True)
@domain_errors
def matches(work, site, status, images, limit, fmt):
    """List matches, most contained first. JSON Lines records carry the evidence spans.
    With --images: the page images that copy a registered image, nearest first.

    \b
    Example:
      fptrack matches --work 山城旧事 --format jsonl
      fptrack matches --images --site biquge
    """
    ctx = open_context()
    if images:
        write_records(({"image": m.image, "original": m.work_image, "work": m.work, "site": m.site,
                        "found_on": m.found_on, "distance": m.distance, "colour_agreement": m.colour_agreement,
                        "status": m.status, "first_seen": m.first_seen.isoformat(timespec="seconds"),
                        "last_seen": m.last_seen.isoformat(timespec="seconds")}
                       for m in ctx.store.image_matches(work=work, site=site, status=status, limit=limit)),
                      fmt, IMAGE_MATCH_COLUMNS)
        return

    def rows():
        for m in ctx.store.matches(work=work, site=site, status=status, limit=limit):
            rec = {"page": m.page, "original": m.chapter, "work": m.work, "site": m.site, "verdict": m.verdict,
                   "similarity": m.similarity, "containment": m.containment, "page_share": m.page_share,
                   "status": m.status, "first_seen": m.first_seen.isoformat(timespec="seconds"),
                   "last_seen": m.last_seen.isoformat(timespec="seconds")}
            if fmt == "jsonl":
                rec.update({"scores": m.scores, "spans": m.spans, "history": m.history})
            yield rec

    write_records(rows(), fmt, MATCH_COLUMNS)


@commands.command("set-status")
@click.argument("page")
@click.argument("original")
@click.argument("status", type=click.Choice(MATCH_STATUSES))
@click.option("--by", default="", help="Who made the change (kept in the match's history).")
@domain_errors
def set_status(page, original, status, by):
    """Change a match's status: new, confirmed, dismissed, takedown-sent, removed.
    PAGE and ORIGINAL are a page and a chapter, or a page image and a registered image.
    The chapter may be given short: a unique start of its key or of its name
    ("第一章" for 山城旧事/第一章 雨夜来客) among the chapters the page copies.

    \b
    Example:
      fptrack set-status biquge-1 山城旧事/山城旧事-第一章 confirmed --by alice
      fptrack set-status biquge-1 山城旧事-第一 confirmed
      fptrack set-status https://img.example/c/1.jpg 山城旧事/cover.jpg takedown-sent
    """
    from .match_keys import AmbiguousKey, chapter_of_match

    store = open_context().store
    try:
        chapter = chapter_of_match(store, page, original) or original
    except AmbiguousKey as e:  # the candidates, and to give more of the key
        raise click.ClickException(printable(str(e))) from None
    try:
        m = store.set_match_status(page, chapter, status, by=by)
        show(f"{m.page} -> {m.chapter}: {m.status}")
    except NotFound:
        try:
            im = store.set_image_match_status(page, original, status, by=by)
        except NotFound:
            raise NotFound(f"no match of {page!r} with {original!r} (a chapter or a registered image); "
                           "`fptrack matches` and `fptrack matches --images` list them") from None
        show(f"{im.image} -> {im.work_image}: {im.status}")


@commands.command()
@click.option("--failures", type=click.IntRange(0), default=10, show_default=True, help="How many failures to list.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "jsonl", "csv"]), default="table",
              show_default=True, help="json, jsonl, csv: one record per count (group, status, count), then one "
                                      "per failed page (group \"failed page\", its key, reason and attempts).")
@domain_errors
def stats(failures, fmt):
    """Counts by status, and the latest failed pages with their reasons.

    \b
    Example:
      fptrack stats
      fptrack stats --format jsonl
    """
    ctx = open_context()
    c = ctx.store.counts()
    if fmt != "table":
        from .stats_rows import STATS_COLUMNS, stats_rows

        fails = ctx.store.failures(limit=failures) if failures else []
        write_records(stats_rows(c, fails), fmt, STATS_COLUMNS)
        return
    click.echo(f"works {c['works']}, chapters {c['chapters']}")
    click.echo("pages    " + ", ".join(f"{k} {v}" for k, v in c["pages"].items()))
    click.echo("matches  " + ", ".join(f"{k} {v}" for k, v in c["matches"].items()))
    im = c["images"]
    click.echo(f"images   registered {im['registered']}; found on pages: "
               + ", ".join(f"{k} {v}" for k, v in im["found"].items()))
    click.echo("image matches  " + ", ".join(f"{k} {v}" for k, v in im["matches"].items()))
    fails = ctx.store.failures(limit=failures) if failures else []
    if fails:
        click.echo("recent failures:")
        for p in fails:
            show(f"  {p.key}: {p.reason} (attempts {p.attempts})")

