"""`fptrack evidence`: make the evidence package of a page or of a work on a site, and check one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from clikit.plural import counted
from tracker.cli import click_errors
from tracker.evidence.pdf import PdfError
from tracker.evidence.signing import SigningError
from tracker.settings import Settings
from tracker.store.open import open_store

from ..reports.catalog import ChapterCatalog
from .package import NothingToPack, build_package, select_page, select_work_site
from .seal import public_key_text, seal_for, verify

_errors = click_errors(NothingToPack, PdfError, SigningError)


@click.command("evidence")
@click.argument("page_url", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="The zip file to write.")
@click.option("--work", help="With --site: the confirmed matches of this work on the site.")
@click.option("--site", help="With --work: the site whose copies to pack.")
@click.option("--verify", "to_verify", type=click.Path(dir_okay=False), metavar="FILE.zip",
              help="Check a package: every file's SHA-256, every WARC record's digests, the zip's bytes, the "
                   "manifest's signature and timestamp.")
@click.option("--key", type=click.Path(dir_okay=False), metavar="KEY.pem",
              help="With --verify: the public key (PEM) the package must be signed with.")
@click.option("--tsa-ca", type=click.Path(dir_okay=False), metavar="CA.pem",
              help="With --verify: the CA certificate that must have issued the timestamp's TSA certificate.")
@click.option("--public-key", is_flag=True,
              help="Print the organisation's public key (PEM) and fingerprint, to publish.")
@click.option("--org", help="With --public-key: the organisation (default: the default organisation).")
@click.option("--no-pdf", is_flag=True, help="Leave the PDF report out (no chromium on this machine).")
@click.option("--sender", default="", help="The rights holder named in the takedown notice.")
@click.option("--contact", default="", help="Their address, e-mail and telephone, for the notice.")
@click.option("--include-excerpts", is_flag=True,
              help="Name confirmed excerpts (short quotations, which may be fair use) in the notice too.")
@_errors
def evidence(page_url: str | None, output: str | None, work: str | None, site: str | None, to_verify: str | None,
             no_pdf: bool, sender: str, contact: str, include_excerpts: bool, key: str | None, tsa_ca: str | None,
             public_key: bool, org: str | None) -> None:
    """Pack the evidence of copies into a zip anyone can check, or check one.

    The zip holds each page's WARC file (the HTTP exchange as served, with its
    fetch time and SHA-256 digests) and screenshot (rendered pages), the
    evidence report as HTML and PDF (copied passages side by side, scores,
    verdict), the takedown notice, and manifest.json with the SHA-256 of every
    file. The notice names confirmed matches only (fptrack set-status PAGE
    CHAPTER confirmed), and excerpts only with --include-excerpts; --work
    and --site pack just those. --verify exits 1, one line per problem, when any byte changed or a
    file is missing or added. The manifest is signed with its organisation's
    key (manifest.sig; --public-key prints the key to publish) and, with
    FPT_TSA_URL set, time-stamped by that authority (manifest.tsr); --verify
    checks both and names the key.

    \b
    Example:
      fptrack evidence https://www.biquge.example/book/1/1.html -o page.zip
      fptrack evidence --work 山城旧事 --site biquge -o biquge.zip --sender 林岚工作室
      fptrack evidence --verify page.zip
      fptrack evidence --public-key > evidence-key.pem
      fptrack evidence --verify page.zip --key evidence-key.pem
    """
    if public_key:
        if page_url or output or work or site or to_verify:
            raise click.UsageError("--public-key prints a key; give it alone (or with --org NAME)")
        _print_public_key(org)
        return
    if to_verify:
        if page_url or output or work or site:
            raise click.UsageError("--verify FILE.zip checks a package; give it alone")
        verify(to_verify, key, tsa_ca)
        return
    if key or tsa_ca or org:
        raise click.UsageError("--key and --tsa-ca go with --verify, --org with --public-key")
    if not output:
        raise click.UsageError("say where to write the package: -o FILE.zip")
    if page_url and (work or site):
        raise click.UsageError("give a PAGE_URL, or --work and --site, not both")
    if not page_url and not (work and site):
        raise click.UsageError("give a PAGE_URL, or --work WORK --site SITE")
    settings = Settings.load()
    store = open_store(settings)
    try:
        selection = (select_page(store, page_url) if page_url
                     else select_work_site(store, work, site, include_excerpts=include_excerpts))
        outline = ChapterCatalog().outline(store)
        target = Path(output)
        fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=".evidence-",
                                   suffix=".zip")
        try:
            with os.fdopen(fd, "wb") as f:
                packed = build_package(store, outline, selection, f, pdf=not no_pdf, sender=sender, contact=contact,
                                       include_excerpts=include_excerpts,
                                       seal=seal_for(store, settings, [m.work for m in selection.matches]))
            os.replace(tmp, target)  # no half-written package under the name asked for
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    finally:
        store.close()
    for w in packed.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"{output}: {counted(len(selection.matches), 'match')} on {counted(len(selection.pages), 'page')}, "
               f"{counted(len(packed.files), 'file')}; manifest SHA-256 {packed.manifest_sha256}")


def _print_public_key(org: str | None) -> None:
    settings = Settings.load()
    store = open_store(settings)
    try:
        click.echo(public_key_text(store, settings, org), nl=False)
    finally:
        store.close()
