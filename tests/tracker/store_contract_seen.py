"""The seen-texts part of the store contract (tracker.store.seen_texts), for every backend:
one record per exact key, read back as stored, replaced by a newer judgement; every key
listed for a new Bloom filter; the saved filter's bytes back as they went in."""
from __future__ import annotations

import pytest

from tracker.store import NotFound
from tracker.store.seen_texts import SeenText

from .store_contract import T0, at


def judgement(chapter: str = "山城旧事/第一章", **kw) -> dict:
    values = {"chapter": chapter, "similarity": 0.91, "containment": 1.0, "page_share": 0.83, "verdict": "duplicate",
              "scores": {"simhash_distance": 3, "minhash_jaccard": 0.8123, "winnow": 1.0},
              "spans": [{"page_start": 12, "page_end": 5635, "original_start": 0, "original_end": 5710}],
              "units": [[4, 5190]]}
    values.update(kw)
    return values


def seen(key: str = "0" * 32, page: str = "https://a.example/1.html", **kw) -> SeenText:
    kw.setdefault("content_hash", "ab" * 32)
    kw.setdefault("judged_under", "stamp-1")
    kw.setdefault("matches", [judgement()])
    kw.setdefault("judged_at", T0)
    return SeenText(key=key, page=page, **kw)


class SeenTextsContract:
    def test_a_seen_text_is_read_back_as_stored(self, store):
        record = seen(matches=[judgement(), judgement("山城旧事/第二章", verdict="excerpt", spans=[], units=[])])
        store.put_seen_text(record)
        assert store.get_seen_text(record.key) == record
        with pytest.raises(NotFound):
            store.get_seen_text("f" * 32)

    def test_a_text_judged_with_no_match_is_kept_too(self, store):
        store.put_seen_text(seen(matches=[]))
        assert store.get_seen_text("0" * 32).matches == []

    def test_a_newer_judgement_of_the_same_text_replaces_the_record(self, store):
        store.put_seen_text(seen())
        newer = seen(page="https://b.example/9.html", judged_under="stamp-2", matches=[], judged_at=at(5))
        store.put_seen_text(newer)
        assert store.get_seen_text(newer.key) == newer and store.count_seen_texts() == 1

    def test_every_key_is_listed_in_key_order(self, store):
        assert list(store.seen_text_keys()) == [] and store.count_seen_texts() == 0
        keys = [f"{i:032x}" for i in (7, 1, 30, 2)]
        for k in keys:
            store.put_seen_text(seen(k))
        assert list(store.seen_text_keys()) == sorted(keys) and store.count_seen_texts() == 4

    def test_a_record_without_its_page_or_stamp_or_with_half_a_match_is_refused(self, store):
        for bad in (seen(page=""), seen(judged_under=""), seen(matches=[{"chapter": "山城旧事/第一章"}])):
            with pytest.raises(ValueError):
                store.put_seen_text(bad)
        assert store.count_seen_texts() == 0

    def test_the_saved_filter_comes_back_byte_for_byte_and_is_replaced_whole(self, store):
        with pytest.raises(NotFound):
            store.seen_filter()
        big = bytes(range(256)) * (17 * 1024 * 1024 // 256) + b"\x00\xff"  # more than one 16 MB document
        store.put_seen_filter(big, 12)
        assert store.seen_filter() == (big, 12)
        store.put_seen_filter(b"FPBF\x01small", 13)
        assert store.seen_filter() == (b"FPBF\x01small", 13)
