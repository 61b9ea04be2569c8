"""Counts in the commands' messages agree with their nouns: "1 copy found", "2 copies found"."""
from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from fptrack.cli import main as fptrack
from simtool import main as simtool

from .conftest import SAMPLES, WORK

FIRST = SAMPLES / "originals" / f"{WORK}-第一章.txt"


def test_simtool_track_one_of_each_is_singular(tmp_path: Path) -> None:
    r = CliRunner().invoke(simtool, ["track", str(FIRST), str(SAMPLES / "pages" / "biquge-1.html")])
    assert r.exit_code == 0, r.output
    assert "1 original, 1 page: 1 candidate pair verified, 1 copy found in" in r.stderr


def test_simtool_track_many_are_plural() -> None:
    r = CliRunner().invoke(simtool, ["track", str(SAMPLES / "originals"), str(SAMPLES / "pages")])
    assert r.exit_code == 0, r.output
    assert "3 originals, 8 pages: " in r.stderr and " copies found in" in r.stderr


def test_simtool_dedup_one_document(tmp_path: Path) -> None:
    r = CliRunner().invoke(simtool, ["dedup", str(FIRST)])
    assert r.exit_code == 0, r.output
    assert "dedup: 1 document in 1 cluster (0 with near-duplicates)" in r.stderr


def test_fptrack_one_chapter_one_page_one_match(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FPT_HOME", str(tmp_path / "home"))
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(FIRST, book)
    run = CliRunner().invoke
    r = run(fptrack, ["add-work", WORK, str(book)])
    assert r.exit_code == 0 and f"{WORK}: 1 chapter (1 new" in r.output, r.output
    assert run(fptrack, ["notify", "add", "--email", "rights@example.com", "--work", WORK]).exit_code == 0
    r = run(fptrack, ["ingest", str(SAMPLES / "pages" / "biquge-1.html"), "--site", "biquge"])
    assert r.exit_code == 0, r.output
    assert "1 page queued, 0 unchanged\n1 page done, 0 failed, 1 match\n" in r.output
    r = run(fptrack, ["reindex"])
    assert r.exit_code == 0 and "indexed 1 chapter in" in r.output, r.output
    r = run(fptrack, ["notify", "send"])  # no FPT_SMTP_URL: the one new match waits
    assert r.exit_code == 1, r.output
    assert "FPT_SMTP_URL is not set: 1 event waits for 1 e-mail digest; " in r.stderr
