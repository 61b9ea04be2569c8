import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.cluster import SinglePass
from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.simhash import Simhash


def naive_single_pass(values, threshold):
    """Li, Mao and Chen's loop: compare with every centre, nearest within threshold, earliest on ties."""
    centres, out = [], []
    for v in values:
        best = None
        for cid, c in enumerate(centres):
            d = bin(v ^ c).count("1")
            if d <= threshold and (best is None or d < best[1]):
                best = (cid, d)
        if best is None:
            centres.append(v)
            out.append((len(centres) - 1, 0))
        else:
            out.append(best)
    return out


def test_worked_example_from_docstring():
    sp = SinglePass(threshold=1, bits=16)
    assert [sp.add("a", 0b1010), sp.add("b", 0b1011), sp.add("c", 0b0101)] == [0, 0, 1]
    a, c = sp.clusters
    assert (a.centre, a.keys, [m.distance for m in a.members]) == ("a", ["a", "b"], [0, 1])
    assert (c.centre, c.keys) == ("c", ["c"])


def test_ties_go_to_the_earliest_cluster_and_nearest_wins():
    sp = SinglePass(threshold=3, bits=16)
    sp.add("A", 0b0000_0000)
    sp.add("B", 0b1111_0000)  # 4 bits from A: new cluster
    assert sp.add("x", 0b0011_0000) == 0  # 2 bits from A and 2 from B: the earlier cluster
    assert sp.add("y", 0b0111_0000) == 1  # 3 from A, 1 from B: the nearer one
    assert sp[1].members[-1].distance == 1


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 200), st.integers(0, 5))
def test_same_as_scanning_every_centre(seed, n, threshold):
    rng = np.random.default_rng(seed)
    # Few distinct high bits so that many items land near each other.
    vals = (rng.integers(0, 4, n, dtype=np.uint64) << np.uint64(60)) ^ rng.integers(0, 1 << 8, n, dtype=np.uint64)
    vals = [int(v) for v in vals]
    sp = SinglePass(threshold=threshold)
    got = [sp.add(i, v) for i, v in enumerate(vals)]
    expected = naive_single_pass(vals, threshold)
    assert got == [cid for cid, _ in expected]
    dist = {}
    for c in sp:
        for m in c.members:
            dist[m.key] = (c.id, m.distance)
    assert [dist[i] for i in range(n)] == expected
    assert sum(len(c) for c in sp) == sp.items == n


def test_iteration_order_is_creation_order():
    sp = SinglePass(threshold=0, bits=16)
    for i, v in enumerate([5, 9, 5, 7, 9]):
        sp.add(f"k{i}", v)
    assert [c.centre for c in sp] == ["k0", "k1", "k3"]
    assert [c.keys for c in sp.clusters] == [["k0", "k2"], ["k1", "k4"], ["k3"]]
    assert len(sp) == 3


def test_refuses_mixed_fingerprints_and_bad_parameters():
    sp = SinglePass()
    sp.add("a", Simhash(1, 64, "kgram-mix64", "tokens:2gram,tf"))
    with pytest.raises(IncompatibleFingerprints):
        sp.add("b", Simhash(1, 64, "kgram-mix64", "tokens:3gram,tf"))
    with pytest.raises(IncompatibleFingerprints):
        sp.add("c", Simhash(1, 32, "kgram-mix64", "tokens:2gram,tf"))
    with pytest.raises(ParameterError, match="threshold"):
        SinglePass(threshold=-1)
    with pytest.raises(ParameterError, match="16-bit"):
        SinglePass(bits=16).add("x", 1 << 40)
