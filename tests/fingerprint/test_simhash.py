
import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.errors import IncompatibleFingerprints, InputError, ParameterError
from fingerprint.hashing import sdbm
from fingerprint.normalize import normalize
from fingerprint.simhash import Simhash, hamming, popcount, simhash, simhash_hashes, text_simhash

words = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=30)
u64 = st.integers(min_value=0, max_value=2**64 - 1)


def reference(features, weights, bits, hashfunc):
    """The algorithm of Li, Mao and Chen section 3.2, one bit at a time."""
    fc = [0.0] * bits
    for f, w in zip(features, weights):
        if hashfunc == "sdbm":
            h = sdbm(f, bits)
        elif bits <= 64:
            h = xxhash.xxh64_intdigest(f.encode())
        else:
            h = xxhash.xxh3_128_intdigest(f.encode())
        for j in range(bits):
            fc[j] += w if (h >> j) & 1 else -w
    return sum(1 << j for j in range(bits) if fc[j] > 0)


def test_worked_example_from_docstring():
    # "a" 0b1010 weight 2 and "b" 0b0011 weight 1 -> totals +1 -3 +3 -1 -> 0b1010
    fp = simhash_hashes(np.array([0b1010, 0b0011], dtype=np.uint64), [2, 1], bits=16)
    assert fp.value & 0b1111 == 0b1010


@settings(max_examples=60, deadline=None)
@given(words, st.sampled_from([16, 32, 64, 100, 128]), st.sampled_from(["xxh64", "sdbm"]), st.data())
def test_matches_bit_by_bit_reference(feats, bits, hashfunc, data):
    weights = data.draw(st.lists(st.integers(1, 50), min_size=len(feats), max_size=len(feats)))
    fp = simhash(feats, weights, bits=bits, hashfunc=hashfunc)
    assert fp.value == reference(feats, weights, bits, hashfunc)
    assert fp.bits == bits


@given(words)
def test_identical_input_distance_zero_and_repeats_add_up(feats):
    a = simhash(feats)
    assert hamming(a, simhash(list(feats))) == 0
    # No weights: each occurrence counts 1, so a mapping of counts gives the same value.
    counts = {}
    for f in feats:
        counts[f] = counts.get(f, 0) + 1
    assert simhash(counts).value == a.value


@given(u64, u64)
def test_hamming_symmetric_and_matches_popcount(a, b):
    assert hamming(a, b) == hamming(b, a) == bin(a ^ b).count("1")
    assert int(popcount(np.array([a ^ b], dtype=np.uint64))[0]) == hamming(a, b)


@given(u64, u64, u64)
def test_hamming_triangle_inequality(a, b, c):
    assert hamming(a, c) <= hamming(a, b) + hamming(b, c)


def test_hamming_refuses_different_parameters():
    a = Simhash(5, 64, "xxh64", "tokens:2gram,tf")
    with pytest.raises(IncompatibleFingerprints, match="recompute both"):
        hamming(a, Simhash(5, 32, "xxh64", "tokens:2gram,tf"))
    with pytest.raises(IncompatibleFingerprints):
        hamming(a, Simhash(5, 64, "sdbm", "tokens:2gram,tf"))
    with pytest.raises(IncompatibleFingerprints):
        a.distance(Simhash(5, 64, "xxh64", "tokens:3gram,tf"))
    with pytest.raises(ParameterError):
        hamming(a, 5)


def test_table_columns_feed_bits_highest_first():
    # Column 0 of the table decides the highest bit, as the course prints it.
    t = -np.ones((2, 16), dtype=np.int8)
    t[0, 0] = 1  # feature 0 votes +2 on column 0
    t[1, 15] = 1  # feature 1 votes +1 on column 15 (and -1 on column 0, losing there)
    fp = simhash(["x", "y"], [2, 1], hashfunc=t)
    assert fp.bits == 16
    assert fp.binary() == "1000000000000000"
    assert fp.hash.startswith("table:")
    t2 = t.copy()
    t2[1, 15] = -1
    assert simhash(["x", "y"], [2, 3], hashfunc=t).value != simhash(["x", "y"], [2, 3], hashfunc=t2).value
    assert simhash(["x"], hashfunc=t).hash != simhash(["x"], hashfunc=t2).hash  # different tables never compare


