import math

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.bloom import BloomFilter, bloom_positions, bloom_size
from fingerprint.errors import InputError, ParameterError

items = st.lists(st.one_of(st.text(max_size=20), st.binary(max_size=20), st.integers(-(2**60), 2**60)), max_size=200)


def test_sizing_formula():
    m, k = bloom_size(1_000_000, 0.001)
    assert m == math.ceil(-1_000_000 * math.log(0.001) / math.log(2) ** 2) == 14_377_588
    assert k == 10
    assert bloom_size(1, 0.5) == (2, 1)


@settings(max_examples=60, deadline=None)
@given(items, st.integers(1, 500), st.integers(0, 2**32))
def test_no_false_negatives(xs, capacity, seed):
    bf = BloomFilter(capacity, 0.01, seed=seed)
    half = len(xs) // 2
    bf.add_many(xs[:half])
    for x in xs[half:]:
        bf.add(x)
    assert all(x in bf for x in xs)
    assert bf.contains_many(xs).all()


def test_false_positive_rate_near_target():
    bf = BloomFilter(20_000, 0.01)
    bf.add_many(f"seen-{i}" for i in range(20_000))
    rate = bf.contains_many([f"new-{i}" for i in range(20_000)]).mean()
    assert 0.003 < rate < 0.02


def test_double_hashing_positions_worked_example():
    bf = BloomFilter(1000, 0.01)
    h = xxhash.xxh3_128_intdigest(b"x", 0)
    h1, h2 = h & (2**64 - 1), (h >> 64) | 1
    assert bloom_positions(["x"], bf.m, bf.k)[0].tolist() == [(h1 + i * h2) % bf.m for i in range(bf.k)]
    bf.add("x")
    assert sorted(np.flatnonzero(np.unpackbits(bf.bits, bitorder="little")).tolist()) == sorted(
        {(h1 + i * h2) % bf.m for i in range(bf.k)})


def test_bytes_round_trip_and_checks():
    bf = BloomFilter(1000, 0.01, seed=7)
    bf.add_many(["a", "b", "c"])
    data = bf.to_bytes()
    back = BloomFilter.from_bytes(data)
    assert (back.m, back.k, back.capacity, back.error_rate, back.seed) == (bf.m, bf.k, 1000, 0.01, 7)
    assert "a" in back and "b" in back and (back.bits == bf.bits).all()
    with pytest.raises(InputError, match="FPBF"):
        BloomFilter.from_bytes(b"nope" + data[4:])
    with pytest.raises(InputError, match="truncated"):
        BloomFilter.from_bytes(data[:-1])
    with pytest.raises(InputError, match="damaged"):
        BloomFilter.from_bytes(data[:8] + bytes([data[8] ^ 1]) + data[9:])  # m no longer fits the capacity


def test_parameter_errors():
    a = BloomFilter(100, 0.01)
    with pytest.raises(ParameterError, match="capacity"):
        BloomFilter(0)
    with pytest.raises(ParameterError, match="error_rate"):
        BloomFilter(10, 1.5)
    with pytest.raises(InputError, match="str, bytes or int"):
        a.add(1.5)
