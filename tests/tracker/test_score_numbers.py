"""Scores as both stores keep and return them: counts (a run length, a Hamming distance, the
channels that proposed a chapter) are whole numbers, shares stay floats, so JSON says 4070, not 4070.0."""
from __future__ import annotations

import json
import re

import mongomock
import pytest

from fingerprint.models import Document
from fingerprint.track import Tracker
from tracker.store.mongo import MongoStore
from tracker.store.open import store_at

from .store_contract import match

CHAPTER = "陈守义坐在茶馆靠窗的位置，看着街上来往的行人。" * 40


@pytest.fixture(params=["sqlite", "mongo"])
def store(request, tmp_path):
    s = store_at(None, tmp_path) if request.param == "sqlite" else MongoStore(client=mongomock.MongoClient(),
                                                                                  db="fptrack_test")
    yield s
    s.close()


def engine_scores() -> dict:
    tracker = Tracker()
    tracker.add(Document("山城旧事/第一章", CHAPTER))
    (found,) = tracker.match(Document("p", "广告" + CHAPTER[:600]))
    return dict(found.scores)


def test_the_engine_counts_come_back_as_integers_and_the_shares_as_floats(store):
    scores = engine_scores()
    assert {"longest_run", "simhash_distance", "candidate_channels"} <= set(scores)
    store.upsert_match(match(scores=scores))
    kept = store.get_match("https://example.com/a/1.html", "山城旧事/第一章").scores
    for name in ("longest_run", "simhash_distance", "candidate_channels"):
        assert type(kept[name]) is int and kept[name] == scores[name]
    for name in ("winnow", "winnow_page", "minhash_containment", "simhash"):
        assert type(kept[name]) is float
    assert re.search(rf'"longest_run": {scores["longest_run"]}[,}}]', json.dumps(kept))


def test_a_whole_share_stays_a_float_and_a_count_written_as_a_float_reads_as_an_integer(store):
    store.upsert_match(match(scores={"winnow": 1, "longest_run": 4070.0, "simhash_distance": 3.0, "pinyin": 0.5}))
    kept = store.get_match("https://example.com/a/1.html", "山城旧事/第一章").scores
    assert kept == {"winnow": 1.0, "longest_run": 4070, "simhash_distance": 3, "pinyin": 0.5}
    assert type(kept["winnow"]) is float and type(kept["longest_run"]) is int
    assert json.dumps(kept) == '{"winnow": 1.0, "longest_run": 4070, "simhash_distance": 3, "pinyin": 0.5}'


def test_counts_stored_as_floats_before_this_read_as_integers(tmp_path):
    s = store_at(None, tmp_path)
    s.upsert_match(match())
    # a row as an earlier version wrote it
    s._conn.execute("UPDATE matches SET scores = ?", ('{"longest_run": 4070.0, "winnow": 1.0}',))
    assert s.get_match("https://example.com/a/1.html", "山城旧事/第一章").scores == {"longest_run": 4070, "winnow": 1.0}
    assert json.dumps(s.matches()[0].scores) == '{"longest_run": 4070, "winnow": 1.0}'
    s.close()
