import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint import simhash_index
from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.simhash import Simhash
from fingerprint.simhash_index import SimhashIndex, scan, table_count


def planted(rng, n, bits, k):
    """Random fingerprints, a third of them copies of others with 0..k+2 bits flipped."""
    top = (1 << bits) - 1
    vals = rng.integers(0, top, n, dtype=np.uint64, endpoint=True)
    m = max(1, n // 3)
    src = vals[rng.integers(0, n, m)]
    flips = np.zeros(m, dtype=np.uint64)
    for i in range(m):
        for b in rng.choice(bits, rng.integers(0, k + 3), replace=False):
            flips[i] |= np.uint64(1) << np.uint64(int(b))
    return np.concatenate([vals, src ^ flips])


def brute(vals, q, k):
    pos, d = scan(vals, q, k)
    return list(zip(pos.tolist(), d.tolist()))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 300),
    bits=st.sampled_from([16, 32, 48, 64]),
    k=st.integers(0, 4),
    extra_tables=st.booleans(),
)
def test_query_equals_brute_force_scan(seed, n, bits, k, extra_tables):
    rng = np.random.default_rng(seed)
    vals = planted(rng, n, bits, k)
    tables = table_count(k + 2, k) if extra_tables and k > 0 else None
    idx = SimhashIndex(bits=bits, k=k, tables=tables)
    half = len(vals) // 2
    idx.add_many(np.arange(half), vals[:half])  # bulk, then one at a time (the pending tail)
    for i in range(half, len(vals)):
        idx.add(i, int(vals[i]))
    queries = np.concatenate([vals[rng.integers(0, len(vals), 10)], rng.integers(0, (1 << bits) - 1, 5, dtype=np.uint64)])
    many = idx.query_many(queries)
    for q, got_many in zip(queries.tolist(), many):
        expected = brute(vals, q, k)
        assert idx.query(q) == expected
        assert got_many == expected


def test_results_sorted_by_distance_then_insertion_order():
    idx = SimhashIndex(bits=16, k=2)
    idx.add("far", 0b11)  # distance 2
    idx.add("first-near", 0b1)  # distance 1
    idx.add("exact", 0)
    idx.add("second-near", 0b10)  # distance 1, added later
    assert idx.query(0) == [("exact", 0), ("first-near", 1), ("second-near", 1), ("far", 2)]
    assert idx.query(0b1111_0000_0000_0000) == []


def test_pending_tail_is_merged_and_still_found(monkeypatch):
    monkeypatch.setattr(simhash_index, "_MIN_PENDING", 8)
    rng = np.random.default_rng(3)
    vals = planted(rng, 200, 64, 3)
    idx = SimhashIndex()
    for i, v in enumerate(vals.tolist()):
        idx.add(i, v)
        assert idx.query(v)[0] == (next(j for j, x in enumerate(vals.tolist()) if x == v), 0)
    assert idx._indexed > 0  # the tables were used, not only the tail
    for q in vals[:20].tolist():
        assert idx.query(q) == brute(vals, q, 3)


def test_ids_of_any_kind_and_duplicates():
    idx = SimhashIndex(bits=16, k=1)
    idx.add_many(np.array([5, 6]), [1, 2])
    idx.add(("page", 7), 1)  # switches ids to a list; earlier ids keep their values
    idx.add(5, 1)
    assert idx.query(1) == [(5, 0), (("page", 7), 0), (5, 0)]
    assert idx.query(3) == [(5, 1), (6, 1), (("page", 7), 1), (5, 1)]
    assert len(idx) == 4


def test_more_tables_same_answers_smaller_buckets():
    assert SimhashIndex(k=3).tables == 4
    assert SimhashIndex(k=3, tables=10).blocks == 5
    with pytest.raises(ParameterError, match="C\\(blocks, 3\\)"):
        SimhashIndex(k=3, tables=7)


def test_bad_values_and_parameters():
    with pytest.raises(ParameterError, match="1..64 bits"):
        SimhashIndex(bits=128)
    with pytest.raises(ParameterError, match="between 0 and bits-1"):
        SimhashIndex(bits=16, k=16)
    idx = SimhashIndex(bits=16, k=3)
    with pytest.raises(ParameterError, match="more than 16 bits"):
        idx.add(1, 1 << 20)
    with pytest.raises(ParameterError, match="one id per fingerprint"):
        idx.add_many([1, 2], [1])
    with pytest.raises(ParameterError, match="unsigned"):
        idx.add(1, -1)
    with pytest.raises(ParameterError, match="16-bit"):
        idx.query(1 << 17)


def test_refuses_simhashes_made_differently():
    idx = SimhashIndex(bits=64, k=3)
    idx.add("a", Simhash(1, 64, "xxh64", "words,tf"))
    with pytest.raises(IncompatibleFingerprints):
        idx.add("b", Simhash(1, 64, "sdbm", "words,tf"))
    with pytest.raises(IncompatibleFingerprints):
        idx.query(Simhash(1, 32, "xxh64", "words,tf"))
    assert idx.query(Simhash(3, 64, "xxh64", "words,tf")) == [("a", 1)]


def test_memory_is_reported_and_small():
    idx = SimhashIndex()
    n = 100_000
    idx.add_many(np.arange(n), np.random.default_rng(0).integers(0, 2**63, n, dtype=np.uint64))
    idx.flush()
    # values 8 + ids 8 + 4 tables x (2-byte key + 4-byte position) = 40 bytes per fingerprint,
    # plus 65,537 bucket starts (8 bytes each) per table
    assert idx.nbytes() <= 40 * n + 4 * 8 * 65_537
