"""RedisIndex keeps the CandidateIndex contract on fakeredis, on a real Redis and on a
real three-node Redis Cluster, answers like MemoryIndex, writes in few round trips and
cleans up after itself."""
import os
import socket
import uuid

import fakeredis
import numpy as np
import pytest
import redis

from fingerprint.engine import EngineConfig
from fingerprint.index import IndexKeys, IndexParams, MemoryIndex, index_keys
from tracker.redisindex import IndexMismatch, IndexUnavailable, RedisIndex, connect

from ..conftest import need, redis_url
from ..fingerprint.index_contract import (
    CONFIG,
    EN_BASE,
    PREPARED,
    ZH_BASE,
    IndexContract,
    SampledIndexContract,
    liaozhai,
)

REDIS_URL = os.environ.get("FPT_TEST_REDIS_URL", redis_url(0))


def _real_client():
    try:
        return connect(REDIS_URL, timeout=0.5)
    except IndexUnavailable as e:
        need(False, f"a Redis server is needed for this test: {e}")


def _keys_under(client, prefix: str) -> list[bytes]:
    return list(client.scan_iter(match=prefix + "*", count=1000))


@pytest.fixture
def fake():
    return fakeredis.FakeRedis()


@pytest.fixture
def real():
    client = _real_client()
    prefixes = []
    yield client, prefixes
    for p in prefixes:
        keys = _keys_under(client, p)
        if keys:
            client.unlink(*keys)


def _prefix():
    return f"fpt-test-{uuid.uuid4().hex}:"


# -- the contract on both servers ----------------------------------------------------------------


def _client(request, backend: str):
    """A client of the backend: fakeredis, the tests' Redis, or the tests' local cluster."""
    if backend == "fakeredis":
        return fakeredis.FakeRedis()
    if backend == "cluster":
        return connect(request.getfixturevalue("cluster_url"))
    return _real_client()


@pytest.fixture(params=["fakeredis", "redis", "cluster"])
def make_index(request):
    if request.param == "fakeredis":
        client = fakeredis.FakeRedis()
        yield lambda config, params: RedisIndex(client, config, params, prefix=_prefix(), capacity=1000)
        return
    client = _client(request, request.param)
    made = []

    def make(config, params):
        idx = RedisIndex(client, config, params, prefix=_prefix(), capacity=1000)
        made.append(idx)
        return idx

    yield make
    for idx in made:
        idx.clear()


class TestRedisIndex(IndexContract):
    pass


class TestSampledRedisIndex(SampledIndexContract):
    pass


# -- equivalence with MemoryIndex ----------------------------------------------------------------


