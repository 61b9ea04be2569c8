"""A translated copy through the tracker: a work registered in Chinese, an English page that
translates one of its chapters ingested and processed as a crawled page is, the match stored
with its sentence alignment, and found again after a new process and a reindex (the embedded
index and store; the Redis index's equivalence is tests/tracker/test_redis_index.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from tracker.context import Context
from tracker.pipeline import ingest, process_queued, reindex
from tracker.registry import register_work

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from translation_corpus import pairs


def _setup(tmp_path):
    lz = pairs("liaozhai")[:6]
    works = tmp_path / "work"
    works.mkdir()
    for p in lz:
        (works / f"第{p.number}章.txt").write_text(p.zh_text, encoding="utf-8")
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "en-page.txt").write_text(lz[3].en_text, encoding="utf-8")
    (pages / "unrelated.txt").write_text(pairs("liaozhai")[20].en_text, encoding="utf-8")
    return lz, works, pages


def test_an_english_page_translating_a_chapter_is_matched_and_stored(ctx, tmp_path):
    lz, works, pages = _setup(tmp_path)
    register_work(ctx, "聊斋志异", works)
    ingest(ctx, [str(pages)], site="foreign")
    counts = process_queued(ctx)
    assert counts["done"] == 2 and counts["failed"] == 0
    found = {(m.page, m.chapter) for m in ctx.store.matches()}
    assert found == {("en-page", f"聊斋志异/第{lz[3].number}章")}
    m = ctx.store.matches()[0]
    assert m.verdict in ("duplicate", "contains", "part")
    assert m.scores["chapter_sentences"] > 0 and m.scores["aligned_sentences"] > 0
    assert m.spans and all(s["page_end"] > s["page_start"] for s in m.spans)


def test_translation_keys_survive_a_new_process_and_a_reindex(settings, tmp_path):
    lz, works, pages = _setup(tmp_path)
    with_ctx = Context(settings)
    register_work(with_ctx, "聊斋志异", works)
    with_ctx.close()
    again = Context(settings)  # a new process: the index is loaded from the stored fingerprints
    try:
        reindex(again)
        ingest(again, [str(pages / "en-page.txt")], site="foreign")
        process_queued(again)
        assert [m.chapter for m in again.store.matches()] == [f"聊斋志异/第{lz[3].number}章"]
    finally:
        again.close()


def test_the_channel_left_out_finds_no_translation(settings, tmp_path, monkeypatch):
    monkeypatch.setenv("FPT_CHANNELS", "simhash,minhash,pinyin,winnow")
    from tracker.settings import Settings

    lz, works, pages = _setup(tmp_path)
    ctx = Context(Settings.load())
    try:
        register_work(ctx, "聊斋志异", works)
        ingest(ctx, [str(pages)], site="foreign")
        process_queued(ctx)
        assert ctx.store.matches() == []
    finally:
        ctx.close()
