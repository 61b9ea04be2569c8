"""`fptrack web` and `fptrack user ...`: run the admin, manage who may sign in to it."""
from __future__ import annotations

import sys
from typing import Any

import click

from clikit.groups import SuggestingGroup
from tracker.cli import click_errors
from tracker.settings import Settings
from tracker.store import ROLES, NotFound, Store
from tracker.store.open import open_store
from tracker.store.tenancy import DEFAULT_ORG

from .auth.accounts import AccountError, check_name, hash_password, new_user

_errors = click_errors(AccountError)


def _store() -> Store:
    s = Settings.load()
    return open_store(s)


def serve(app: Any, host: str, port: int) -> None:
    """Serve the admin with waitress, a production server (a declared dependency)."""
    from waitress import serve as waitress_serve

    waitress_serve(app, host=host, port=port)


@click.command("web")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every one).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@_errors
def web(host: str, port: int) -> None:
    """Run the admin: reports, evidence, takedown notices, JSON API.

    Sign in with an account made by `fptrack user add`. Behind HTTPS set
    FPT_WEB_SESSION_COOKIE_SECURE=true; the session key comes from
    FPT_SECRET_KEY, else from a file made once in FPT_HOME.

    \b
    Example:
      fptrack user add alice --role admin
      fptrack web --port 8000
    """
    from . import create_app

    app = create_app()
    store = app.extensions["fptrack"].store
    if not store.users():
        click.echo("no users yet: add one with `fptrack user add NAME --role admin`", err=True)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"fptrack admin on http://{shown}:{port}/ (Ctrl-C stops it)")
    serve(app, host, port)


@click.group("user", cls=SuggestingGroup)
def user() -> None:
    """Manage the accounts that sign in to the admin (roles: operator, admin, viewer).

    Admins and operators do the same in the admin, on the Users page (/users/).

    \b
    Example:
      fptrack user add alice --role admin
      fptrack user list
    """


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    if not sys.stdin.isatty():  # piped or from a script: nothing can be asked without echoing it
        raise click.UsageError("standard input is not a terminal, so the password cannot be asked: give "
                               "--password-stdin and the password as the first line of standard input")
    return click.prompt("Password", hide_input=True, confirmation_prompt="Repeat the password")


@user.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), default="viewer", show_default=True,
              help="operator: every organisation; admin: everything in its own; viewer: read only.")
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of standard input.")
@click.option("--org", "org_name", default=DEFAULT_ORG, show_default=True,
              help="The organisation whose data the user sees (operators see all).")
@_errors
def add(name: str, role: str, password_stdin: bool, org_name: str) -> None:
    """Add an account; the password is asked twice (or read from standard input).

    \b
    Example:
      fptrack user add alice --role admin
      printf '%s\\n' "$PASSWORD" | fptrack user add ci-bot --password-stdin
    """
    check_name(name)  # before asking for a password
    store = _store()
    try:
        store.get_user(name)
    except NotFound:
        pass
    else:
        raise click.ClickException(f"user {name!r} exists; change the password with `fptrack user passwd {name}`")
    if org_name != DEFAULT_ORG:
        store.get_org(org_name)  # before asking for a password: `fptrack org add` first
    u = store.upsert_user(new_user(name, _read_password(password_stdin), role))
    store.set_owner("user", u.name, org_name)
    click.echo(f"added {u.name} ({u.role})" + ("" if org_name == DEFAULT_ORG else f" to {org_name}"))


@user.command("list")
@_errors
def list_users() -> None:
    """List the accounts with their role, organisation, last sign-in and sign-in state.

    \b
    Example:
      fptrack user list
    """
    store = _store()
    users, orgs = store.users(), store.owners("user")
    if not users:
        click.echo("no users yet: fptrack user add NAME --role admin")
        return
    width = max(len(u.name) for u in users)
    for u in users:
        state = f"locked until {u.locked_until:%Y-%m-%d %H:%M} UTC" if u.locked_until else ""
        if u.failed_logins:
            state = f"{u.failed_logins} failed sign-ins" + (f", {state}" if state else "")
        org = orgs.get(u.name, DEFAULT_ORG)
        last = f"  last sign-in {u.last_login:%Y-%m-%d %H:%M} UTC" if u.last_login else ""
        click.echo(f"{u.name:<{width}}  {u.role:<8}  {org}  since {u.created_at:%Y-%m-%d}{last}  {state}".rstrip())


@user.command("remove")
@click.argument("name")
@_errors
def remove(name: str) -> None:
    """Remove an account and end its sessions.

    \b
    Example:
      fptrack user remove alice
    """
    store = _store()
    store.delete_user(name)
    ended = store.delete_sessions(name)
    click.echo(f"removed {name}" + (f"; ended {_sessions(ended)}" if ended else ""))


@user.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from the first line of standard input.")
@_errors
def passwd(name: str, password_stdin: bool) -> None:
    """Set an account's password; this also unlocks it and ends its sessions.

    \b
    Example:
      fptrack user passwd alice
    """
    store = _store()
    u = store.get_user(name)
    u.password_hash = hash_password(_read_password(password_stdin))
    u.failed_logins, u.locked_until = 0, None
    store.upsert_user(u)
    ended = store.delete_sessions(name)  # whoever knew the old password is signed out
    click.echo(f"password changed for {name}" + (f"; ended {_sessions(ended)}" if ended else ""))


def _sessions(n: int) -> str:
    return f"{n} session" + ("" if n == 1 else "s")
