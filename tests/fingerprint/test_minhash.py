import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.lsh import LSHParams, MinHashLSH, candidate_probability, optimal_bands
from fingerprint.minhash import MinHashParams, minhash

rng = np.random.default_rng(42)


def sets_with_jaccard(j, n=3000):
    base = rng.integers(0, 2**63, n, dtype=np.uint64)
    # |A | B| = n = s + 2o (shared s, each own o), so J = s / n
    s = int(round(n * j))
    o = (n - s) // 2
    return base[: s + o], np.concatenate([base[:s], base[s + o : s + 2 * o]])


@pytest.mark.parametrize("method", ["oph", "permutations"])
@pytest.mark.parametrize("j", [0.1, 0.5, 0.9])
def test_jaccard_estimate_is_close(method, j):
    p = MinHashParams(method=method)
    a, b = sets_with_jaccard(j)
    errs = [minhash(a, MinHashParams(method=method, seed=s)).jaccard(minhash(b, MinHashParams(method=method, seed=s))) - j
            for s in range(20)]
    assert abs(np.mean(errs)) < 0.03  # unbiased
    assert abs(minhash(a, p).jaccard(minhash(b, p)) - j) < 0.2  # sd ~ 0.045 for 128 values


@pytest.mark.parametrize("method", ["oph", "permutations"])
def test_containment_of_subset_is_near_one_and_size_is_exact(method):
    p = MinHashParams(method=method)
    big = rng.integers(0, 2**63, 4000, dtype=np.uint64)
    small = big[:400]
    ms, mb = minhash(small, p), minhash(big, p)
    assert ms.size == 400 and mb.size == 4000
    assert ms.containment(mb) > 0.8
    assert mb.containment(ms) < 0.25


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=300))
def test_identical_sets_estimate_one_whatever_their_order_and_duplicates(values):
    a = np.array(values, dtype=np.uint64)
    b = np.concatenate([a[::-1], a[: len(a) // 2]])
    assert minhash(a).jaccard(minhash(b)) == 1.0


def test_empty_set_has_no_similarity():
    e = minhash(np.empty(0, dtype=np.uint64))
    assert e.size == 0 and e.jaccard(minhash(np.array([1], dtype=np.uint64))) == 0.0


def test_signatures_with_different_parameters_refuse_to_compare():
    a = minhash(np.arange(10, dtype=np.uint64), MinHashParams(seed=1))
    b = minhash(np.arange(10, dtype=np.uint64), MinHashParams(seed=2))
    with pytest.raises(IncompatibleFingerprints, match="recompute"):
        a.jaccard(b)


def test_bad_parameters_say_the_range():
    with pytest.raises(ParameterError, match="between 2 and 4096"):
        MinHashParams(num_perm=1)
    with pytest.raises(ParameterError, match="oph"):
        MinHashParams(method="fast")


def test_optimal_bands_put_the_s_curve_at_the_threshold():
    for t in (0.3, 0.5, 0.8):
        b, r = optimal_bands(t, 128)
        assert b * r <= 128
        assert candidate_probability(t + 0.25, b, r) > 0.8 if t + 0.25 < 1 else True
        assert candidate_probability(max(0.0, t - 0.25), b, r) < 0.35


def test_lsh_finds_similar_sets_and_not_unrelated_ones():
    lsh = MinHashLSH(LSHParams(threshold=0.5))
    a, b = sets_with_jaccard(0.8)
    lsh.insert("a", minhash(a))
    lsh.insert("far", minhash(rng.integers(0, 2**63, 3000, dtype=np.uint64)))
    assert lsh.query(minhash(b)) == {"a"}
    lsh.remove("a")
    assert lsh.query(minhash(b)) == set() and len(lsh) == 1
