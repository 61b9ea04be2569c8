"""Containment and verdicts tell the truth about disguised copies (fingerprint.coverage).

Pages are made from real chapters by bench/disguises.py, which knows the share of the
chapter each page carries; the engine's containment must be within tolerance of it and
its verdict the one the documented thresholds give for the true shares."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.disguises import DISGUISES
from fingerprint.chapters import split_chapters
from fingerprint.coverage import join_substituted, sentence_starts
from fingerprint.engine import EngineConfig, judge, prepare, verdict_for, verdict_reason
from fingerprint.evidence import Run
from pagetext.html import html_to_text
from tests.linear import assert_linear

CONFIG = EngineConfig()
WHOLE = ["renamed", "reworded", "variants", "emoji", "taiwan", "sentences", "paragraphs", "css_hidden", "combined"]


@pytest.fixture(scope="module")
def xiyouji(corpus):
    text = (corpus / "zh_novels" / "xiyouji.txt").read_text(encoding="utf-8")
    return [c.body for c in split_chapters(text) if c.number]


@pytest.fixture(scope="module")
def filler(corpus):
    text = (corpus / "zh_novels" / "jingshitongyan.txt").read_text(encoding="utf-8")
    return [c.body for c in split_chapters(text) if c.number][:10]


def _judged(kind, body, other, seed=0):
    d = DISGUISES[kind](body, random.Random(f"{seed}:{kind}"), other=other)
    page = html_to_text(d.text)[0] if d.html else d.text
    return d, judge(prepare("page", page), prepare("original", body))


@pytest.mark.parametrize("kind", WHOLE)
def test_a_whole_chapter_in_any_disguise_is_a_duplicate_with_its_true_containment(xiyouji, filler, kind):
    for n in (4, 27):
        d, j = _judged(kind, xiyouji[n], filler[n % len(filler)])
        assert j.is_copy and j.match.verdict == "duplicate", (kind, n, j.match.containment, j.match.page_share)
        assert abs(j.match.containment - d.containment) <= 0.06, (kind, n, j.match.containment)


@pytest.mark.parametrize("kind", ["merged", "interleaved"])
def test_a_chapter_among_other_text_is_contained_and_the_page_share_is_honest(xiyouji, filler, kind):
    d, j = _judged(kind, xiyouji[9], filler[3])
    assert j.match.verdict == "contains"
    assert j.match.containment >= 0.97
    assert abs(j.match.page_share - d.page_share) <= 0.05, (j.match.page_share, d.page_share)


@pytest.mark.parametrize("kind,verdict", [("excerpt_02", "excerpt"), ("excerpt_10", "excerpt"),
                                          ("excerpt_35", "part"), ("excerpt_70", "part")])
def test_an_excerpt_reports_the_share_it_carries(xiyouji, filler, kind, verdict):
    d, j = _judged(kind, xiyouji[15], filler[5])
    assert j.match.verdict == verdict
    assert abs(j.match.containment - d.containment) <= 0.02, (j.match.containment, d.containment)


def test_unrelated_chapters_of_one_novel_are_no_copies_despite_names_and_stock_phrases(xiyouji):
    for a, b in ((3, 4), (20, 21), (40, 77), (60, 61)):
        j = judge(prepare("page", xiyouji[a]), prepare("original", xiyouji[b]))
        assert not j.is_copy and j.match.verdict == "different", (a, b, j.match.containment)


def test_verdict_thresholds_and_the_words_that_explain_them():
    assert verdict_for(0.95, 0.9, True) == "duplicate"
    assert verdict_for(0.95, 0.5, True) == "contains"
    assert verdict_for(CONFIG.part_share, 0.99, True) == "part"
    assert verdict_for(CONFIG.part_share - 0.01, 0.99, True) == "excerpt"
    assert verdict_for(1.0, 1.0, False) == "different"
    why = verdict_reason(0.93, 0.42, "contains")
    assert "93% of the chapter" in why and "42% of the page" in why and "80%" in why


def test_substituted_text_joins_two_runs_only_when_the_gaps_agree():
    a, b = Run(0, 40, 100, 140), Run(43, 80, 143, 180)  # three units substituted on both sides
    assert join_substituted([a, b], max_gap=32, min_run=20, slack=4) == [Run(0, 80, 100, 180)]
    far = Run(43, 80, 170, 207)  # 3 units in the original, 30 on the page: text inserted, not substituted
    assert join_substituted([a, far], max_gap=32, min_run=20, slack=4) == [a, far]


def test_sentence_starts_follow_the_punctuation():
    p = prepare("x", "山城的雨下了一夜。他推开门！门外无人\n风停了")
    starts = sentence_starts(p.text, p.unit_start).tolist()
    assert starts[0] == 0 and len(starts) == 4


def test_coverage_of_a_shuffled_copy_takes_linear_time(xiyouji):
    body = "\n".join(xiyouji)  # the whole novel: both sizes are real text, repeated no more than it repeats itself
    shuffled = DISGUISES["sentences"]

    def make(n):
        text = body[:n]
        return prepare("page", shuffled(text, random.Random(1)).text), prepare("original", text)

    # The alignment sorts the k-gram hashes and binary-searches them: O(n log n), and at these sizes
    # the larger arrays leave the CPU caches, which alone takes 8x to 11-13x (numpy's searchsorted
    # on random 64-bit keys, 20k -> 160k). Quadratic work would take 64x: 16 still tells them apart.
    assert_linear(lambda pair: judge(*pair), make, 20_000, what="engine.judge on a shuffled copy", max_ratio=16)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("山城雨。！？!?；;…\n 。a，\u3000")) | st.characters(), max_size=60),
       st.lists(st.integers(0, 70), max_size=30))
def test_sentence_starts_are_where_the_runs_of_sentence_ends_stop(text, positions):
    unit_start = np.unique(np.asarray(positions, dtype=np.int64))
    ends = [m.end() for m in re.finditer(r"[。！？!?；;…\n]+", text)]
    found = np.searchsorted(unit_start, np.asarray(ends, dtype=np.int64))
    want = np.unique(np.concatenate([np.zeros(1, np.int64), found[found < unit_start.shape[0]]]))
    assert sentence_starts(text, unit_start).tolist() == want.tolist()
