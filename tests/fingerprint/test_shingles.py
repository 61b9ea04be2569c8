import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.shingles import ShingleSet, char_shingles, containment, jaccard, word_shingles

cjk = st.text(alphabet="天地玄黄宇宙洪荒日月盈昃辰宿列张", min_size=0, max_size=40)


def test_worked_example():
    a, b = char_shingles("天地玄黄", 2), char_shingles("天地玄", 2)
    assert (len(a), len(b)) == (3, 2)
    assert jaccard(a, b) == pytest.approx(2 / 3)
    assert containment(b, a) == 1.0
    assert containment(a, b) == pytest.approx(2 / 3)


@given(cjk, cjk)
def test_jaccard_symmetric_bounded_and_identity(x, y):
    a, b = char_shingles(x, 3), char_shingles(y, 3)
    assert jaccard(a, b) == jaccard(b, a)
    assert 0.0 <= jaccard(a, b) <= min(containment(a, b), containment(b, a)) + 1e-12 or len(a) == 0 or len(b) == 0
    assert jaccard(a, char_shingles(x, 3)) == 1.0
    assert np.all(np.diff(a.hashes.astype(np.float64)) > 0) or len(a) < 2  # sorted, distinct


def test_normalisation_applies_and_word_shingles():
    assert jaccard(char_shingles("天地，玄黄。宇宙", 2), char_shingles("天 地 玄 黃 宇 宙", 2)) == 1.0
    w = word_shingles(["孙悟空", "大闹", "天宫", "孙悟空", "大闹"], 2)
    assert len(w) == 3
    assert w.unit == "word"


def test_incompatible_and_bad_parameters():
    with pytest.raises(IncompatibleFingerprints):
        jaccard(char_shingles("天地玄黄", 2), char_shingles("天地玄黄", 3))
    with pytest.raises(IncompatibleFingerprints):
        jaccard(char_shingles("天地玄黄", 2), ShingleSet(np.empty(0, np.uint64), 2, "word"))
    with pytest.raises(ParameterError):
        char_shingles("天地", 0)
    with pytest.raises(ParameterError, match="list of words"):
        word_shingles("天地玄黄")
