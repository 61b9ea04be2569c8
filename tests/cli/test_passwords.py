"""Passwords are asked on a terminal only: piped, `fptrack user add` and `user passwd` say to use
--password-stdin in one line, with no echo warning and no bare "Aborted!"."""
from __future__ import annotations

from pathlib import Path

import pytest

from .terminal import clean_env, in_terminal, piped, program


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(FPT_HOME=str(tmp_path / "home"))


@pytest.mark.parametrize("args", [["user", "add", "bob"], ["user", "passwd", "bob"]])
def test_piped_without_password_stdin_says_how(env, tmp_path: Path, args: list[str]) -> None:
    if args[1] == "passwd":
        assert piped([program("fptrack"), "user", "add", "bob", "--password-stdin"], env=env, cwd=tmp_path,
                     stdin="first-words-1\n").code == 0
    r = piped([program("fptrack"), *args], env=env, cwd=tmp_path, stdin="typed-words-1\n")
    assert r.code == 2, r.text
    assert "Error: standard input is not a terminal, so the password cannot be asked: give --password-stdin" in r.err
    assert "Aborted" not in r.text and "GetPassWarning" not in r.text and "Password:" not in r.text


def test_on_a_terminal_it_is_asked_twice_and_not_echoed(env, tmp_path: Path) -> None:
    r = in_terminal([program("fptrack"), "user", "add", "bob"], env=env, cwd=tmp_path,
                    answers=(("Password: ", "secret-words-9"), ("Repeat the password: ", "secret-words-9")))
    assert r.code == 0 and "added bob (viewer)" in r.out, r.out
    assert "secret-words-9" not in r.out  # hidden input: the terminal did not echo it
