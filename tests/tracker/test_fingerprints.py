import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.engine import EngineConfig, prepare
from fingerprint.index import IndexKeys, IndexParams, index_keys
from tracker.fingerprints import pack_keys, params_hash, params_of, unpack_keys

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


@given(u64, u64, st.booleans())
def test_translation_keys_round_trip(t, q, empty):
    k = IndexKeys(winnow=np.arange(3, dtype=np.uint64), pinyin=np.empty(0), simhash=5, simhash_bits=64,
                  bands=np.arange(2, dtype=np.uint64), empty=empty, translation=t, translation_query=q)
    data = pack_keys(k)
    assert data[:4] == b"FPK2"
    r = unpack_keys(data)
    assert r.translation.tolist() == t.tolist() and r.translation_query.tolist() == q.tolist()
    assert r.winnow.tolist() == [0, 1, 2] and r.bands.tolist() == [0, 1] and r.empty == empty


def _fpk1(keys: IndexKeys) -> bytes:
    """A record as fptrack wrote it before the translation channel (magic FPK1, three arrays)."""
    head = struct.pack("<4sBQHIII", b"FPK1", int(keys.empty), keys.simhash, keys.simhash_bits,
                       len(keys.winnow), len(keys.pinyin), len(keys.bands))
    return head + b"".join(a.astype("<u8").tobytes() for a in (keys.winnow, keys.pinyin, keys.bands))


def test_records_written_before_the_translation_channel_still_read():
    k = index_keys(prepare("c", "他把信反复看了十几遍，终于决定来赴这个莫名其妙的约。" * 20), EngineConfig(), IndexParams())
    assert k.translation.shape[0] > 0
    old = unpack_keys(_fpk1(k))
    assert old.winnow.tolist() == k.winnow.tolist() and old.pinyin.tolist() == k.pinyin.tolist()
    assert old.bands.tolist() == k.bands.tolist() and (old.simhash, old.simhash_bits) == (k.simhash, k.simhash_bits)
    assert old.translation.shape == old.translation_query.shape == (0,)
    with pytest.raises(ValueError, match="reindex"):
        unpack_keys(_fpk1(k)[:-8])
    with pytest.raises(ValueError, match="reindex"):
        unpack_keys(pack_keys(k)[:-1])


def test_the_translation_channel_and_its_key_constants_change_the_hash(monkeypatch):
    from fingerprint.translation import index_keys as tk

    full = EngineConfig()
    before = EngineConfig(channels=("simhash", "minhash", "pinyin", "winnow"))
    assert "translation" in full.channels
    # the four channels an index held before the translation channel keep the hash they had
    assert params_of(before, IndexParams())["index"] == {"winnow_sample": 1, "pinyin_sample": 1}
    assert params_hash(full, IndexParams()) != params_hash(before, IndexParams())
    assert params_hash(full, IndexParams()) == params_hash(EngineConfig(), IndexParams())  # stable
    assert params_hash(full, IndexParams(translation_min_hits=3)) == params_hash(full, IndexParams())  # a threshold
    h = params_hash(full, IndexParams())
    monkeypatch.setattr(tk, "MAX_CONCEPTS", tk.MAX_CONCEPTS + 1)
    assert params_hash(full, IndexParams()) != h
    assert params_hash(before, IndexParams()) == params_hash(EngineConfig(channels=before.channels), IndexParams())