def _synthetic(n: int, seed: int = 7) -> list[IndexKeys]:
    """Keys of n originals in families that share keys, so hit counts, max_df, dropped
    and shared bands and near Simhash values all occur. Each asks for the translation keys
    it posts (so it finds itself through that channel too)."""
    rng = np.random.default_rng(seed)
    trng = np.random.default_rng(seed + 100)  # apart, so the other channels' keys stay as they were
    pool = rng.integers(0, 2**64, size=600, dtype=np.uint64)  # keys shared across originals
    tpool = trng.integers(0, 2**64, size=60, dtype=np.uint64)
    out = []
    for i in range(n):
        translation = np.unique(np.concatenate([trng.integers(0, 2**64, size=8, dtype=np.uint64),
                                                trng.choice(tpool, size=trng.integers(0, 12), replace=False)]))
        own = rng.integers(0, 2**64, size=30, dtype=np.uint64)
        shared = rng.choice(pool, size=rng.integers(0, 12), replace=False)
        winnow = np.unique(np.concatenate([own[:15], shared]))
        pinyin = np.unique(np.concatenate([own[15:], shared[: len(shared) // 2]]))
        bands = rng.integers(0, 2**64, size=25, dtype=np.uint64)
        if i % 3 == 0:
            bands[1] = pool[1 + i % 7]  # band buckets shared by a few
        if i % 5 == 0:
            bands[0] = pool[0]  # and one shared by many
        base = int(pool[i % 40])
        flips = rng.choice(64, size=rng.integers(0, 5), replace=False)
        sim = base
        for f in flips.tolist():
            sim ^= 1 << f
        out.append(IndexKeys(winnow=winnow, pinyin=pinyin, simhash=sim, simhash_bits=64, bands=bands,
                             empty=(i % 97 == 96), translation=translation, translation_query=translation))
    return out


def _queries(items: list[IndexKeys], seed: int = 8) -> list[IndexKeys]:
    rng = np.random.default_rng(seed)
    qs = list(items[::7])
    for k in items[::11]:  # part of an original, plus noise
        noise = rng.integers(0, 2**64, size=10, dtype=np.uint64)
        qs.append(IndexKeys(winnow=np.concatenate([k.winnow[::2], noise]), pinyin=k.pinyin[1::2],
                            simhash=k.simhash ^ 0b101, simhash_bits=64, bands=k.bands[:3],
                            translation_query=np.concatenate([k.translation[1:], noise[:3]])))
    return qs


ALL = {"winnow", "pinyin", "simhash", "minhash", "translation"}


@pytest.mark.parametrize("backend", ["fakeredis", "redis", "cluster"])
def test_answers_like_memory_index_on_synthetic_keys(backend, request):
    params = IndexParams(min_hits=2, max_df=6)
    client = _client(request, backend)
    red = RedisIndex(client, CONFIG, params, prefix=_prefix(), capacity=200)
    mem = MemoryIndex(CONFIG, params)
    items = _synthetic(300)
    try:
        red.add_many(enumerate(items))
        mem.add_many(enumerate(items))
        assert len(red) == len(mem) > 0
        queries = _queries(items)
        for q in queries:
            assert red.candidates(q) == mem.candidates(q)
        for d in range(0, 300, 3):  # remove a third, re-add some with other keys
            red.remove(d)
            mem.remove(d)
        # MemoryIndex drops the new postings of a number re-added before its next query
        # (Postings applies a removal to the pending additions too), so query in between
        mem.candidates(queries[0])
        for d in range(0, 90, 9):
            red.add(d, items[(d + 1) % 300])
            mem.add(d, items[(d + 1) % 300])
        assert len(red) == len(mem)
        for q in queries:
            assert red.candidates(q) == mem.candidates(q)
        # the families make every channel and the max_df cut matter in these answers
        seen = set().union(*(set().union(*mem.candidates(q).values()) for q in queries))
        assert seen == ALL
    finally:
        red.clear()


def test_readding_right_after_removing_keeps_the_new_keys(fake):
    idx = RedisIndex(fake, CONFIG, IndexParams(), prefix="re:")
    items = _synthetic(3)
    idx.add(1, items[0])
    idx.remove(1)
    idx.add(1, items[1])
    assert idx.candidates(items[1]) == {1: ALL}
    assert 1 not in idx.candidates(IndexKeys(winnow=items[0].winnow, pinyin=items[0].pinyin, simhash=0,
                                             simhash_bits=0, bands=np.empty(0),
                                             translation_query=items[0].translation))


def test_answers_like_memory_index_on_real_chapters(fake):
    params = IndexParams(winnow_sample=8, pinyin_sample=4)
    red = RedisIndex(fake, CONFIG, params, prefix="eq:")
    mem = MemoryIndex(CONFIG, params)
    keys = {i: index_keys(p, CONFIG, params) for i, p in PREPARED.items()}
    red.add_many(keys.items())
    mem.add_many(keys.items())
    for k in keys.values():
        page = IndexKeys(winnow=k.winnow[::2], pinyin=k.pinyin[::3], simhash=k.simhash, simhash_bits=64,
                         bands=k.bands[::4])
        assert red.candidates(k) == mem.candidates(k)
        assert red.candidates(page) == mem.candidates(page)


@pytest.mark.parametrize("backend", ["fakeredis", "redis", "cluster"])
def test_answers_like_memory_index_across_languages(backend, request):
    """The Liaozhai stories in Chinese and in English, each indexed as an original: every text
    asked as a page gets the same candidates and channels from both backends, and the
    translation channel proposes the other language's text only."""
    zh, en = liaozhai()
    client = _client(request, backend)
    red = RedisIndex(client, CONFIG, IndexParams(), prefix=_prefix(), capacity=1000)
    mem = MemoryIndex(CONFIG, IndexParams())
    keys = {d: index_keys(p, CONFIG, IndexParams()) for d, p in {**zh, **en}.items()}
    try:
        red.add_many(keys.items())
        mem.add_many(keys.items())
        across = 0
        for d, k in keys.items():
            got = red.candidates(k)
            assert got == mem.candidates(k), d
            lang = d // 100
            assert all(o // 100 != lang for o, ch in got.items() if "translation" in ch)
            across += "translation" in got.get(d - EN_BASE + ZH_BASE if lang == 2 else d - ZH_BASE + EN_BASE, ())
        assert across >= len(keys) // 3
    finally:
        red.clear()


def test_two_keys_of_one_original_in_one_bucket_are_both_kept(fake):
    # capacity 1 gives 16 buckets, so 40 keys of one original share buckets
    idx = RedisIndex(fake, CONFIG, IndexParams(min_hits=40), prefix="dup:", capacity=1)
    rng = np.random.default_rng(3)
    k = IndexKeys(winnow=rng.integers(0, 2**64, 40, dtype=np.uint64), pinyin=np.empty(0), simhash=0,
                  simhash_bits=0, bands=np.empty(0))
    idx.add(5, k)
    assert idx.candidates(k) == {5: {"winnow"}}  # all 40 hits counted
    idx.remove(5)
    assert idx.candidates(k) == {} and len(idx) == 0


# -- round trips, removal, clearing --------------------------------------------------------------


class CountingConnection(redis.Connection):
    """A connection that counts what it sends (one send = one round trip)."""

    sends = 0

    def send_packed_command(self, command, check_health=True):
        type(self).sends += 1
        return super().send_packed_command(command, check_health)


def test_writes_and_queries_are_batched_into_few_round_trips():
    _real_client()
    CountingConnection.sends = 0
    pool = redis.ConnectionPool.from_url(REDIS_URL, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    client.ping()
    idx = RedisIndex(client, CONFIG, IndexParams(), prefix=_prefix(), capacity=1000, batch=500)
    items = _synthetic(1200)
    try:
        before = CountingConnection.sends
        idx.add_many(enumerate(items))
        # the layout read on first use, then 3 batches (500, 500, 200) of a state round trip and a postings send
        assert CountingConnection.sends - before == 1 + 3 * 2
        before = CountingConnection.sends
        found = idx.candidates(items[10])
        assert CountingConnection.sends - before == 1
        assert 10 in found
    finally:
        idx.clear()
        pool.disconnect()


def test_removed_and_replaced_originals_stop_answering_and_clear_removes_every_key(real):
    client, prefixes = real
    p = _prefix()
    prefixes.append(p)
    idx = RedisIndex(client, CONFIG, IndexParams(winnow_sample=8, pinyin_sample=4), prefix=p, capacity=1000)
    keys = {i: index_keys(pr, CONFIG, idx.params) for i, pr in PREPARED.items()}
    idx.add_many(keys.items())
    assert len(_keys_under(client, p)) > 50
    idx.add(0, keys[1])  # a replaced original's old postings no longer count
    assert 0 not in idx.candidates(keys[0]) and set(idx.candidates(keys[1])) == {0, 1}
    for d in keys:
        idx.remove(d)
        idx.remove(d)  # twice: counted once
    assert len(idx) == 0
    assert all(idx.candidates(k) == {} for k in keys.values())
    idx.clear()
    assert _keys_under(client, p) == []


def test_a_number_indexed_many_times_keeps_only_its_last_keys(fake):
    idx = RedisIndex(fake, CONFIG, IndexParams(), prefix="many:", capacity=100)
    items = _synthetic(12)
    for j in range(10):
        idx.add(3, items[j])
        if j % 3 == 2:
            idx.remove(3)
    idx.add_many([(4, items[10]), (3, items[11])])
    assert len(idx) == 2
    assert idx.candidates(items[11]) == {3: ALL}
    # number 3 answers as an index that only ever held items[11] there would
    fresh = MemoryIndex(CONFIG, IndexParams())
    fresh.add_many([(4, items[10]), (3, items[11])])
    for j in range(10):
        assert idx.candidates(items[j]).get(3) == fresh.candidates(items[j]).get(3)


def test_a_query_needs_a_second_round_trip_only_when_changed_originals_are_hit():
    _real_client()
    CountingConnection.sends = 0
    pool = redis.ConnectionPool.from_url(REDIS_URL, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    idx = RedisIndex(client, CONFIG, IndexParams(), prefix=_prefix(), capacity=1000)
    items = _synthetic(20)
    try:
        idx.add_many(enumerate(items))
        idx.add(5, items[6])
        before = CountingConnection.sends
        assert 1 in idx.candidates(items[1])
        assert CountingConnection.sends - before == 1
        before = CountingConnection.sends
        assert idx.candidates(items[5]).get(5) is None
        assert 5 in idx.candidates(items[6])
        assert CountingConnection.sends - before == 4
    finally:
        idx.clear()
        pool.disconnect()


def test_document_numbers_must_fit_31_bits(fake):
    idx = RedisIndex(fake, CONFIG, IndexParams(), prefix="big:")
    with pytest.raises(ValueError, match="2\\*\\*31"):
        idx.add(1 << 31, _synthetic(1)[0])


def test_clear_deletes_only_its_own_prefix(real):
    client, prefixes = real
    mine, other = _prefix(), _prefix()
    prefixes += [mine, other]
    a = RedisIndex(client, CONFIG, IndexParams(), prefix=mine)
    b = RedisIndex(client, CONFIG, IndexParams(), prefix=other)
    k = index_keys(PREPARED[0], CONFIG, IndexParams())
    a.add(1, k)
    b.add(1, k)
    n_other = len(_keys_under(client, other))
    a.clear()
    assert _keys_under(client, mine) == []
    assert len(_keys_under(client, other)) == n_other and 1 in b.candidates(k)


def test_a_prefix_built_with_other_parameters_is_refused(fake):
    k = index_keys(PREPARED[0], CONFIG, IndexParams())
    RedisIndex(fake, CONFIG, IndexParams(), prefix="m:").add(1, k)
    with pytest.raises(IndexMismatch, match="another prefix"):
        RedisIndex(fake, CONFIG, IndexParams(winnow_sample=8), prefix="m:").candidates(k)
    again = RedisIndex(fake, CONFIG, IndexParams(), prefix="m:", capacity=10**7)  # layout read back
    assert 1 in again.candidates(index_keys(PREPARED[0], CONFIG, IndexParams()))


# -- Redis down --------------------------------------------------------------------------------


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_connect_to_a_closed_port_says_how_to_fix_it():
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    with pytest.raises(IndexUnavailable) as e:
        connect(url, timeout=0.5)
    msg = str(e.value)
    assert f"cannot reach Redis at {url}" in msg and "unset FPT_REDIS_URL" in msg


def test_commands_on_an_unreachable_server_raise_index_unavailable():
    port = _closed_port()
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    idx = RedisIndex(client, EngineConfig(), IndexParams())
    k = index_keys(PREPARED[0], CONFIG, IndexParams())
    for call in (lambda: idx.add(1, k), lambda: idx.candidates(k), lambda: idx.remove(1), lambda: len(idx),
                 idx.clear):
        with pytest.raises(IndexUnavailable, match=f"cannot reach Redis at redis://127.0.0.1:{port}/0 .*start it"):
            call()


# -- layout: segments, the older layout --------------------------------------------------------


@pytest.mark.parametrize("backend", ["fakeredis", "redis", "cluster"])
def test_numbers_past_three_bytes_and_aliases_are_found_by_another_process(backend, request):
    """A record keeps 3 id bytes; ids from 2**24 on (big numbers, aliases of re-indexed
    ones) go to segment keys, which a process that has not seen them learns from the
    segment map in its query's reply."""
    client = _client(request, backend)
    prefix = _prefix()
    writer = RedisIndex(client, CONFIG, IndexParams(), prefix=prefix, capacity=1000)
    reader = RedisIndex(client, CONFIG, IndexParams(), prefix=prefix, capacity=1000)
    items = _synthetic(6)
    try:
        reader.candidates(items[0])  # the reader knows segment 0 only
        big = (1 << 24) + 5
        writer.add_many([(1, items[1]), (big, items[2]), ((1 << 31) - 1, items[3])])
        writer.add(1, items[4])  # an alias id, past 2**31
        both = ALL
        assert reader.candidates(items[2]) == {big: both}
        assert reader.candidates(items[3]) == {(1 << 31) - 1: both}
        assert reader.candidates(items[4]) == {1: both}
        assert 1 not in reader.candidates(items[1])
        assert len(reader) == 3
    finally:
        writer.clear()


def test_an_index_in_the_older_layout_is_refused_until_reindexed(fake):
    # what the packed-v1 layout left: its meta, state and posting keys under the plain prefix
    fake.hset("old:meta", mapping={"signature": "(IndexParams(...), 'packed-v1')", "bits:winnow": "14"})
    fake.set("old:n", 3)
    fake.hset("old:D:0", "1", "")
    fake.set("old:w:0abc", b"\x00" * 14)
    idx = RedisIndex(fake, CONFIG, IndexParams(), prefix="old:")
    k = index_keys(PREPARED[0], CONFIG, IndexParams())
    with pytest.raises(IndexMismatch, match="older version.*fptrack reindex"):
        idx.candidates(k)
    fake.set("old:crawl:{job}:seen", b"kept")  # another part of fptrack under the same prefix
    idx.clear()  # what reindex does first
    assert sorted(fake.keys("old:*")) == [b"old:crawl:{job}:seen"]
    idx.add(1, k)
    assert idx.candidates(k) == {1: {"winnow", "pinyin", "simhash", "minhash"}}


def test_an_index_written_before_the_translation_channel_is_refused_until_reindexed(fake):
    # what the packed-v2 layout left: its meta (no bits or residual bytes for the translation channel)
    params = IndexParams()
    old = repr((params, 25, 64, 3, b"packed-v2")).encode()
    fake.hset("v2:{index}meta", mapping={"signature": old, "bits:winnow": "7", "resid:winnow": "2"})
    fake.set("v2:w:0abc", b"\x00" * 10)
    idx = RedisIndex(fake, CONFIG, params, prefix="v2:")
    k = index_keys(PREPARED[0], CONFIG, params)
    with pytest.raises(IndexMismatch, match="packed-v2 layout, before the translation channel.*fptrack reindex"):
        idx.candidates(k)
    idx.clear()  # what reindex does first
    assert fake.keys("v2:*") == []
    idx.add(1, k)
    assert idx.candidates(k) == {1: {"winnow", "pinyin", "simhash", "minhash"}}


def test_a_prefix_with_braces_is_refused(fake):
    with pytest.raises(ValueError, match="must not contain"):
        RedisIndex(fake, CONFIG, IndexParams(), prefix="{fpt}:")


def test_keys_are_scrambled_so_pinyin_codes_spread_over_buckets(fake):
    """Pinyin-window codes are packed letter levels, 52 bits: unscrambled, their top bits
    are always 0 and every code would fall in bucket 0."""
    idx = RedisIndex(fake, CONFIG, IndexParams(), prefix="spread:", capacity=100_000)
    keys = {i: index_keys(p, CONFIG, IndexParams()) for i, p in PREPARED.items()}
    idx.add_many(keys.items())
    codes = np.concatenate([k.pinyin for k in keys.values()])
    assert int(codes.max()) < 1 << 52
    used = len(fake.keys("spread:p:*"))
    assert used > 0.5 * min(len(np.unique(codes)), 2 ** idx.bits["pinyin"])
