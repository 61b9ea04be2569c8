"""A translated copy for the admin's tests: a Liaozhai story registered in Chinese (聊斋志异,
考城隍), a page carrying H. A. Giles's English translation of it (bench/data/translation), and
the match fingerprint.engine.judge finds between them, stored as the pipeline stores one."""
from __future__ import annotations

from functools import lru_cache

from bench.translation_corpus import Pair, pairs
from fingerprint.engine import judge, prepare
from fingerprint.models import Match
from tracker.store import Chapter, MatchRecord, Page, Work

from .conftest import T0

WORK = "聊斋志异"
STORY = 1  # Giles's number: "Examination For The Post Of Guardian Angel" / 考城隍
CHAPTER = f"{WORK}/考城隍"
TITLE = "考城隍"
SITE = "fanyi"
PAGE = "https://fanyi.example/liaozhai/1.html"
VIEW = ("/matches/view", {"page_key": PAGE, "chapter": CHAPTER})


@lru_cache(maxsize=1)
def story() -> Pair:
    """The Chinese story and Giles's translation of it."""
    (pair,) = [p for p in pairs("liaozhai") if p.number == STORY]
    return pair


@lru_cache(maxsize=1)
def judged() -> Match:
    """The engine's verdict on the English page against the Chinese chapter."""
    pair = story()
    return judge(prepare(PAGE, pair.en_text), prepare(CHAPTER, pair.zh_text)).match


def add_translated_match(store, status: str = "new") -> MatchRecord:
    """Register the story, store the page and the engine's match (as tracker.pipeline.to_record
    makes it); the match moves to `status`."""
    pair, m = story(), judged()
    assert "chapter_sentences" in m.scores and m.spans, "the engine no longer judges this pair a translation"
    store.upsert_work(Work(id=WORK, title=WORK, author="蒲松龄"))
    store.upsert_chapter(Chapter(key=CHAPTER, work=WORK, title=TITLE, text=pair.zh_text, number=1))
    store.upsert_page(Page(key=PAGE, url=PAGE, site=SITE, text=pair.en_text, fetched_at=T0))
    store.set_page_status(PAGE, "done")
    store.upsert_match(MatchRecord(
        page=PAGE, chapter=CHAPTER, work=WORK, site=SITE, similarity=m.similarity, containment=m.containment,
        page_share=m.page_share, verdict=m.verdict, scores=dict(m.scores), spans=[vars(s).copy() for s in m.spans],
        first_seen=T0, last_seen=T0))
    if status != "new":
        store.set_match_status(PAGE, CHAPTER, status, by="admin")
    return store.get_match(PAGE, CHAPTER)
