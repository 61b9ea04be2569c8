"""The Redis index on a real three-node Redis Cluster (tests/cluster.py): keys where they
must be, MOVED replies followed, a master killed during a run seen by the user as one
line, `fptrack reindex` restoring the same matches after it comes back, and the tracker
finding with FPT_REDIS_URL at a cluster node what the embedded index finds."""
from __future__ import annotations

import random
import uuid

import numpy as np
import pytest
import redis
from click.testing import CliRunner

from fingerprint.index import IndexParams, MemoryIndex
from fptrack.cli import main
from tracker.context import Context
from tracker.pipeline import ingest, process_page, process_queued
from tracker.redisindex import RedisIndex, connect
from tracker.redisindex.wire import key_slot, slots_of
from tracker.registry import register_work
from tracker.settings import Settings

from ..conftest import ROOT
from ..fingerprint.index_contract import CONFIG
from .test_redis_index import _queries, _synthetic

SAMPLES = ROOT / "samples"


def _masters(client) -> list[redis.Redis]:
    return [client.get_redis_connection(n) for n in client.get_primaries()]


def test_slots_computed_with_numpy_are_the_cluster_s():
    rng = np.random.default_rng(4)
    for head, tail in ((b"fpt:w:", b""), (b"x:s3:", b".80"), (b"a{b}c:", b""), (b"{}:", b""), (b"p{", b"}")):
        buckets = rng.integers(0, 1 << 24, size=500)
        digits = np.array([list(b"%06x" % b) for b in buckets.tolist()], dtype=np.uint8)
        want = [key_slot(head + b"%06x" % b + tail) for b in buckets.tolist()]
        assert slots_of(head, digits, tail).tolist() == want
        assert want == [redis.crc.key_slot(head + b"%06x" % b + tail) for b in buckets.tolist()]


def test_document_state_shares_one_slot_and_postings_spread_over_every_master(cluster_url):
    client = connect(cluster_url)
    idx = RedisIndex(client, CONFIG, IndexParams(), prefix="lay:", capacity=2000)
    items = _synthetic(200)
    idx.add_many(enumerate(items))
    idx.remove(3)
    idx.add(4, items[5])  # an alias: state in D:, A:, ids, F
    per_master = [list(m.scan_iter(match="lay:*", count=1000)) for m in _masters(client)]
    state = [k for keys in per_master for k in keys if b"{index}" in k]
    assert {k.split(b"}", 1)[1].split(b":")[0] for k in state} >= {b"meta", b"n", b"ids", b"F", b"K", b"S", b"D", b"A"}
    assert len({key_slot(k) for k in state}) == 1
    postings = [[k for k in keys if b"{index}" not in k] for keys in per_master]
    assert all(len(p) > 20 for p in postings)  # every master holds buckets
    assert len(idx) == 200 - 2 - 1  # two of the synthetic originals are empty, one removed


def test_a_stale_slot_map_is_followed_through_moved_replies(cluster_url):
    """Every key sent to one master first, as after a resharding: the others answer MOVED
    and the commands are sent again where they say, so nothing is lost."""
    client = connect(cluster_url)
    params = IndexParams(min_hits=2, max_df=6)
    red = RedisIndex(client, CONFIG, params, prefix="moved:", capacity=500)
    mem = MemoryIndex(CONFIG, params)
    items = _synthetic(300)
    red.add_many(enumerate(items[:100]))
    red.nodes._load()
    wrong = np.zeros_like(red.nodes._slot_node)
    red.nodes._slot_node = wrong  # the map a client would hold before the slots moved
    red.add_many((i, items[i]) for i in range(100, 300))
    assert red.nodes._slot_node is not wrong  # read again after the first MOVED
    mem.add_many(enumerate(items))
    red.nodes._slot_node = np.zeros_like(wrong)
    for q in _queries(items):
        assert red.candidates(q) == mem.candidates(q)
    assert len(red) == len(mem) == 297  # three of the synthetic originals are empty


def _cli(args, env):
    r = CliRunner().invoke(main, args, env=env)
    return r.exit_code, r.output


def _one_clear_line(code: int, output: str) -> str:
    """The command failed with one error line, its last, and no traceback."""
    assert code == 1, output
    lines = output.strip().splitlines()
    assert lines[-1].startswith("Error: ") and sum(line.startswith("Error") for line in lines) == 1, output
    assert "Traceback" not in output
    return lines[-1]


def _matches(ctx) -> list[tuple]:
    return sorted((m.page, m.chapter, m.verdict, round(m.containment, 6), round(m.page_share, 6))
                  for m in ctx.store.matches())


