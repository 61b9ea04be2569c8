"""`fptrack evidence --verify` on something that is no package says what it is, in one line,
and never that a package was changed."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from fptrack.cli import main as fptrack


@pytest.fixture
def run(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FPT_HOME", str(tmp_path / "home"))

    def invoke(*args: str):
        return CliRunner().invoke(fptrack, ["evidence", *args])

    return invoke


def one_line(r) -> str:
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and "not as it was made" not in r.output, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    return lines[0]


def test_no_such_file(run) -> None:
    assert one_line(run("--verify", "nothere.zip")) == "Error: no such file: nothere.zip"


def test_not_a_zip(run, tmp_path: Path) -> None:
    (tmp_path / "notes.zip").write_text("meeting notes, not a zip")
    line = one_line(run("--verify", "notes.zip"))
    assert line.startswith("Error: not a zip file: notes.zip (") and "fptrack evidence -o" in line


def test_a_zip_without_a_manifest(run, tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as z:
        z.writestr("a.jpg", b"\xff\xd8")
    line = one_line(run("--verify", "photos.zip"))
    assert line.startswith("Error: not an evidence package: no manifest.json in photos.zip")


@pytest.mark.filterwarnings("ignore:Duplicate name")  # the duplicate is the point
def test_a_changed_package_is_still_not_as_it_was_made(run, tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as z:
        z.writestr("a.jpg", b"x")
        z.writestr("a.jpg", b"y")  # the same name twice: a package that was tampered with
    r = run("--verify", "bad.zip")
    assert r.exit_code == 1 and "not as it was made" in r.output, r.output
