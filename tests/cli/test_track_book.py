"""`simtool track` takes a whole book as its chapters, split and named as `fptrack add-work` does."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from simtool import main as simtool
from tracker.registry import chapters_from

from .conftest import SAMPLES, WORK

CHAPTERS = [SAMPLES / "originals" / f"{WORK}-第{n}章.txt" for n in "一二三"]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """The sample novel as one file: its three chapters, each under its 第X章 heading."""
    path = tmp_path / f"{WORK}.txt"
    path.write_text("\n".join(p.read_text(encoding="utf-8") for p in CHAPTERS), encoding="utf-8")
    return path


def track(*args: str) -> tuple[list[dict], str]:
    r = CliRunner().invoke(simtool, ["track", *args, "--format", "jsonl"])
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.stdout.splitlines()], r.stderr


def test_a_whole_book_is_tracked_chapter_by_chapter(book: Path) -> None:
    found, said = track(str(book), str(SAMPLES / "pages"))
    assert f"{book}: a whole book, split into 3 chapters" in said
    assert {(m["page"], m["original"]) for m in found} >= {
        ("biquge-1", f"{WORK}/第一章 雨夜来客"), ("tw-3", f"{WORK}/第三章 井下密室"),
        ("merged-1-2", f"{WORK}/第一章 雨夜来客"), ("merged-1-2", f"{WORK}/第二章 旧宅疑云")}


def test_the_chapters_are_named_as_fptrack_names_them(book: Path) -> None:
    found, _ = track(str(book), str(SAMPLES / "pages"))
    registered = {f"{WORK}/{c.name}" for c in chapters_from(book)}
    assert {m["original"] for m in found} == registered


def test_the_same_scores_as_the_chapters_one_by_one(book: Path) -> None:
    whole, _ = track(str(book), str(SAMPLES / "pages"))
    apart, _ = track(str(SAMPLES / "originals"), str(SAMPLES / "pages"))
    heading = {f"{WORK}-第{n}章": f"{WORK}/第{n}章 {t}" for n, t in zip("一二三", ["雨夜来客", "旧宅疑云", "井下密室"])}

    def scores(ms, name):
        return {(m["page"], name(m["original"])): (m["verdict"], m["containment"], m["page_share"]) for m in ms}

    assert scores(whole, lambda k: k) == scores(apart, heading.__getitem__)


def test_one_chapter_in_a_file_keeps_the_file_name() -> None:
    found, said = track(str(CHAPTERS[0]), str(SAMPLES / "pages" / "biquge-1.html"))
    assert [m["original"] for m in found] == [f"{WORK}-第一章"]
    assert "whole book" not in said
