"""`fptrack org ...` and `fptrack token ...`: organisations and the API tokens of each."""
from __future__ import annotations

import click

from clikit.groups import SuggestingGroup

from ..cli import click_errors
from ..settings import Settings
from ..store import Store
from ..store.open import open_store
from ..store.scoped import assign_to
from ..store.tenancy import DEFAULT_ORG, TOKEN_SCOPES, Organisation, check_org_name
from .tokens import create_token

_errors = click_errors(ValueError)


def _store() -> Store:
    s = Settings.load()
    return open_store(s)


@click.group("org", cls=SuggestingGroup)
def org() -> None:
    """Manage organisations: each sees only its own works, sites, matches and users.

    What no organisation was named for belongs to "default".

    \b
    Example:
      fptrack org add north-press
      fptrack user add alice --role admin --org north-press
      fptrack org assign north-press --work 山城旧事 --site biquge
      fptrack org list
    """


@org.command("add")
@click.argument("name")
@_errors
def add_org(name: str) -> None:
    """Add an organisation (adding one that exists changes nothing).

    \b
    Example:
      fptrack org add north-press
    """
    o = _store().upsert_org(Organisation(check_org_name(name)))
    click.echo(f"organisation {o.name} (since {o.created_at:%Y-%m-%d})")


@org.command("list")
@_errors
def list_orgs() -> None:
    """List the organisations, the default one first.

    \b
    Example:
      fptrack org list
    """
    names = [o.name for o in _store().orgs()]
    for name in [DEFAULT_ORG, *(n for n in names if n != DEFAULT_ORG)]:
        click.echo(name)


@org.command("assign")
@click.argument("name")
@click.option("--work", "works", multiple=True, help="A work's id (repeat for more).")
@click.option("--site", "sites", multiple=True, help="A site's name (repeat for more).")
@click.option("--user", "users", multiple=True, help="A user's name (repeat for more).")
@_errors
def assign(name: str, works: tuple[str, ...], sites: tuple[str, ...], users: tuple[str, ...]) -> None:
    """Move works, sites and users to an organisation (a work's matches go with it).

    \b
    Example:
      fptrack org assign north-press --work 山城旧事 --site biquge --user alice
    """
    store = _store()
    if name != DEFAULT_ORG:
        store.get_org(name)
    moved = assign_to(store, name, work=works, site=sites, user=users)
    click.echo(f"moved to {name}: {moved}" if moved else "nothing named: give --work, --site or --user")


@click.group("token", cls=SuggestingGroup)
def token() -> None:
    """Manage API tokens, sent as `Authorization: Bearer TOKEN` to /api/.

    A read token may only read; a write token may also change things. A token sees
    only its organisation. The token is shown once, when it is made: the store keeps
    only its hash.

    \b
    Example:
      fptrack token create --org north-press --scope read --name dashboard
      fptrack token list
      fptrack token revoke 1a2b3c4d5e6f
    """


@token.command("create")
@click.option("--org", "org_name", default=DEFAULT_ORG, show_default=True, help="The organisation it sees.")
@click.option("--scope", type=click.Choice(TOKEN_SCOPES), required=True, help="read: GET only; write: also changes.")
@click.option("--name", default="", help="What it is for, shown in lists.")
@_errors
def create(org_name: str, scope: str, name: str) -> None:
    """Make a token; it is printed alone on the last line, and only this once.

    \b
    Example:
      fptrack token create --org north-press --scope write --name uploader
    """
    record, secret = create_token(_store(), org_name, scope, name, created_by="cli")
    click.echo(f"token {record.id} ({record.scope}) for {record.org}; store it now, it is not shown again:")
    click.echo(secret)


@token.command("list")
@click.option("--org", "org_name", default=None, help="Only this organisation's tokens.")
@_errors
def list_tokens(org_name: str | None) -> None:
    """List the tokens: id, organisation, scope, name, made, last used.

    \b
    Example:
      fptrack token list --org north-press
    """
    tokens = _store().tokens(org_name)
    if not tokens:
        click.echo("no tokens yet: fptrack token create --org ORG --scope read")
        return
    for t in tokens:
        used = f"used {t.last_used:%Y-%m-%d %H:%M}" if t.last_used else "never used"
        click.echo(f"{t.id}  {t.org}  {t.scope:<5}  {t.name or '-'}  made {t.created_at:%Y-%m-%d}  {used}")


@token.command("revoke")
@click.argument("token_id")
@_errors
def revoke(token_id: str) -> None:
    """Revoke a token by its id (from `fptrack token list`); it stops working at once.

    \b
    Example:
      fptrack token revoke 1a2b3c4d5e6f
    """
    _store().delete_token(token_id)
    click.echo(f"revoked {token_id}")
