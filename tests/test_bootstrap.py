"""scripts/bootstrap: installs the extras asked for, and only when something is missing.

Run on a copy of the script in a temporary checkout whose `.venv/bin/python` is a
stand-in that records the pip commands it is given, so the stamp logic is exercised
without installing anything.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import ROOT

SCRIPT = ROOT / "scripts" / "bootstrap"
PIP_UP = "-m pip install --upgrade pip"


@pytest.fixture
def checkout(tmp_path):
    """A checkout with pyproject.toml and a recording .venv/bin/python; returns (run, calls, stamp)."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "bootstrap").write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    calls = tmp_path / "calls"
    python = venv_bin / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n[ -e {tmp_path}/pip-fails ] && exit 1\nexit 0\n',
                      encoding="utf-8")
    python.chmod(0o755)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(tmp_path / "scripts" / "bootstrap"), *args], cwd=tmp_path,
                              env=os.environ.copy(), capture_output=True, text=True, timeout=60)

    def taken() -> list[str]:
        """The pip commands run since the last call."""
        if not calls.exists():
            return []
        lines = calls.read_text().splitlines()
        calls.unlink()
        return lines

    return run, taken, tmp_path / ".venv" / ".fptrack-installed"


def test_an_empty_extras_list_installs_the_runtime_only(checkout):
    run, taken, stamp = checkout
    done = run("")
    assert done.returncode == 0, done.stderr
    assert taken() == [PIP_UP, "-m pip install -e ."]
    assert done.stderr.strip() == "installing fptrack into .venv (log in .venv/install.log)..."
    assert stamp.read_text().split() == [stamp.read_text().split()[0]]  # the hash, no extras
    assert run("").returncode == 0 and taken() == []  # the second run installs nothing


def test_no_argument_means_the_test_extra(checkout):
    run, taken, _ = checkout
    assert run().returncode == 0
    assert taken() == [PIP_UP, "-m pip install -e .[test]"]


def test_switching_between_sets_installs_only_what_is_missing(checkout):
    run, taken, stamp = checkout
    run("")
    taken()
    run("test,bench")  # the tests after the demo: add the extras, pip is not upgraded again
    assert taken() == ["-m pip install -e .[bench,test]"]
    for fewer in ("", "test", "bench", " bench , test ,"):  # the demo after the tests: nothing to do
        done = run(fewer)
        assert (done.returncode, done.stderr, taken()) == (0, "", [])
    assert stamp.read_text().split()[1] == "bench,test"


def test_a_changed_pyproject_installs_again_with_the_extras_installed_before(checkout, tmp_path):
    run, taken, _ = checkout
    run("test")
    taken()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "2"\n', encoding="utf-8")
    run("")
    assert taken() == ["-m pip install -e .[test]"]
    assert run("").returncode == 0 and taken() == []


def test_the_earlier_stamp_form_is_understood(checkout, tmp_path):
    run, taken, stamp = checkout
    run("")
    taken()
    digest = stamp.read_text().split()[0]
    stamp.write_text(f"{digest}-test,bench\n")  # written by the previous version of the script
    assert run("test").returncode == 0 and taken() == []


def test_a_failed_install_shows_the_log_and_leaves_no_stamp(checkout, tmp_path):
    run, taken, stamp = checkout
    (tmp_path / "pip-fails").write_text("")
    done = run("test")
    assert done.returncode == 1
    assert done.stderr.strip().endswith("installing failed; the whole log is in .venv/install.log")
    assert not stamp.exists()


def test_a_malformed_extras_list_is_one_line_with_the_fix(checkout):
    run, taken, _ = checkout
    done = run("test;rm -rf /")
    assert done.returncode == 2 and taken() == []
    [line] = done.stderr.strip().splitlines()
    assert "extras are names from pyproject.toml separated by commas (test,bench)" in line


def test_the_demo_installs_the_runtime_only_and_the_tests_their_extras():
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert 'scripts/bootstrap ""' in demo and "test" not in demo.split("scripts/bootstrap", 1)[1].splitlines()[0]
    assert "scripts/bootstrap test,bench" in (ROOT / "scripts" / "test").read_text(encoding="utf-8")
