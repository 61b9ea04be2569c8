import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.hashing import kgram_hashes
from fingerprint.winnowing import WinnowParams, select, sliding_min, winnow


def reference_select(h, w):
    n = len(h)
    if n == 0:
        return []
    w = min(w, n)
    out = []
    for i in range(n - w + 1):
        win = list(h[i : i + w])
        m = min(win)
        j = i + max(t for t in range(w) if win[t] == m)
        if not out or out[-1] != j:
            out.append(j)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=60), st.integers(1, 12))
def test_select_equals_rightmost_minimum_of_each_window(values, w):
    h = np.array(values, dtype=np.uint64) << np.uint64(40)  # small alphabet: many ties
    assert select(h, w).tolist() == reference_select(h, w)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**63), min_size=1, max_size=80), st.integers(1, 20))
def test_sliding_min_matches_definition(values, w):
    a = np.array(values, dtype=np.uint64)
    w = min(w, len(a))
    assert sliding_min(a, w).tolist() == [min(values[i : i + w]) for i in range(len(values) - w + 1)]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 1000), min_size=0, max_size=40),
    st.lists(st.integers(0, 1000), min_size=20, max_size=40),
    st.lists(st.integers(0, 1000), min_size=0, max_size=40),
)
def test_a_shared_run_of_guarantee_length_shares_a_selected_hash(prefix, shared, suffix):
    p = WinnowParams(k=5, window=4)
    shared = shared[: max(p.guarantee, len(shared))]
    a = winnow(np.array(prefix + shared, dtype=np.uint64), p)
    b = winnow(np.array(shared + suffix, dtype=np.uint64), p)
    assert set(a.hashes.tolist()) & set(b.hashes.tolist())


def test_winnowing_is_deterministic_and_positions_index_the_kgrams():
    units = np.arange(100, dtype=np.uint64) % 13
    p = WinnowParams(k=4, window=5)
    a, b = winnow(units, p), winnow(units, p)
    assert a.hashes.tolist() == b.hashes.tolist()
    assert np.array_equal(kgram_hashes(units, 4)[a.positions], a.hashes)


def test_kgram_hashes_equal_runs_hash_equal_anywhere():
    h = kgram_hashes(np.array([1, 2, 3, 9, 1, 2, 3], dtype=np.uint64), 3)
    assert h[0] == h[4] and h[0] != h[1]
    assert kgram_hashes(np.array([1, 2], dtype=np.uint64), 3).shape == (0,)
