"""The signature side of `fptrack evidence`: which key signs a package, the public key to
publish (--public-key), and what --verify says of a package's signature and timestamp."""
from __future__ import annotations

from pathlib import Path

import click

from clikit.cells import printable
from clikit.plural import counted
from tracker.egress import EgressPolicy
from tracker.evidence.package import verify_package
from tracker.evidence.signing import (
    SigningError,
    fingerprint,
    load_public_key,
    make_seal,
    org_public_key,
    package_org,
    public_pem,
)
from tracker.settings import Settings
from tracker.store import Store
from tracker.store.tenancy import DEFAULT_ORG

from ..auth.secret import secret_key


def seal_for(store: Store, settings: Settings, works: list[str]):
    """The seal of a package of these works' matches: their organisation's key (made on first use)."""
    return make_seal(store, package_org(store, works), secret_key(settings.home), policy=EgressPolicy.load(settings))


def public_key_text(store: Store, settings: Settings, org: str | None) -> str:
    """The PEM and fingerprint of the organisation's key, made now if it has none yet (so it can
    be published before the first package)."""
    name = org or DEFAULT_ORG
    if name != DEFAULT_ORG:
        store.get_org(name)  # NotFound: one line naming the organisation
    raw = org_public_key(store, name)
    if raw is None:
        raw = make_seal(store, name, secret_key(settings.home), environ={}).signer.public_key
    return f"# organisation: {name}\n# fingerprint: {fingerprint(raw)}\n{public_pem(raw)}"


def _read_file(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise click.UsageError(f"cannot read the {what} {path}: {e.strerror}") from None


def verify(path: str, key: str | None = None, tsa_ca: str | None = None) -> None:
    """Print what --verify found; exit 1 with one line per problem."""
    trusted: list[bytes] = []
    if key:
        try:
            trusted.append(load_public_key(_read_file(key, "public key")))
        except SigningError as e:
            raise click.UsageError(f"--key {key}: {e}") from None
    ca = _read_file(tsa_ca, "TSA CA certificate") if tsa_ca else None
    result = verify_package(path, trusted=trusted, tsa_ca=ca)
    if result.unopened:  # nothing to check: say what the file is, not that it was changed
        raise click.ClickException(printable(result.problems[0]))
    if result.ok:
        click.echo(f"ok: {path}: {counted(result.files, 'file')} and {counted(result.warc_records, 'WARC record')} "
                   "match the manifest "
                   f"(manifest SHA-256 {result.manifest_sha256})")
        if result.signed_by:
            how = "the key given" if trusted else "compare it with the key the organisation publishes"
            click.echo(f"signed: by organisation {result.org!r}, key {result.signed_by} ({how})")
        if result.timestamp:
            click.echo(f"time-stamped: {printable(result.timestamp)}")
        for note in result.notes:
            click.echo(f"note: {printable(note)}")
        return
    for problem in result.problems:
        click.echo(f"FAIL: {printable(problem)}", err=True)  # a package's own text: no terminal controls
    click.echo(f"{path}: {counted(len(result.problems), 'problem')}: this package is not as it was made", err=True)
    raise SystemExit(1)
