"""`fptrack set-status` takes a chapter the short way: a unique start of its key or of its name."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from fptrack.cli import main as fptrack

from .conftest import SAMPLES, WORK


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    home = tmp_path_factory.mktemp("set-status") / "home"
    env = {"FPT_HOME": str(home), "FPT_MONGO_URL": None, "FPT_REDIS_URL": None, "FPT_BROKER_URL": None,
           "FPT_CONFIG": None}

    def invoke(*args: str):
        return CliRunner(env=env).invoke(fptrack, list(args))

    assert invoke("add-work", WORK, str(SAMPLES / "originals")).exit_code == 0
    assert invoke("ingest", str(SAMPLES / "pages"), "--site", "biquge").exit_code == 0
    return invoke


def status_of(run, page: str, chapter: str) -> str:
    r = run("matches", "--format", "csv")
    for line in r.output.splitlines()[1:]:
        cells = line.split(",")
        if cells[0] == page and cells[1] == chapter:
            return cells[8]
    raise AssertionError(f"no match {page} {chapter}:\n{r.output}")


@pytest.mark.parametrize("short", [f"{WORK}/{WORK}-第一章", f"{WORK}/{WORK}-第一", f"{WORK}-第一章", f"{WORK}-第一"])
def test_a_full_key_or_a_unique_start_of_key_or_name(run, short: str) -> None:
    run("set-status", "biquge-1", f"{WORK}/{WORK}-第一章", "new")
    r = run("set-status", "biquge-1", short, "confirmed")
    assert r.exit_code == 0, r.output
    assert r.output == f"biquge-1 -> {WORK}/{WORK}-第一章: confirmed\n"
    assert status_of(run, "biquge-1", f"{WORK}/{WORK}-第一章") == "confirmed"


def test_the_start_is_unique_among_the_pages_chapters(run) -> None:
    # merged-1-2 copies chapters one and two: "第" alone fits both, "第二" one.
    r = run("set-status", "merged-1-2", f"{WORK}-第二", "dismissed")
    assert r.exit_code == 0 and r.output == f"merged-1-2 -> {WORK}/{WORK}-第二章: dismissed\n", r.output


def test_an_ambiguous_start_lists_the_candidates(run) -> None:
    r = run("set-status", "merged-1-2", f"{WORK}-第", "confirmed")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert f"'{WORK}-第' fits 2 chapters that 'merged-1-2' copies" in r.output
    assert f"'{WORK}/{WORK}-第一章'" in r.output and f"'{WORK}/{WORK}-第二章'" in r.output
    assert "give more of the key" in r.output
    assert status_of(run, "merged-1-2", f"{WORK}/{WORK}-第一章") != "confirmed"


def test_an_unknown_one_says_how_to_list_them(run) -> None:
    r = run("set-status", "biquge-1", "第九十九章", "confirmed")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "no match of 'biquge-1' with '第九十九章'" in r.output and "`fptrack matches`" in r.output


def test_a_chapter_the_page_does_not_copy_is_not_guessed(run) -> None:
    # biquge-1 copies chapter one only: chapter three's name is no match of it.
    r = run("set-status", "biquge-1", f"{WORK}-第三", "confirmed")
    assert r.exit_code == 1 and "no match of 'biquge-1'" in r.output, r.output
