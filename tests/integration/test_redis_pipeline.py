"""The tracker on a real Redis index: same matches as the embedded index, and
the same again after the Redis keys are lost and `reindex` rebuilds them."""
import pytest

from tracker.context import Context
from tracker.pipeline import ingest, process_page, process_queued, reindex
from tracker.registry import register_work
from tracker.settings import Settings

from ..conftest import ROOT, redis_settings_for, redis_url

SAMPLES = ROOT / "samples"
REDIS = redis_url(15)


@pytest.fixture
def redis_settings(tmp_path, monkeypatch):
    settings, cleanup = redis_settings_for(REDIS, tmp_path / "home", monkeypatch)
    yield settings
    cleanup()


def matches(ctx):
    return sorted((m.page, m.chapter, m.containment, m.page_share) for m in ctx.store.matches())


def test_redis_index_gives_the_embedded_results_and_survives_a_flush(redis_settings, tmp_path):
    import redis

    ctx = Context(redis_settings)
    assert type(ctx.index).__name__ == "RedisIndex"
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    ingest(ctx, [str(SAMPLES / "pages")])
    process_queued(ctx)
    on_redis = matches(ctx)

    embedded = Context(Settings.load({"FPT_HOME": str(tmp_path / "embedded")}))
    register_work(embedded, "山城旧事", SAMPLES / "originals")
    ingest(embedded, [str(SAMPLES / "pages")])
    process_queued(embedded)
    assert {(p, c) for p, c, *_ in on_redis} == {(p, c) for p, c, *_ in matches(embedded)}

    client = redis.Redis.from_url(REDIS)
    lost = list(client.scan_iter(match=redis_settings.redis_prefix + "*"))
    client.delete(*lost)  # Redis loses the index
    assert len(ctx.index) == 0
    assert reindex(ctx) == 3
    for p in [p.key for p in ctx.store.pages()]:
        process_page(ctx, p)
    assert matches(ctx) == on_redis


def test_unreachable_redis_is_a_clear_error(tmp_path):
    from click.testing import CliRunner

    from fptrack.cli import main

    env = {"FPT_HOME": str(tmp_path), "FPT_REDIS_URL": "redis://127.0.0.1:1/0"}
    r = CliRunner().invoke(main, ["add-work", "山城旧事", str(SAMPLES / "originals")], env=env)
    assert r.exit_code != 0
    assert "cannot reach Redis" in r.output and "FPT_REDIS_URL" in r.output


def test_a_subset_of_channels_on_redis_finds_the_copies_the_full_set_finds(redis_settings, tmp_path):
    import dataclasses

    subset = dataclasses.replace(redis_settings, channels="minhash,winnow")
    ctx = Context(subset)
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    ingest(ctx, [str(SAMPLES / "pages")])
    process_queued(ctx)
    full = Context(Settings.load({"FPT_HOME": str(tmp_path / "embedded")}))
    register_work(full, "山城旧事", SAMPLES / "originals")
    ingest(full, [str(SAMPLES / "pages")])
    process_queued(full)
    assert {(p, c) for p, c, *_ in matches(ctx)} == {(p, c) for p, c, *_ in matches(full)}
    assert all("pinyin" not in m.scores and "simhash" not in m.scores for m in ctx.store.matches())
