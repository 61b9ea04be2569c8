"""`fptrack evidence`: make the evidence package of a page or of a work on a site, and check one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from tracker.cli import click_errors
from tracker.evidence.package import verify_package
from tracker.evidence.pdf import PdfError
from tracker.settings import Settings
from tracker.store.open import open_store

from .catalog import ChapterCatalog
from .evidence_package import NothingToPack, build_package, select_page, select_work_site

_errors = click_errors(NothingToPack, PdfError)


def verify(path: str) -> None:
    """Print what --verify found; exit 1 with one line per problem."""
    result = verify_package(path)
    if result.ok:
        click.echo(f"ok: {path}: {result.files} files and {result.warc_records} WARC records match the manifest "
                   f"(manifest SHA-256 {result.manifest_sha256})")
        return
    for problem in result.problems:
        click.echo(f"FAIL: {problem}", err=True)
    click.echo(f"{path}: {len(result.problems)} problem(s): this package is not as it was made", err=True)
    raise SystemExit(1)


@click.command("evidence")
@click.argument("page_url", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="The zip file to write.")
@click.option("--work", help="With --site: every match of this work on the site (dismissed ones aside).")
@click.option("--site", help="With --work: the site whose copies to pack.")
@click.option("--verify", "to_verify", type=click.Path(dir_okay=False), metavar="FILE.zip",
              help="Check a package: every file's SHA-256, every WARC record's digests, the zip's bytes.")
@click.option("--no-pdf", is_flag=True, help="Leave the PDF report out (no chromium on this machine).")
@click.option("--sender", default="", help="The rights holder named in the takedown notice.")
@click.option("--contact", default="", help="Their address, e-mail and telephone, for the notice.")
@_errors
def evidence(page_url: str | None, output: str | None, work: str | None, site: str | None, to_verify: str | None,
             no_pdf: bool, sender: str, contact: str) -> None:
    """Pack the evidence of copies into a zip anyone can check, or check one.

    The zip holds each page's WARC file (the HTTP exchange as served, with its
    fetch time and SHA-256 digests) and screenshot (rendered pages), the
    evidence report as HTML and PDF (copied passages side by side, scores,
    verdict), the takedown notice, and manifest.json with the SHA-256 of every
    file. --verify exits 1, one line per problem, when any byte changed or a
    file is missing or added.

    \b
    Example:
      fptrack evidence https://www.biquge.example/book/1/1.html -o page.zip
      fptrack evidence --work 山城旧事 --site biquge -o biquge.zip
      fptrack evidence --verify page.zip
    """
    if to_verify:
        if page_url or output or work or site:
            raise click.UsageError("--verify FILE.zip checks a package; give it alone")
        verify(to_verify)
        return
    if not output:
        raise click.UsageError("say where to write the package: -o FILE.zip")
    if page_url and (work or site):
        raise click.UsageError("give a PAGE_URL, or --work and --site, not both")
    if not page_url and not (work and site):
        raise click.UsageError("give a PAGE_URL, or --work WORK --site SITE")
    settings = Settings.load()
    store = open_store(settings.mongo_url or None, settings.home, db=settings.mongo_db)
    try:
        selection = select_page(store, page_url) if page_url else select_work_site(store, work, site)
        outline = ChapterCatalog().outline(store)
        target = Path(output)
        fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=".evidence-",
                                   suffix=".zip")
        try:
            with os.fdopen(fd, "wb") as f:
                packed = build_package(store, outline, selection, f, pdf=not no_pdf, sender=sender, contact=contact)
            os.replace(tmp, target)  # no half-written package under the name asked for
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    finally:
        store.close()
    for w in packed.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"{output}: {len(selection.matches)} match(es) on {len(selection.pages)} page(s), "
               f"{len(packed.files)} files; manifest SHA-256 {packed.manifest_sha256}")
