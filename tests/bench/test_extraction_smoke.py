"""Smoke test of bench/extraction.py on the sample chapters (and on one corpus chapter per novel)."""
from __future__ import annotations

import re

import pytest

from bench import extraction
from bench.common import BenchError

from ..conftest import ROOT
from .tables import table_rows as read_rows

ROWS = ["pagetext.extraction.page", "trafilatura (favor_recall)", "pagetext.html.html_to_text"]


def table_rows(out: str) -> dict[str, list[str]]:
    return read_rows(out, ROWS)


def test_table_has_the_three_extractors(capsys):
    folder = str(ROOT / "samples" / "originals")
    code = extraction.main(["--folder", folder, "--limit", "2", "--repeat", "1", "--no-write"])
    out = capsys.readouterr().out
    assert code == 0
    rows = table_rows(out)
    assert list(rows) == ROWS
    ours = rows["pagetext.extraction.page"]
    assert float(ours[1]) >= 0.95  # mean recall
    assert ours[5] == "0"  # no page keeps the site's chrome
    assert re.search(r"\d+ pirate chapter pages of 1 novels", out)


def test_corpus_run(corpus, capsys):
    assert extraction.main(["--corpus", str(corpus), "--limit", "1", "--repeat", "1", "--no-write"]) == 0
    assert list(table_rows(capsys.readouterr().out)) == ROWS


def test_missing_corpus_skips_with_a_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FPT_SHARED", str(tmp_path))
    assert extraction.main(["--no-write"]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "--folder" in err
    with pytest.raises(BenchError, match="FPT_SHARED"):
        extraction.main(["--corpus", str(tmp_path / "nowhere"), "--no-write"])


def test_grams_and_score():
    assert extraction.grams("ab cdef") == {"abcde", "bcdef"}
    page = extraction.SitePage("n", "/p", "", "标题", "一二三四五六七", "utf8")
    s = extraction.score("一二三四五六七 广告广告广告", page, ["广告"])
    assert s.recall == 1.0 and 0 < s.boilerplate < 1 and s.chrome
