"""ocr.score: character error rate and the alignment behind it."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.errors import ParameterError
from ocr.score import MAX_CHARS, align, cer, comparable, distance

CHARS = st.text(alphabet="天地玄黄宇宙洪荒日月盈昃ab1", max_size=40)


def test_cer_counts_edits_over_the_reference_after_normalising():
    assert cer("他说己经走了。", "他说已经走了") == pytest.approx(1 / 6)
    assert cer("ＡＢＣ，一二", "abc 一二") == 0.0  # full width, case and punctuation do not count
    assert comparable("第1章　天亮了！") == "第1章天亮了"


def test_an_alignment_separates_what_was_missed_from_what_was_added():
    a = align("未来的路", "12:30 中国移动 末来的")
    assert a.substituted == [("未", "末")] and a.deleted == 1
    assert a.missed == 2 and a.inserted == len("1230中国移动")
    assert a.edits == distance(comparable("未来的路"), comparable("12:30 中国移动 末来的"))


@given(CHARS, CHARS)
def test_the_distance_is_a_metric_and_the_alignment_accounts_for_it(a, b):
    assert distance(a, a) == 0
    assert distance(a, b) == distance(b, a)
    assert abs(len(a) - len(b)) <= distance(a, b) <= max(len(a), len(b))
    al = align(a, b)
    assert al.edits == distance(comparable(a), comparable(b))


def test_oversized_and_empty_inputs_are_refused_with_the_fix():
    with pytest.raises(ParameterError, match="split longer ones"):
        distance("天" * (MAX_CHARS + 1), "天")
    with pytest.raises(ParameterError, match="no letters"):
        cer("。。。", "天")