def test_a_master_killed_during_a_run_is_one_line_and_reindex_restores_the_matches(redis_cluster, cluster_url,
                                                                                   tmp_path):
    env = {"FPT_HOME": str(tmp_path / "home"), "FPT_REDIS_URL": cluster_url, "FPT_REDIS_PREFIX": "kill:",
           "FPT_MONGO_URL": None, "FPT_BROKER_URL": None, "FPT_CONFIG": None}
    assert _cli(["add-work", "山城旧事", str(SAMPLES / "originals")], env)[0] == 0
    code, out = _cli(["ingest", str(SAMPLES / "pages")], env)
    assert code == 0, out
    settings = Settings.load({k: v for k, v in env.items() if v})
    before = _matches(Context(settings))
    assert before

    # a master other than the one in FPT_REDIS_URL (that one would be "cannot reach Redis at" the URL)
    victim = 1
    redis_cluster.kill(victim)
    page = tmp_path / "new-page.txt"
    page.write_text((SAMPLES / "pages").joinpath(sorted(p.name for p in (SAMPLES / "pages").glob("*.txt"))[0])
                    .read_text(encoding="utf-8") + "\n又及。", encoding="utf-8")
    for args in (["ingest", str(page)], ["reindex"]):
        line = _one_clear_line(*_cli(args, env))
        assert "Redis Cluster" in line and f"127.0.0.1:{redis_cluster.ports[victim]}" in line, line
        assert "start it again" in line, line

    redis_cluster.revive(victim)  # it comes back empty: its part of the index is gone
    code, out = _cli(["reindex"], env)
    assert code == 0 and "indexed 3 chapters" in out, out
    ctx = Context(settings)
    for p in [p.key for p in ctx.store.pages() if p.key != "new-page"]:
        process_page(ctx, p)
    assert [m for m in _matches(ctx) if m[0] != "new-page"] == before


@pytest.mark.corpus
def test_the_tracker_on_a_cluster_finds_what_the_embedded_index_finds(cluster_url, corpus, tmp_path):
    from bench.common import load_chapters
    from bench.disguises import excerpt, merged, paragraphs, renamed, variants

    chapters = load_chapters(corpus, novels=["rulinwaishi", "laocanyouji"])
    works = [c for c in chapters if c.novel == "rulinwaishi"][:30]
    others = [c for c in chapters if c.novel == "laocanyouji"][:10]
    folder = tmp_path / "originals"
    folder.mkdir()
    for c in works:
        (folder / f"{c.novel}-{c.index:03d}.txt").write_text(c.text, encoding="utf-8")
    pages = tmp_path / "pages"
    pages.mkdir()
    rng = random.Random(7)
    kinds = [excerpt(0.4), merged, paragraphs, renamed, variants]
    for i, c in enumerate(works[:25]):
        d = kinds[i % len(kinds)](c.text, rng, other=others[i % len(others)].text)
        (pages / f"copy-{i:02d}.txt").write_text(d.text, encoding="utf-8")
    for j, c in enumerate(others[:5]):  # pages that copy nothing registered
        (pages / f"other-{j}.txt").write_text(c.text, encoding="utf-8")

    def run(settings) -> list[tuple]:
        ctx = Context(settings)
        register_work(ctx, "儒林外史", folder)
        ingest(ctx, [str(pages)])
        process_queued(ctx)
        return _matches(ctx)

    prefix = f"same-{uuid.uuid4().hex[:6]}:"
    on_cluster = run(Settings.load({"FPT_HOME": str(tmp_path / "c"), "FPT_REDIS_URL": cluster_url,
                                    "FPT_REDIS_PREFIX": prefix}))
    embedded = run(Settings.load({"FPT_HOME": str(tmp_path / "e")}))
    assert len({m[0] for m in embedded}) >= 20  # most copies are found
    assert on_cluster == embedded


def test_a_mirror_is_matched_by_lookup_with_the_seen_filter_on_a_cluster(cluster_url, tmp_path, monkeypatch):
    from tracker.seen import RedisFilter, filters
    from tracker.store import Page

    monkeypatch.setattr(filters, "PART_CAPACITY", 20_000)  # parts in several slots
    settings = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_REDIS_URL": cluster_url,
                              "FPT_REDIS_PREFIX": "seen:"})
    ctx = Context(settings)
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    text = (SAMPLES / "pages" / "tw-3.txt").read_text(encoding="utf-8")
    for key, body in (("p1", text), ("p2", text.replace("\n", "\n天才一秒记住本站地址：www.m-fake.com\n", 1))):
        ctx.store.upsert_page(Page(key=key, text=body, site=key))
    assert not process_page(ctx, "p1").looked_up
    assert isinstance(ctx.seen.filter, RedisFilter) and ctx.seen.filter.parts == 5
    assert process_page(ctx, "p2").looked_up
    assert [(m.chapter, m.verdict, m.containment) for m in ctx.store.matches(page="p2")] == \
        [(m.chapter, m.verdict, m.containment) for m in ctx.store.matches(page="p1")]
    ctx.close()
