import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.engine import EngineConfig, prepare
from fingerprint.index import IndexKeys, IndexParams, index_keys
from tracker.fingerprints import pack_keys, params_hash, unpack_keys

u64 = st.lists(st.integers(0, 2**64 - 1), max_size=50).map(lambda v: np.array(v, dtype=np.uint64))


@given(u64, u64, u64, st.integers(0, 2**64 - 1), st.sampled_from([0, 16, 64]), st.booleans())
def test_pack_round_trips(w, p, b, sim, bits, empty):
    k = IndexKeys(winnow=w, pinyin=p, simhash=sim, simhash_bits=bits, bands=b, empty=empty)
    r = unpack_keys(pack_keys(k))
    assert r.winnow.tolist() == w.tolist() and r.pinyin.tolist() == p.tolist() and r.bands.tolist() == b.tolist()
    assert (r.simhash, r.simhash_bits, r.empty) == (sim, bits, empty)


def test_real_keys_round_trip_and_corruption_is_reported():
    k = index_keys(prepare("c", "他把信反复看了十几遍，终于决定来赴这个莫名其妙的约。" * 20), EngineConfig(), IndexParams())
    data = pack_keys(k)
    assert unpack_keys(data).winnow.tolist() == k.winnow.tolist()
    with pytest.raises(ValueError, match="reindex"):
        unpack_keys(data[:-3])
    with pytest.raises(ValueError, match="reindex"):
        unpack_keys(b"XXXX" + data[4:])


def test_params_hash_changes_with_what_changes_keys_only():
    base = params_hash(EngineConfig(), IndexParams())
    assert params_hash(EngineConfig(min_containment=0.5), IndexParams()) == base  # a verdict threshold
    assert params_hash(EngineConfig(simhash_bits=32), IndexParams()) != base
    assert params_hash(EngineConfig(), IndexParams(winnow_sample=8)) != base
