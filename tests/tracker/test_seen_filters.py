"""The Bloom filter of the seen texts (tracker.seen.filters): in the process and saved in the
store, or in Redis and shared; sized for the pages; built again, larger, once it is full."""
from __future__ import annotations

import json

import pytest

from fingerprint.bloom import BloomFilter
from tracker.seen import filters
from tracker.seen.filters import MIN_CAPACITY, RedisFilter, StoreFilter
from tracker.store.sqlite import SQLiteStore

from ..conftest import need, redis_url
from .store_contract_seen import seen


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.sqlite3")
    yield s
    s.close()


def keys(n: int, start: int = 0) -> list[str]:
    return [f"{i:032x}" for i in range(start, start + n)]


def stored(store, ks: list[str]) -> None:
    for k in ks:
        store.put_seen_text(seen(k))


def test_an_in_process_filter_is_saved_every_so_many_keys_and_on_close(store):
    f = StoreFilter(store, 1000, save_every=3)
    for k in keys(2):
        store.put_seen_text(seen(k))
        f.add(k, new=True)
    with pytest.raises(KeyError):
        store.seen_filter()  # two new keys: not saved yet
    store.put_seen_text(seen(keys(3)[2]))
    f.add(keys(3)[2], new=True)
    data, held = store.seen_filter()
    assert held == 3 and all(k in BloomFilter.from_bytes(data) for k in keys(3))
    store.put_seen_text(seen(keys(4)[3]))
    f.add(keys(4)[3], new=True)
    f.close()
    assert store.seen_filter()[1] == 4


def test_a_saved_filter_is_used_as_it_is_when_it_holds_every_stored_key(store, monkeypatch):
    stored(store, keys(5))
    StoreFilter(store, 1000).close()
    monkeypatch.setattr(store, "seen_text_keys", lambda: pytest.fail("the keys were read again"))
    f = StoreFilter(store)
    assert all(f.might_have(k) for k in keys(5)) and f.bloom.capacity == 1000


def test_keys_another_process_stored_since_the_save_are_added(store):
    stored(store, keys(5))
    StoreFilter(store, 1000).close()
    stored(store, keys(3, 100))  # another process, whose filter was not saved
    f = StoreFilter(store)
    assert all(f.might_have(k) for k in keys(5) + keys(3, 100))
    f.close()
    assert store.seen_filter()[1] == 8


def test_the_filter_is_sized_for_the_pages_and_built_again_when_full(store):
    assert StoreFilter(store).bloom.capacity == MIN_CAPACITY
    store.put_seen_filter(BloomFilter(4, 0.001).to_bytes(), 0)  # saved when there were 2 pages
    stored(store, keys(10))
    f = StoreFilter(store)
    assert f.bloom.capacity == MIN_CAPACITY and all(f.might_have(k) for k in keys(10))


@pytest.fixture
def client():
    import redis

    url = redis_url(13)
    c = redis.Redis.from_url(url)
    try:
        c.ping()
    except redis.RedisError:
        need(False, f"no Redis at {url}")
    c.flushdb()
    yield c
    c.flushdb()


def test_a_redis_filter_is_shared_at_once_and_built_from_the_keys_when_missing(store, client):
    stored(store, keys(4))
    a = RedisFilter(client, store, prefix="t:")
    assert all(a.might_have(k) for k in keys(4)) and a.capacity == MIN_CAPACITY
    b = RedisFilter(client, store, prefix="t:")
    assert (b.m, b.k, b.bits_key, b.parts) == (a.m, a.k, a.bits_key, 1)
    a.add("ab" * 16, new=True)
    assert b.might_have("ab" * 16) and not b.might_have("cd" * 16)
    client.delete(f"{a.bits_key}:0")  # the bits are gone (evicted, or deleted by hand): built again
    c = RedisFilter(client, store, prefix="t:")
    assert c.bits_key != a.bits_key and all(c.might_have(k) for k in keys(4))


def test_a_full_redis_filter_is_replaced_by_a_larger_one(store, client, monkeypatch):
    monkeypatch.setattr(filters, "MIN_CAPACITY", 2)
    small = RedisFilter(client, store, prefix="t:", capacity=2)
    stored(store, keys(10))
    larger = RedisFilter(client, store, prefix="t:")
    assert larger.capacity >= 20 and larger.bits_key != small.bits_key
    assert not client.exists(f"{small.bits_key}:0") and all(larger.might_have(k) for k in keys(10))
    assert RedisFilter(client, store, prefix="t:").bits_key == larger.bits_key


def test_when_two_processes_build_a_redis_filter_at_once_one_is_kept(store, client):
    stored(store, keys(3))
    other = {"m": 1000, "k": 3, "capacity": 100, "bits": "t:seen:bloom:other"}
    real_set = client.set

    def racing_set(name, value, **kw):  # another process finishes its build first
        if kw.get("nx"):
            real_set(name, json.dumps(other))
        return real_set(name, value, **kw)

    client.set = racing_set
    second = RedisFilter(client, store, prefix="t:")
    assert (second.bits_key, second.m, second.k) == ("t:seen:bloom:other", 1000, 3)
    assert client.keys("t:seen:bloom:*") == []  # the bits it built are dropped


def test_a_large_redis_filter_is_kept_in_parts(store, client, monkeypatch):
    monkeypatch.setattr(filters, "PART_CAPACITY", 40_000)
    stored(store, keys(50))
    f = RedisFilter(client, store, prefix="t:")  # sized for MIN_CAPACITY: three parts
    assert f.parts == 3 and f.capacity == MIN_CAPACITY
    assert sorted(k.decode() for k in client.keys(f"{f.bits_key}:*")) == [f"{f.bits_key}:{i}" for i in range(3)]
    assert all(f.might_have(k) for k in keys(50))
    g = RedisFilter(client, store, prefix="t:")
    g.add("ef" * 16, new=True)
    assert f.might_have("ef" * 16) and sum(f.might_have(k) for k in keys(5000, 10_000)) < 50


def test_a_store_that_cannot_take_the_filter_on_close_costs_only_a_rebuild(store, caplog):
    from tracker.store import StoreError

    stored(store, keys(3))
    f = StoreFilter(store, 1000)

    def refuse(data, held):
        raise StoreError("disk full")

    store.put_seen_filter = refuse
    f.close()
    assert "not saved" in caplog.text
    del store.put_seen_filter
    with pytest.raises(KeyError):
        store.seen_filter()
    assert all(StoreFilter(store).might_have(k) for k in keys(3))
