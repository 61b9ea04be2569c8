"""`fptrack web` and `fptrack user ...`, run through click's CliRunner on the command objects."""
import pytest
from click.testing import CliRunner

from tracker.settings import Settings
from tracker.store.open import store_at
from web import cli


@pytest.fixture
def env(settings):
    return {"FPT_HOME": str(settings.home)}


def run(command, args, env, input=None):
    r = CliRunner().invoke(command, args, env=env, input=input)
    assert "Traceback" not in r.output
    return r


def stored(env):
    return store_at(None, Settings.load(env).home)


def test_every_command_has_help_with_an_example():
    for command in (cli.web, cli.user, *cli.user.commands.values()):
        r = CliRunner().invoke(command, ["--help"])
        assert r.exit_code == 0 and "Example:" in r.output, command.name


def test_user_add_prompts_twice_and_hashes(env, tmp_path):
    from ..cli.terminal import clean_env, in_terminal, program

    # The password is asked on a terminal only (piped, --password-stdin): a real one here.
    r = in_terminal([program("fptrack"), "user", "add", "alice", "--role", "admin"], env=clean_env(**env), cwd=tmp_path,
                    answers=(("Password: ", "s3cret-pass"), ("Repeat the password: ", "s3cret-pass")))
    assert r.code == 0 and "added alice (admin)" in r.out
    u = stored(env).get_user("alice")
    assert u.role == "admin" and u.password_hash != "s3cret-pass" and u.password_hash.startswith("scrypt:")


def test_user_add_from_stdin_and_errors(env):
    r = run(cli.user, ["add", "bot", "--password-stdin"], env, input="long-enough-pw\n")
    assert r.exit_code == 0 and "added bot (viewer)" in r.output
    r = run(cli.user, ["add", "bot", "--password-stdin"], env, input="long-enough-pw\n")
    assert r.exit_code == 1 and "exists" in r.output and "user passwd bot" in r.output
    r = run(cli.user, ["add", "short", "--password-stdin"], env, input="abc\n")
    assert r.exit_code == 1 and "at least 8 characters" in r.output
    r = run(cli.user, ["add", "two words", "--password-stdin"], env, input="long-enough-pw\n")
    assert r.exit_code == 1 and "no spaces" in r.output
    r = run(cli.user, ["add", "x", "--role", "owner"], env)
    assert r.exit_code == 2


def test_user_list_remove_and_passwd(env):
    run(cli.user, ["add", "alice", "--password-stdin", "--role", "admin"], env, input="first-password\n")
    run(cli.user, ["add", "bob", "--password-stdin"], env, input="first-password\n")
    out = run(cli.user, ["list"], env).output.splitlines()
    assert out[0].startswith("alice  admin ") and out[1].startswith("bob    viewer")
    s = stored(env)
    u = s.get_user("bob")
    u.failed_logins = 5
    s.upsert_user(u)
    old = u.password_hash
    r = run(cli.user, ["passwd", "bob", "--password-stdin"], env, input="second-password\n")
    assert r.exit_code == 0 and "password changed for bob" in r.output
    u = stored(env).get_user("bob")
    assert u.password_hash != old and u.failed_logins == 0 and u.locked_until is None
    r = run(cli.user, ["remove", "bob"], env)
    assert r.exit_code == 0 and [x.name for x in stored(env).users()] == ["alice"]
    r = run(cli.user, ["remove", "bob"], env)
    assert r.exit_code == 1 and "not found" in r.output


def test_user_list_when_empty(env):
    assert "no users yet" in run(cli.user, ["list"], env).output


def test_web_prints_the_url_and_serves_the_app(env, monkeypatch):
    served = {}
    monkeypatch.setattr(cli, "serve", lambda app, host, port: served.update(app=app, host=host, port=port))
    r = run(cli.web, ["--port", "8123"], env)
    assert r.exit_code == 0, r.output
    assert "http://127.0.0.1:8123/" in r.output and "no users yet" in r.output
    assert served["host"] == "127.0.0.1" and served["port"] == 8123
    assert served["app"].name == "web" and "auth.login" in served["app"].view_functions
    r = run(cli.web, ["--host", "::1"], env)
    assert "http://[::1]:8000/" in r.output


def test_web_with_a_bad_setting_is_one_line(env, monkeypatch):
    monkeypatch.setattr(cli, "serve", lambda *a: None)
    r = run(cli.web, [], {**env, "FPT_MIN_CONTAINMENT": "lots"})
    assert r.exit_code == 1 and "FPT_MIN_CONTAINMENT" in r.output


def test_serve_uses_waitress(monkeypatch):
    import waitress

    calls = []
    monkeypatch.setattr(waitress, "serve", lambda *a, **k: calls.append((a, k)))
    cli.serve("app", "127.0.0.1", 8000)
    assert calls == [(("app",), {"host": "127.0.0.1", "port": 8000})]
