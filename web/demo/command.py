"""`fptrack demo`: the whole system on embedded defaults, in one command.

Registers the sample novel, serves a sample pirate site on 127.0.0.1, crawls it
(in a child process, as `fptrack crawl` does), matches the pages, creates a demo
account and starts the admin. Nothing to install, nothing from the internet; the
demo's data lives in its own folder, apart from the user's FPT_HOME data.
"""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import click

from clikit.plural import counted
from fptrack_samples import AUTHOR, WORK
from fptrack_samples import ORIGINALS as SAMPLES
from tracker.cli import click_errors
from tracker.settings import Settings

from ..auth.accounts import AccountError

DEMO_MARK = ".fptrack-demo"  # in every folder the demo fills: only those are cleared on the next run
SITE = "sample-biquge"  # the sample site's name in the reports (its port changes from run to run)


def _clear_demo_home(home: Path, *, own: bool) -> None:
    """Empty a folder the demo made before; refuse any other non-empty folder (it may be someone's data)."""
    if not own and home.is_dir() and any(home.iterdir()) and not (home / DEMO_MARK).is_file():
        raise click.ClickException(f"{home} holds files the demo did not make; it clears only its own folders. "
                                   "Give an empty or new folder with --home, or keep the data with --keep")
    shutil.rmtree(home)


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _step(n: int, text: str) -> None:
    click.echo(f"[{n}/5] {text}")


def _register(settings: Settings, originals: Path, title: str) -> int:
    from tracker.context import Context
    from tracker.registry import register_work

    ctx = Context(settings)
    try:
        report = register_work(ctx, title, str(originals), author=AUTHOR if originals == SAMPLES else "")
        return sum(1 for _ in ctx.store.chapters(work=report.work.id))
    finally:
        ctx.close()


def _crawl(settings: Settings, url: str) -> dict:
    """Crawl the sample site in a child process (Scrapy's reactor runs once per process)."""
    from tracker.sites.child_crawl import crawl_in_child
    from tracker.store import Site
    from tracker.store.open import open_store

    store = open_store(settings)
    try:  # configured like any watched site, so the admin shows its crawl statistics
        store.upsert_site(Site(name=SITE, start_urls=[url], rules={"delay": 0.0}, recrawl=False))
    finally:
        store.close()
    done = crawl_in_child(settings, ["--site", SITE, "--fresh", "--delay", "0", "--timeout", "2", "--retries", "0",
                                     "--depth", "4", "--max-bytes", "1000000"], timeout=600,
                          environ={k: v for k, v in os.environ.items() if not k.startswith("FPT_")})
    if done.failed or not done.rows:
        raise click.ClickException(f"the demo crawl failed: {done.stderr.strip()[-1500:] or done.last_error()}")
    return done.rows[-1]


def _account(settings: Settings, name: str, password: str) -> None:
    from tracker.store.open import open_store

    from ..auth.accounts import new_user

    store = open_store(settings)
    try:
        store.upsert_user(new_user(name, password, "admin"))
    finally:
        store.close()


@click.command("demo")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address of the admin.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port of the admin.")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the demo's data [FPT_HOME/demo].")
@click.option("--user", "name", default="demo", show_default=True, help="Name of the demo account (an admin).")
@click.option("--password", default=None, help="Its password [a new random one, printed].")
@click.option("--originals", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A folder of chapter .txt files to use instead of the sample novel (samples/originals).")
@click.option("--keep", is_flag=True, help="Keep the data of the previous demo (by default it starts afresh).")
@click.option("--no-serve", is_flag=True, help="Prepare everything but do not start the admin.")
@click_errors(AccountError)
def demo(host, port, home, name, password, originals, keep, no_serve):
    """Run the whole system on a sample novel and a sample pirate site, then open the admin.

    Registers a sample work, serves a pirate site copying it on 127.0.0.1,
    crawls it, matches the pages, creates a demo account and starts the admin
    (Ctrl-C stops it). No server to install, nothing from the internet.

    \b
    Example:
      fptrack demo
      fptrack demo --port 8080
    """
    from web.demo.chapters import chapters_from_folder
    from web.demo.server import SampleSite

    originals = originals or SAMPLES
    if not originals.is_dir():
        raise click.ClickException(f"no folder of chapter files at {originals}; give one with --originals")
    title = WORK if originals == SAMPLES else originals.name
    if not no_serve and not _port_free(host, port):
        raise click.ClickException(f"port {port} on {host} is in use; choose another with --port {port + 1}")
    own = home is None  # FPT_HOME/demo is the demo's own; a folder given with --home may hold anything
    home = home or Settings.load().home / "demo"  # apart from the user's own data
    if not keep and home.exists():
        _clear_demo_home(home, own=own)
    home.mkdir(parents=True, exist_ok=True)
    (home / DEMO_MARK).write_text("made by fptrack demo, which clears this folder when it runs again\n",
                                  encoding="utf-8")
    settings = Settings.load({"FPT_HOME": str(home)})  # embedded: no MongoDB, Redis or broker
    t0 = time.perf_counter()

    n = _register(settings, originals, title)
    _step(1, f"registered {title} ({counted(n, 'chapter')}) in {home}")
    with SampleSite(chapters_from_folder(originals), slow_delay=3.0, huge_bytes=2_000_000) as site:
        pages = sum(1 for kind in site.expected.values() if kind == "chapter")
        _step(2, f"sample pirate site on {site.url}/ ({counted(pages, 'chapter page')} in five encodings, a split chapter, "
                 "ads, 404s, a redirect, a slow and a huge page, traps, robots.txt)")
        # The sample site is on loopback, which the egress policy refuses unless allowed: this one address
        # and port (not the Redis or the admin beside it).
        r = _crawl(replace(settings, fetch_allow=urlsplit(site.url).netloc), site.url + "/")
    def reasons(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "none"

    _step(3, f"crawled: {counted(r['fetched'], 'page')} fetched, {r['stored']} stored, {r['matched']} copying {title}; "
             f"skipped: {reasons(r['skipped_reasons'])}; failed: {reasons(r['failed_reasons'])}")
    password = password or secrets.token_urlsafe(9)
    _account(settings, name, password)
    _step(4, f"account {name} (admin), password {password}")
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if no_serve:
        _step(5, f"ready in {time.perf_counter() - t0:.1f} s; start the admin with: "
                 f"FPT_HOME={home} fptrack web --port {port}")
        return
    from .. import create_app
    from ..cli import serve

    app = create_app({"SETTINGS": settings})
    _step(5, f"admin on {url} : sign in as {name} / {password} (Ctrl-C stops it)")
    serve(app, host, port)
