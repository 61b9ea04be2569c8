"""Smoke test of bench/mirrors.py: a small run on the sample chapters and one on the corpus, each
comparing page processing with and without the gate on the same pages."""
from __future__ import annotations

import pytest

from bench import mirrors
from bench.common import BenchError

from ..conftest import ROOT


def rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in out.splitlines()
            if line.startswith(("| crawl ", "| ingest "))]


def check(out: str) -> None:
    table = rows(out)
    assert [(r[0], r[1], r[5]) for r in table] == [(how, share, peer) for how in ("crawl", "ingest")
                                                   for share in ("half", "none") for peer in mirrors.PEERS]
    for r in table:
        if r[5] == mirrors.PEERS[0] or r[1] == "none":  # judged in full, or no text seen twice
            assert r[8] == "0"
        else:
            assert int(r[8]) > 0 and 0 < float(r[3]) <= 1
        if r[5] == mirrors.PEERS[1]:  # every page has the matches full judging gives it
            assert r[9] == r[10] == "yes"
        assert float(r[6]) > 0 and float(r[7]) > 0


def test_sample_run(capsys):
    folder = str(ROOT / "samples" / "originals")
    assert mirrors.main(["--folder", folder, "--chapters", "2", "--negatives", "1", "--mirrors", "2",
                         "--repeat", "1", "--no-write"]) == 0
    check(capsys.readouterr().out)


def test_corpus_run(corpus, capsys):
    assert mirrors.main(["--corpus", str(corpus), "--chapters", "6", "--negatives", "2", "--mirrors", "2",
                         "--repeat", "1", "--no-write"]) == 0
    out = capsys.readouterr().out
    check(out)
    assert "8 chapters (6 registered, 2 not)" in out


def test_missing_corpus_skips_with_a_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FPT_SHARED", str(tmp_path))
    assert mirrors.main(["--no-write"]) == 0
    assert "skipped" in capsys.readouterr().err
    with pytest.raises(BenchError, match="FPT_SHARED"):
        mirrors.main(["--corpus", str(tmp_path / "nowhere"), "--no-write"])
    with pytest.raises(BenchError, match="--mirrors"):
        mirrors.site_pages([("t", "一二三")], 0)