def test_table_errors_name_the_fix():
    zero_one = np.zeros((4, 16), dtype=np.int8)
    with pytest.raises(ParameterError, match="2\\*t-1"):
        simhash(["a"], hashfunc=zero_one)
    table = np.ones((2, 16), dtype=np.int8)
    with pytest.raises(ParameterError, match="only 2 rows"):
        simhash(["a", "b", "c"], hashfunc=table)
    with pytest.raises(ParameterError, match="pass bits=16"):
        simhash(["a"], bits=64, hashfunc=table)


@pytest.mark.parametrize("bits", [0, 8, 15, 129, 256])
def test_bits_out_of_range(bits):
    with pytest.raises(ParameterError, match="between 16 and 128"):
        simhash(["a"], bits=bits)


def test_bad_arguments():
    with pytest.raises(ParameterError, match="one weight per feature"):
        simhash(["a", "b"], [1])
    with pytest.raises(ParameterError, match="not one string"):
        simhash("abc")
    with pytest.raises(ParameterError, match="unknown hashfunc"):
        simhash(["a"], hashfunc="md5")
    with pytest.raises(ParameterError, match="bits <= 64"):
        simhash_hashes(np.array([1], dtype=np.uint64), bits=128)
    with pytest.raises(ParameterError, match="does not fit"):
        Simhash(1 << 20, 16)


def test_to_dict_round_trip():
    fp = simhash(["天地", "玄黄"], bits=128)
    assert fp.hash == "xxh3_128"
    assert Simhash.from_dict(fp.to_dict()) == fp
    with pytest.raises(InputError, match="to_dict"):
        Simhash.from_dict({"value": "zz"})


TEXT = "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。寒来暑往，秋收冬藏。闰余成岁，律吕调阳。云腾致雨，露结为霜。" * 3


def test_text_simhash_survives_disguises_and_separates_texts():
    base = text_simhash(normalize(TEXT))
    disguised = TEXT.replace("，", " , ").replace("云", "雲").replace("为", "為")
    assert base.distance(text_simhash(normalize(disguised))) == 0
    edited = TEXT[:-6] + "金生丽水。"
    other = text_simhash(normalize("学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？" * 3))
    assert base.distance(text_simhash(normalize(edited))) < base.distance(other)
    assert base.features == "tokens:2gram,tf" and base.hash == "kgram-mix64"


def test_text_simhash_edge_cases():
    assert text_simhash(normalize("")).value == 0
    assert text_simhash(normalize("天")).value != 0  # shorter than the n-gram: one gram of all tokens
    wide = text_simhash(normalize(TEXT), bits=128)
    assert wide.bits == 128 and wide.value >> 64  # the high lane is filled
    assert text_simhash(normalize(TEXT), bits=32).value == text_simhash(normalize(TEXT)).value & 0xFFFFFFFF
    with pytest.raises(InputError, match="normalize"):
        text_simhash(TEXT)


@pytest.mark.slow
def test_whole_novel_alt_edition_is_nearer_than_another_novel(corpus):
    xiyouji = normalize((corpus / "zh_novels" / "xiyouji.txt").read_text("utf-8"))
    alt = normalize((corpus / "zh_novels_alt" / "xiyouji_xstt5_edition.txt").read_text("utf-8"))
    other = normalize((corpus / "zh_novels" / "hongloumeng.txt").read_text("utf-8"))
    a = text_simhash(xiyouji)
    assert a.distance(text_simhash(alt)) < a.distance(text_simhash(other))
    assert a.distance(text_simhash(alt)) <= 8
