"""The behaviour every store backend promises (tracker.store.base.Store).

A backend's test module defines a `store` fixture (a fresh, empty store) and a
class `TestXxx(StoreContract)`; pytest then runs all of these against it.
"""
from __future__ import annotations

import itertools
import json
import uuid
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.store import (
    MATCH_STATUSES,
    PAGE_STATUSES,
    Chapter,
    FingerprintRecord,
    MatchRecord,
    NotFound,
    Page,
    Work,
    content_hash,
    now,
)

T0 = datetime(2024, 5, 1, 8, 30, 0, 123000, tzinfo=UTC)
BIG = ("山城的雨下了整整一夜，" * 40_000)[: 1_000_000 // 3 + 7]  # > 1 MB in UTF-8
# The store fixture is per test, not per example: each example uses fresh keys, so examples
# cannot see each other's records. The same property runs once per backend subclass, which
# is what differing_executors would otherwise complain about.
property_settings = settings(max_examples=25, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                    HealthCheck.differing_executors])
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
keys = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def chapter(key: str = "山城旧事/第一章", text: str = "第一章 雨夜。山城的雨下了整整一夜。", **kw) -> Chapter:
    kw.setdefault("work", key.split("/", 1)[0])
    kw.setdefault("title", key.rsplit("/", 1)[-1])
    return Chapter(key=key, text=text, **kw)


def page(key: str = "https://example.com/a/1.html", text: str = "转载：山城的雨下了整整一夜。", **kw) -> Page:
    kw.setdefault("site", "example.com")
    kw.setdefault("url", key if key.startswith("http") else "")
    kw.setdefault("fetched_at", T0)
    return Page(key=key, text=text, **kw)


def match(page_key: str = "https://example.com/a/1.html", chapter_key: str = "山城旧事/第一章", **kw) -> MatchRecord:
    values = dict(work=chapter_key.split("/", 1)[0], site="example.com", similarity=0.8, containment=0.9,
                  page_share=0.7, verdict="copy", scores={"simhash": 0.75, "minhash": 0.5},
                  spans=[{"page_start": 0, "page_end": 10, "original_start": 3, "original_end": 13}])
    values.update(kw)
    return MatchRecord(page=page_key, chapter=chapter_key, **values)


def fingerprint(chapter_key: str = "山城旧事/第一章", params_hash: str = "p1", data: bytes = b"\x00\x01\xff",
                **kw) -> FingerprintRecord:
    kw.setdefault("params", {"k": 5, "bands": [4, 8], "名": "值"})
    return FingerprintRecord(chapter=chapter_key, params_hash=params_hash, data=data, **kw)


def is_aware_utc(dt: datetime) -> bool:
    return dt.tzinfo is not None and dt.utcoffset() == timedelta(0)


class StoreContract:
    # ---- works ---------------------------------------------------------------

    def test_work_round_trip(self, store):
        w = store.upsert_work(Work(id="shancheng", title="山城旧事", author="佚名", created_at=T0))
        assert w == Work(id="shancheng", title="山城旧事", author="佚名", created_at=T0)
        got = store.get_work("shancheng")
        assert got == w and is_aware_utc(got.created_at)

    def test_work_upsert_updates_title_and_author_keeps_created_at(self, store):
        store.upsert_work(Work(id="w", title="old", author="a", created_at=T0))
        w = store.upsert_work(Work(id="w", title="new", author="b", created_at=at(60)))
        assert (w.title, w.author, w.created_at) == ("new", "b", T0)
        assert store.get_work("w") == w
        assert [x.id for x in store.works()] == ["w"]

    def test_works_sorted_by_id(self, store):
        for wid in ["b", "山城", "a", "c"]:
            store.upsert_work(Work(id=wid, title=wid))
        assert [w.id for w in store.works()] == ["a", "b", "c", "山城"]

    def test_missing_work_raises_not_found(self, store):
        with pytest.raises(NotFound):
            store.get_work("nope")
        with pytest.raises(KeyError):  # NotFound is a KeyError, so `except KeyError` works too
            store.get_work("nope")

    # ---- chapters --------------------------------------------------------------

    def test_chapter_insert_sets_doc_and_hash(self, store):
        ch, changed = store.upsert_chapter(chapter(number=1, updated_at=T0))
        assert changed is True
        assert ch.doc >= 1
        assert ch.content_hash == content_hash(ch.text)
        assert store.get_chapter(ch.key) == ch
        assert store.chapter_by_doc(ch.doc) == ch
        assert ch.updated_at == T0

    def test_chapter_upsert_twice_is_once(self, store):
        first, _ = store.upsert_chapter(chapter(number=1, updated_at=T0))
        again, changed = store.upsert_chapter(chapter(number=1, updated_at=at(5)))
        assert changed is False
        assert again == first  # same doc, same updated_at: nothing changed
        assert [c.key for c in store.chapters()] == [first.key]

    def test_chapter_text_change_is_flagged_and_keeps_doc(self, store):
        first, _ = store.upsert_chapter(chapter(text="旧的文字", updated_at=T0))
        second, changed = store.upsert_chapter(chapter(text="新的文字", updated_at=at(5)))
        assert changed is True
        assert second.doc == first.doc
        assert second.text == "新的文字" and second.content_hash == content_hash("新的文字")
        assert second.updated_at == at(5)
        assert store.get_chapter(first.key) == second

    def test_chapter_title_change_updates_without_flagging_text(self, store):
        store.upsert_chapter(chapter(title="旧题", number=1, updated_at=T0))
        ch, changed = store.upsert_chapter(chapter(title="新题", number=2, updated_at=at(5)))
        assert changed is False
        assert (ch.title, ch.number, ch.updated_at) == ("新题", 2, at(5))

    def test_doc_numbers_unique_stable_and_never_reused(self, store):
        a, _ = store.upsert_chapter(chapter("w/1"))
        b, _ = store.upsert_chapter(chapter("w/2"))
        c, _ = store.upsert_chapter(chapter("w/3"))
        assert len({a.doc, b.doc, c.doc}) == 3
        assert store.upsert_chapter(chapter("w/2", text="changed"))[0].doc == b.doc
        store.delete_chapter("w/3")  # the highest number
        store.delete_chapter("w/2")
        d, _ = store.upsert_chapter(chapter("w/4"))
        b2, _ = store.upsert_chapter(chapter("w/2"))  # same key again: a new number
        assert d.doc > c.doc and b2.doc > d.doc
        assert {a.doc, b.doc, c.doc}.isdisjoint({d.doc, b2.doc})
        with pytest.raises(NotFound):
            store.chapter_by_doc(c.doc)

    def test_missing_chapter_raises_not_found(self, store):
        with pytest.raises(NotFound):
            store.get_chapter("nope")
        with pytest.raises(NotFound):
            store.chapter_by_doc(12345)

    def test_chapters_ordered_by_work_number_key_and_filtered(self, store):
        for key, number in [("b/x", 2), ("a/z", 1), ("b/y", 1), ("a/y", 1), ("b/w", None), ("a/a", 3)]:
            store.upsert_chapter(chapter(key, number=number))
        assert [c.key for c in store.chapters()] == ["a/y", "a/z", "a/a", "b/w", "b/y", "b/x"]
        assert [c.key for c in store.chapters(work="b")] == ["b/w", "b/y", "b/x"]
        assert list(store.chapters(work="none")) == []
        assert store.get_chapter("b/w").number is None

    def test_chapters_can_be_written_while_iterating(self, store):
        for i in range(30):
            store.upsert_chapter(chapter(f"w/{i:02d}", number=i))
        seen = []
        for ch in store.chapters():
            store.put_fingerprint(fingerprint(ch.key, data=ch.key.encode()))
            store.upsert_chapter(chapter(ch.key, text=ch.text + "改", number=ch.number))
            seen.append(ch.key)
        assert seen == [f"w/{i:02d}" for i in range(30)]
        assert len(list(store.fingerprints("p1"))) == 30

    def test_delete_chapter_removes_fingerprints_keeps_matches(self, store):
        store.upsert_chapter(chapter("w/1"))
        store.upsert_chapter(chapter("w/2"))
        store.put_fingerprint(fingerprint("w/1", "p1"))
        store.put_fingerprint(fingerprint("w/1", "p2"))
        store.put_fingerprint(fingerprint("w/2", "p1"))
        store.upsert_match(match("page", "w/1"))
        store.delete_chapter("w/1")
        with pytest.raises(NotFound):
            store.get_chapter("w/1")
        assert [f.chapter for f in store.fingerprints("p1")] == ["w/2"]
        assert list(store.fingerprints("p2")) == []
        assert store.get_match("page", "w/1").chapter == "w/1"
        store.delete_chapter("w/1")  # twice is fine
        store.delete_chapter("never-existed")
        assert [c.key for c in store.chapters()] == ["w/2"]

    def test_delete_work_removes_its_chapters_fingerprints_and_matches_only(self, store):
        for w in ("w", "other"):
            store.upsert_work(Work(id=w, title=w))
            store.upsert_chapter(chapter(f"{w}/1"))
            store.upsert_chapter(chapter(f"{w}/2"))
            store.put_fingerprint(fingerprint(f"{w}/1", "p1"))
            store.upsert_match(match("page", f"{w}/1"))
        docs = sorted(store.get_chapter(f"w/{n}").doc for n in (1, 2))
        assert store.delete_work("w") == docs
        with pytest.raises(NotFound):
            store.get_work("w")
        assert [c.key for c in store.chapters()] == ["other/1", "other/2"]
        assert [f.chapter for f in store.fingerprints("p1")] == ["other/1"]
        assert [m.chapter for m in store.matches()] == ["other/1"]
        with pytest.raises(NotFound):
            store.delete_work("w")  # gone: a second removal says so
        store.upsert_chapter(chapter("w/3"))  # a new chapter never takes a removed doc number
        assert store.get_chapter("w/3").doc > max(docs)

    def test_large_unicode_chapter_round_trips(self, store):
        assert len(BIG.encode("utf-8")) > 1_000_000
        ch, _ = store.upsert_chapter(chapter("长篇/第一百章", text=BIG))
        got = store.get_chapter("长篇/第一百章")
        assert got.text == BIG and got.content_hash == content_hash(BIG)
        assert store.chapter_by_doc(ch.doc).key == "长篇/第一百章"

    @property_settings
    @given(key=keys, text=texts, number=st.none() | st.integers(-(2**31), 2**31))
    def test_chapter_upsert_property(self, store, key, text, number):
        key = f"{uuid.uuid4().hex}/{key}"
        first, changed1 = store.upsert_chapter(chapter(key, text=text, number=number))
        again, changed2 = store.upsert_chapter(chapter(key, text=text, number=number, updated_at=at(9)))
        assert (changed1, changed2) == (True, False)
        assert again == first == store.get_chapter(key)
        assert (first.text, first.number) == (text, number)

    # ---- pages -------------------------------------------------------------------

    def test_page_insert_is_queued(self, store):
        p, changed = store.upsert_page(page(meta={"title": "转载", "n": 3, "ok": True, "x": 1.5},
                                            fetched_at=T0, updated_at=T0))
        assert changed is True
        assert (p.status, p.reason, p.attempts) == ("queued", "", 0)
        assert p.content_hash == content_hash(p.text)
        assert p.meta == {"title": "转载", "n": 3, "ok": True, "x": 1.5}
        assert p.fetched_at == T0 and p.updated_at == T0
        assert store.get_page(p.key) == p

    def test_page_upsert_twice_is_once_and_keeps_status(self, store):
        store.upsert_page(page(updated_at=T0))
        store.set_page_status(page().key, "done")
        done = store.get_page(page().key)
        again, changed = store.upsert_page(page(updated_at=at(60)))
        assert changed is False
        assert again == done
        assert (again.status, again.attempts) == ("done", 1)
        assert len(list(store.pages())) == 1

    def test_unchanged_page_updates_url_site_meta(self, store):
        store.upsert_page(page("k", url="http://old", site="old", meta={"a": 1}, fetched_at=T0))
        p, changed = store.upsert_page(page("k", url="http://new", site="new", meta={"b": 2}, fetched_at=at(1)))
        assert changed is False
        assert (p.url, p.site, p.meta, p.fetched_at) == ("http://new", "new", {"b": 2}, at(1))

    def test_page_validators_are_kept_and_replaced_changed_or_not(self, store):
        assert store.page_validators("nowhere") == ("", "")
        p, _ = store.upsert_page(page("k"))
        assert (p.etag, p.last_modified) == ("", "") and store.page_validators("k") == ("", "")
        lm = "Wed, 21 Oct 2026 07:28:00 GMT"
        p, changed = store.upsert_page(page("k", etag='W/"abc-1"', last_modified=lm))
        assert changed is False and (p.etag, p.last_modified) == ('W/"abc-1"', lm)
        assert store.page_validators("k") == ('W/"abc-1"', lm) and store.get_page("k") == p
        p, changed = store.upsert_page(page("k", text="新的内容", etag='"2"', meta={"made_by": "rules-1"}))
        assert changed is True and store.page_validators("k") == ('"2"', "")
        assert [x.etag for x in store.find_pages()] == ['"2"']
        # made another way (other extraction rules): no validators, the page is fetched in full again
        assert store.page_validators("k", made_by="rules-1") == ('"2"', "")
        assert store.page_validators("k", made_by="rules-2") == ("", "")
        assert store.page_validators("nowhere", made_by="rules-1") == ("", "")

    def test_changed_page_goes_back_to_queued_and_clears_reason(self, store):
        store.upsert_page(page(updated_at=T0))
        store.set_page_status(page().key, "failed", "timeout")
        p, changed = store.upsert_page(page(text="新的内容", updated_at=at(5)))
        assert changed is True
        assert (p.status, p.reason, p.attempts, p.text) == ("queued", "", 0, "新的内容")
        assert p.content_hash == content_hash("新的内容")
        assert p.updated_at == at(5)

    def test_set_page_status_counts_attempts_and_records_reason(self, store):
        store.upsert_page(page("k"))
        store.set_page_status("k", "failed", "HTTP 503")
        p = store.get_page("k")
        assert (p.status, p.reason, p.attempts) == ("failed", "HTTP 503", 1)
        store.set_page_status("k", "done")
        p = store.get_page("k")
        assert (p.status, p.reason, p.attempts) == ("done", "", 2)
        assert is_aware_utc(p.updated_at)

    def test_delete_page_removes_it_with_its_new_matches_but_not_reviewed_ones(self, store):
        for key in ("lone", "reviewed", "other"):
            store.upsert_page(page(key))
            store.upsert_match(match(key))
        store.set_match_status("reviewed", "山城旧事/第一章", "takedown-sent", by="ann")
        assert store.delete_page("lone") is True
        with pytest.raises(NotFound):
            store.get_page("lone")
        assert store.count_matches(page="lone") == 0
        assert store.delete_page("reviewed") is False  # someone acted on its match: kept, for the record
        assert store.get_page("reviewed") and store.count_matches(page="reviewed") == 1
        assert store.delete_page("missing") is False
        assert store.get_page("other") and store.count_matches(page="other") == 1

    def test_set_page_status_rejects_bad_status_and_missing_page(self, store):
        store.upsert_page(page("k"))
        with pytest.raises(ValueError) as e:
            store.set_page_status("k", "finished")
        assert "finished" in str(e.value) and all(s in str(e.value) for s in PAGE_STATUSES)
        assert store.get_page("k").attempts == 0  # a refused call changes nothing
        with pytest.raises(NotFound):
            store.set_page_status("missing", "done")
        with pytest.raises(NotFound):
            store.get_page("missing")

    def test_pages_filters_order_and_limit(self, store):
        store.upsert_page(page("c", site="s1", updated_at=at(3)))
        store.upsert_page(page("a", site="s2", updated_at=at(1)))
        store.upsert_page(page("b", site="s1", updated_at=at(2)))
        store.upsert_page(page("d", site="s1", updated_at=at(2)))
        assert [p.key for p in store.pages()] == ["a", "b", "d", "c"]
        assert [p.key for p in store.pages(site="s1")] == ["b", "d", "c"]
        assert [p.key for p in store.pages(limit=2)] == ["a", "b"]
        assert list(store.pages(limit=0)) == []
        store.set_page_status("b", "done")  # now the most recently updated
        assert [p.key for p in store.pages(status="queued")] == ["a", "d", "c"]
        assert [p.key for p in store.pages(status="done")] == ["b"]
        assert [p.key for p in store.pages(status="queued", site="s1", limit=1)] == ["d"]
        assert [p.key for p in store.pages()][-1] == "b"

    def test_pages_seen_by_are_those_of_its_sites_and_those_its_works_were_found_on(self, store):
        # "mine" crawls site s1; its work w1 was also found on p3 of s2, which someone else crawls.
        for key, site in (("p1", "s1"), ("p2", "s2"), ("p3", "s2"), ("p4", "s3")):
            store.upsert_page(page(key, site=site, url=f"https://x.example/{key}"))
        store.upsert_match(match("p3", "w1/c1", work="w1", site="s2"))
        store.upsert_match(match("p2", "w2/c1", work="w2", site="s2"))
        store.upsert_match(match("p4", "w2/c1", work="w2", site="s3"))
        store.set_page_status("p3", "failed", "gone")
        mine = (["s1"], ["w1"])
        assert sorted(p.key for p in store.find_pages(seen_by=mine, limit=None)) == ["p1", "p3"]
        assert [p.key for p in store.find_pages(site=["s2"], seen_by=mine)] == ["p3"]
        assert store.count_pages(seen_by=mine) == 2 and store.count_pages(seen_by=mine, status="failed") == 1
        assert store.count_pages(url_contains="p", seen_by=(["s1"], [])) == 1
        assert store.count_pages(seen_by=([], [])) == 0
        summary = {(r["site"], r["status"]): r["pages"] for r in store.page_summary(["site", "status"], seen_by=mine)}
        assert summary == {("s1", "queued"): 1, ("s2", "failed"): 1}
        assert {r["site"]: r["pages"] for r in store.page_summary(["site"], seen_by=(["s2"], ["w2"]))} == {
            "s2": 2, "s3": 1}

    def test_pages_bad_status_filter_raises(self, store):
        with pytest.raises(ValueError, match="queued, done, failed"):
            store.pages(status="nope")

    def test_pages_can_be_updated_while_iterating(self, store):
        for i in range(25):
            store.upsert_page(page(f"p{i:02d}", updated_at=at(i)))
        done = []
        for p in store.pages(status="queued"):
            store.set_page_status(p.key, "done")
            done.append(p.key)
        assert done == [f"p{i:02d}" for i in range(25)]
        assert store.counts()["pages"] == {"queued": 0, "done": 25, "failed": 0}

    def test_failures_most_recent_first_with_reasons(self, store):
        for key in ["a", "b", "c", "d"]:
            store.upsert_page(page(key))
        store.set_page_status("b", "failed", "first")
        store.set_page_status("d", "done")
        store.set_page_status("a", "failed", "second")
        store.set_page_status("c", "failed", "third")
        fails = store.failures()
        assert len(fails) == 3 and all(p.status == "failed" for p in fails)
        assert [p.updated_at for p in fails] == sorted([p.updated_at for p in fails], reverse=True)
        assert {p.key: p.reason for p in fails} == {"a": "second", "b": "first", "c": "third"}
        assert len(store.failures(limit=2)) == 2
        assert store.failures(limit=2) == fails[:2]

    def test_failures_order_follows_update_time(self, store):
        # Times far apart, set through upsert + status: the newest failure comes first.
        import time

        for key in ["x", "y", "z"]:
            store.upsert_page(page(key))
        for key in ["y", "z", "x"]:
            store.set_page_status(key, "failed", f"broke {key}")
            time.sleep(0.003)  # now() has millisecond resolution
        assert [p.key for p in store.failures()] == ["x", "z", "y"]
        assert [p.key for p in store.failures(limit=1)] == ["x"]

    def test_large_unicode_page_round_trips(self, store):
        p, _ = store.upsert_page(page("https://例子.中国/小说/第1章.html", text=BIG))
        assert store.get_page(p.key).text == BIG
        assert store.upsert_page(page("https://例子.中国/小说/第1章.html", text=BIG))[1] is False

    @property_settings
    @given(key=keys, text=texts, site=st.text(max_size=10),
           meta=st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="$.\x00"),
                                        min_size=1, max_size=8),
                                st.one_of(st.text(max_size=10), st.integers(-(2**53), 2**53), st.booleans()),
                                max_size=4))
    def test_page_upsert_property(self, store, key, text, site, meta):
        key = f"{uuid.uuid4().hex}:{key}"
        first, changed1 = store.upsert_page(page(key, text=text, site=site, meta=meta, fetched_at=T0))
        again, changed2 = store.upsert_page(page(key, text=text, site=site, meta=meta, fetched_at=T0,
                                                 updated_at=at(9)))
        assert (changed1, changed2) == (True, False)
        assert again == first == store.get_page(key)
        assert (first.text, first.site, first.meta, first.status) == (text, site, meta, "queued")

    # ---- fingerprints --------------------------------------------------------------

    def test_fingerprint_bytes_round_trip_exactly(self, store):
        data = bytes(range(256)) * 40 + b"\x00" * 10
        store.put_fingerprint(fingerprint("w/1", "p1", data=data, created_at=T0))
        [got] = list(store.fingerprints("p1"))
        assert got == fingerprint("w/1", "p1", data=data, created_at=T0)
        assert type(got.data) is bytes and got.data == data

    def test_fingerprint_put_replaces_same_chapter_and_params(self, store):
        store.put_fingerprint(fingerprint("w/1", "p1", data=b"old", params={"v": 1}))
        store.put_fingerprint(fingerprint("w/1", "p1", data=b"new", params={"v": 2}))
        store.put_fingerprint(fingerprint("w/1", "p2", data=b"other"))
        got = list(store.fingerprints("p1"))
        assert [(f.chapter, f.data, f.params) for f in got] == [("w/1", b"new", {"v": 2})]
        assert [f.data for f in store.fingerprints("p2")] == [b"other"]
        assert list(store.fingerprints("p3")) == []

    def test_fingerprints_by_chapter(self, store):
        for key in ["w/3", "w/1", "其他/1", "w/2"]:
            store.put_fingerprint(fingerprint(key, "p"))
        assert [f.chapter for f in store.fingerprints("p")] == sorted(["w/3", "w/1", "其他/1", "w/2"])

    @property_settings
    @given(data=st.binary(max_size=4096))
    def test_fingerprint_bytes_property(self, store, data):
        key = uuid.uuid4().hex
        store.put_fingerprint(fingerprint(key, key, data=data))
        store.put_fingerprint(fingerprint(key, key, data=data))
        assert [f.data for f in store.fingerprints(key)] == [data]

    # ---- matches -------------------------------------------------------------------

    def test_match_insert_round_trip(self, store):
        m = store.upsert_match(match(first_seen=T0, last_seen=T0))
        assert m == match(first_seen=T0, last_seen=T0)
        assert (m.status, m.history) == ("new", [])
        assert store.get_match(m.page, m.chapter) == m
        assert is_aware_utc(m.first_seen) and is_aware_utc(m.last_seen)

    def test_match_upsert_twice_keeps_first_seen_status_history(self, store):
        store.upsert_match(match(first_seen=T0, last_seen=T0))
        store.set_match_status(match().page, match().chapter, "confirmed", by="editor")
        m = store.upsert_match(match(containment=0.5, similarity=0.4, verdict="partial", scores={"simhash": 0.1},
                                     spans=[], first_seen=at(10), last_seen=at(10)))
        assert m.first_seen == T0 and m.last_seen == at(10)
        assert m.status == "confirmed" and [h["status"] for h in m.history] == ["confirmed"]
        assert (m.containment, m.similarity, m.verdict, m.scores, m.spans) == (0.5, 0.4, "partial",
                                                                               {"simhash": 0.1}, [])
        assert store.get_match(m.page, m.chapter) == m
        assert len(store.matches()) == 1

    def test_match_history_given_on_insert_round_trips(self, store):
        history = [{"status": "new", "by": "importer", "at": T0, "note": "从旧系统导入"}]
        m = store.upsert_match(match(history=history))
        assert m.history == history and is_aware_utc(m.history[0]["at"])
        assert store.get_match(m.page, m.chapter).history == history

    def test_match_last_seen_never_goes_back(self, store):
        store.upsert_match(match(first_seen=T0, last_seen=at(10)))
        m = store.upsert_match(match(first_seen=T0, last_seen=at(1), containment=0.1))
        assert m.last_seen == at(10) and m.containment == 0.1

    def test_match_accepts_numpy_numbers(self, store):
        m = store.upsert_match(match(similarity=np.float32(0.5), containment=np.float64(0.25),
                                     scores={"simhash": np.float32(0.5)},
                                     spans=[{"page_start": np.int64(1), "page_end": np.int32(2),
                                             "original_start": 3, "original_end": 4}]))
        got = store.get_match(m.page, m.chapter)
        assert (got.similarity, got.containment, got.scores) == (0.5, 0.25, {"simhash": 0.5})
        assert got.spans == [{"page_start": 1, "page_end": 2, "original_start": 3, "original_end": 4}]
        assert all(type(v) is int for v in got.spans[0].values())

    def test_match_bad_initial_status_raises(self, store):
        with pytest.raises(ValueError, match="takedown-sent"):
            store.upsert_match(match(status="bogus"))
        assert store.matches() == []

    def test_missing_match_raises_not_found(self, store):
        store.upsert_match(match("p", "c"))
        with pytest.raises(NotFound):
            store.get_match("p", "other")
        with pytest.raises(NotFound):
            store.get_match("other", "c")
        with pytest.raises(NotFound):
            store.set_match_status("p", "other", "confirmed")

    def test_set_match_status_appends_history(self, store):
        store.upsert_match(match("p", "c"))
        before = now()
        m = store.set_match_status("p", "c", "confirmed", by="张编辑")
        m = store.set_match_status("p", "c", "takedown-sent", by="bot")
        assert m.status == "takedown-sent"
        assert [(h["status"], h["by"]) for h in m.history] == [("confirmed", "张编辑"), ("takedown-sent", "bot")]
        stamps = [datetime.fromisoformat(h["at"]) for h in m.history]  # ISO text: history stays plain JSON
        assert all(is_aware_utc(t) and t >= before for t in stamps)
        assert stamps == sorted(stamps)
        json.dumps(m.history)
        assert store.get_match("p", "c") == m

    def test_set_match_status_same_status_twice_is_once(self, store):
        store.upsert_match(match("p", "c"))
        once = store.set_match_status("p", "c", "dismissed", by="a")
        twice = store.set_match_status("p", "c", "dismissed", by="a")
        assert twice == once and len(twice.history) == 1

    def test_set_match_status_rejects_bad_status(self, store):
        store.upsert_match(match("p", "c"))
        with pytest.raises(ValueError) as e:
            store.set_match_status("p", "c", "deleted")
        assert "deleted" in str(e.value) and all(s in str(e.value) for s in MATCH_STATUSES)
        assert store.get_match("p", "c").history == []

    def test_matches_order_most_contained_then_page_then_chapter(self, store):
        for p, c, cont in [("p2", "c1", 0.5), ("p1", "c2", 0.9), ("p1", "c1", 0.5), ("p2", "c0", 0.5),
                           ("p0", "c9", 0.1)]:
            store.upsert_match(match(p, c, containment=cont))
        assert [(m.page, m.chapter) for m in store.matches()] == [
            ("p1", "c2"), ("p1", "c1"), ("p2", "c0"), ("p2", "c1"), ("p0", "c9")]

    def test_matches_filters(self, store):
        store.upsert_match(match("p1", "w1/a", site="s1", containment=0.9))
        store.upsert_match(match("p1", "w2/a", site="s1", containment=0.8))
        store.upsert_match(match("p2", "w1/b", site="s2", containment=0.7))
        store.upsert_match(match("p3", "w1/a", site="s2", containment=0.6))
        store.set_match_status("p2", "w1/b", "confirmed")
        pairs = lambda ms: [(m.page, m.chapter) for m in ms]  # noqa: E731
        assert pairs(store.matches(work="w1")) == [("p1", "w1/a"), ("p2", "w1/b"), ("p3", "w1/a")]
        assert pairs(store.matches(page="p1")) == [("p1", "w1/a"), ("p1", "w2/a")]
        assert pairs(store.matches(site="s2")) == [("p2", "w1/b"), ("p3", "w1/a")]
        assert pairs(store.matches(status="confirmed")) == [("p2", "w1/b")]
        assert pairs(store.matches(status="new", work="w1", site="s2")) == [("p3", "w1/a")]
        assert store.matches(work="w3") == []
        with pytest.raises(ValueError, match="dismissed"):
            store.matches(status="open")

    def test_matches_pagination(self, store):
        for i in range(23):
            store.upsert_match(match(f"p{i:02d}", "w/c", containment=(i % 5) / 5))
        everything = store.matches()
        assert len(everything) == 23
        pages = [store.matches(limit=5, offset=o) for o in range(0, 25, 5)]
        assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
        assert list(itertools.chain.from_iterable(pages)) == everything
        assert store.matches(limit=0) == []
        assert store.matches(offset=21) == everything[21:]
        assert store.matches(offset=100) == []
        with pytest.raises(ValueError):
            store.matches(limit=-1)
        with pytest.raises(ValueError):
            store.matches(offset=-1)

    @property_settings
    @given(page_key=keys, chapter_key=keys, containment=st.floats(0, 1), verdict=st.text(max_size=10))
    def test_match_upsert_property(self, store, page_key, chapter_key, containment, verdict):
        page_key = f"{uuid.uuid4().hex}{page_key}"
        record = match(page_key, chapter_key, containment=containment, verdict=verdict)
        first = store.upsert_match(record)
        again = store.upsert_match(record)
        assert again == first == store.get_match(page_key, chapter_key)
        assert len(store.matches(page=page_key)) == 1

    # ---- reports -------------------------------------------------------------------

    def test_counts_of_empty_store(self, store):
        assert store.counts() == {
            "works": 0, "chapters": 0,
            "pages": {"queued": 0, "done": 0, "failed": 0},
            "matches": {"new": 0, "confirmed": 0, "dismissed": 0, "takedown-sent": 0, "removed": 0},
            "images": {"registered": 0, "found": {"queued": 0, "done": 0, "failed": 0},
                       "matches": {"new": 0, "confirmed": 0, "dismissed": 0, "takedown-sent": 0, "removed": 0}},
        }

    def test_counts(self, store):
        store.upsert_work(Work(id="w", title="t"))
        store.upsert_work(Work(id="w", title="t2"))
        for i in range(3):
            store.upsert_chapter(chapter(f"w/{i}"))
        store.upsert_chapter(chapter("w/0"))
        for key in ["a", "b", "c", "d"]:
            store.upsert_page(page(key))
        store.set_page_status("a", "done")
        store.set_page_status("b", "failed", "x")
        store.set_page_status("c", "done")
        for i in range(4):
            store.upsert_match(match(f"p{i}", "w/0"))
        store.upsert_match(match("p0", "w/0"))
        store.set_match_status("p1", "w/0", "confirmed")
        store.set_match_status("p2", "w/0", "removed")
        assert store.counts() == {
            "works": 1, "chapters": 3,
            "pages": {"queued": 1, "done": 2, "failed": 1},
            "matches": {"new": 2, "confirmed": 1, "dismissed": 0, "takedown-sent": 0, "removed": 1},
            "images": {"registered": 0, "found": {"queued": 0, "done": 0, "failed": 0},
                       "matches": {"new": 0, "confirmed": 0, "dismissed": 0, "takedown-sent": 0, "removed": 0}},
        }

    # ---- datetimes -------------------------------------------------------------------

    def test_datetimes_come_back_equal_and_utc(self, store):
        beijing = timezone(timedelta(hours=8))
        local = datetime(2024, 5, 1, 16, 30, 0, 123000, tzinfo=beijing)
        w = store.upsert_work(Work(id="tz", title="t", created_at=local))
        assert w.created_at == local == T0 and w.created_at.utcoffset() == timedelta(0)
        store.upsert_page(page("tz", fetched_at=local, updated_at=local))
        assert store.get_page("tz").fetched_at == T0

    def test_datetimes_kept_to_the_millisecond(self, store):
        fine = datetime(2024, 5, 1, 8, 30, 0, 123456, tzinfo=UTC)
        w = store.upsert_work(Work(id="ms", title="t", created_at=fine))
        assert w.created_at == fine.replace(microsecond=123000)
        assert now().microsecond % 1000 == 0  # what callers normally pass is stored exactly


class ReportContract:
    """Sites, crawl runs, users, and the queries the admin pages are built on."""

    @staticmethod
    def _fill(store) -> None:
        # Site a copies 3 chapters of work W (one of them twice, on two pages), site b one chapter of V.
        rows = [("https://a.com/1", "W/1", "a.com", 0.9, at(0)), ("https://a.com/2", "W/2", "a.com", 0.5, at(60 * 24)),
                ("https://a.com/3", "W/3", "a.com", 0.7, at(60 * 24 + 5)), ("https://a.com/1b", "W/1", "a.com", 0.6, at(1)),
                ("https://b.org/x", "V/1", "b.org", 0.8, at(2))]
        for p, c, site, cont, seen in rows:
            store.upsert_match(match(p, c, site=site, containment=cont, similarity=cont / 2, first_seen=seen,
                                     last_seen=seen + timedelta(hours=1)))
        store.set_match_status("https://a.com/2", "W/2", "confirmed", by="ann")

    def test_sort_and_filter_matches(self, store):
        self._fill(store)
        assert [m.containment for m in store.matches()] == [0.9, 0.8, 0.7, 0.6, 0.5]
        assert [m.containment for m in store.matches(sort="containment")] == [0.5, 0.6, 0.7, 0.8, 0.9]
        assert [m.page for m in store.matches(sort="-first_seen", limit=2)] == ["https://a.com/3", "https://a.com/2"]
        assert [m.page for m in store.matches(sort="site", work="W", offset=1, limit=2)] == [
            "https://a.com/1b", "https://a.com/2"]  # ties broken by page
        assert [m.page for m in store.matches(chapter="W/1")] == ["https://a.com/1", "https://a.com/1b"]
        with pytest.raises(ValueError, match="cannot sort by"):
            store.matches(sort="-password")

    def test_count_matches_agrees_with_matches(self, store):
        self._fill(store)
        for filters in ({}, {"work": "W"}, {"site": "b.org"}, {"status": "confirmed"}, {"chapter": "W/1"},
                        {"work": "W", "status": "new"}, {"work": "nothing"}):
            assert store.count_matches(**filters) == len(store.matches(**filters)), filters
        with pytest.raises(ValueError, match="unknown match status"):
            store.count_matches(status="gone")

    def test_match_summary_by_site_within_a_work(self, store):
        self._fill(store)
        rows = store.match_summary(["site"], work="W")
        assert len(rows) == 1
        r = rows[0]
        assert (r["site"], r["matches"], r["pages"], r["chapters"]) == ("a.com", 4, 4, 3)
        assert r["first_seen"] == at(0) and r["last_seen"] == at(60 * 24 + 5) + timedelta(hours=1)
        assert is_aware_utc(r["first_seen"])

    def test_match_summary_orders_by_matches_then_fields(self, store):
        self._fill(store)
        rows = store.match_summary(["work", "chapter"])
        assert [(r["work"], r["chapter"], r["matches"]) for r in rows] == [
            ("W", "W/1", 2), ("V", "V/1", 1), ("W", "W/2", 1), ("W", "W/3", 1)]
        assert {(r["site"], r["status"]): r["matches"] for r in store.match_summary(["site", "status"])} == {
            ("a.com", "new"): 3, ("a.com", "confirmed"): 1, ("b.org", "new"): 1}

    def test_match_summary_by_day(self, store):
        self._fill(store)
        days = {r["day"]: r["matches"] for r in store.match_summary(["day"])}
        assert days == {"2024-05-01": 3, "2024-05-02": 2}
        assert store.match_summary(["day"], status="confirmed")[0]["day"] == "2024-05-02"

    def test_match_summary_checks_fields(self, store):
        for bad in ([], ["password"], ["site", "site"]):
            with pytest.raises(ValueError):
                store.match_summary(bad)

    def test_find_and_count_pages(self, store):
        for i, (site, minute) in enumerate([("a.com", 3), ("a.com", 1), ("b.org", 2)]):
            store.upsert_page(page(f"https://{site}/p_{i}%", site=site, fetched_at=at(minute)))
        store.upsert_page(page("local-file.txt", site="", fetched_at=at(9)))
        store.set_page_status("https://a.com/p_1%", "failed", "no text")
        assert [p.key for p in store.find_pages(limit=3)] == ["local-file.txt", "https://a.com/p_0%",
                                                             "https://b.org/p_2%"]
        assert [p.key for p in store.find_pages(site="a.com", offset=1)] == ["https://a.com/p_1%"]
        assert [p.key for p in store.find_pages(status="failed")] == ["https://a.com/p_1%"]
        # url_contains is a plain substring: % and _ are not wildcards
        assert {p.key for p in store.find_pages(url_contains="p_1%")} == {"https://a.com/p_1%"}
        assert store.find_pages(url_contains="p_x") == []
        assert store.count_pages() == 4
        assert store.count_pages(site="a.com") == 2
        assert store.count_pages(url_contains="b.org/") == 1
        assert store.count_pages(status="failed", site="b.org") == 0
        assert store.find_pages(limit=0) == []

    def test_page_summary(self, store):
        for i, site in enumerate(["a.com", "a.com", "b.org"]):
            store.upsert_page(page(f"https://{site}/{i}", site=site, fetched_at=at(i)))
        store.set_page_status("https://a.com/0", "done")
        rows = store.page_summary(["site"])
        assert [(r["site"], r["pages"]) for r in rows] == [("a.com", 2), ("b.org", 1)]
        assert rows[0]["last_fetched"] == at(1)
        assert {(r["site"], r["status"]): r["pages"] for r in store.page_summary(["site", "status"])} == {
            ("a.com", "done"): 1, ("a.com", "queued"): 1, ("b.org", "queued"): 1}

    def test_sites(self, store):
        from tracker.store import Site

        rules = {"content": "#content", "delay": 1.5, "follow": [r"/book/\d+/"]}
        s = store.upsert_site(Site(name="biquge", start_urls=["https://biquge.test/"], rules=rules,
                                   created_at=at(0), updated_at=at(0)))
        assert (s.name, s.start_urls, s.rules, s.recrawl, s.created_at) == (
            "biquge", ["https://biquge.test/"], rules, True, at(0))
        store.upsert_site(Site(name="biquge", start_urls=["https://biquge.test/a", "https://biquge.test/b"],
                               recrawl=False, created_at=at(5), updated_at=at(5)))
        s = store.get_site("biquge")
        assert (s.start_urls, s.rules, s.recrawl, s.created_at, s.updated_at) == (
            ["https://biquge.test/a", "https://biquge.test/b"], {}, False, at(0), at(5))
        store.upsert_site(Site(name="a-site", start_urls=["https://a.test/"]))
        assert [x.name for x in store.sites()] == ["a-site", "biquge"]
        store.delete_site("biquge")
        with pytest.raises(NotFound):
            store.get_site("biquge")
        with pytest.raises(NotFound):
            store.delete_site("biquge")

    def test_crawl_runs(self, store):
        from tracker.store import CrawlRun

        reasons = {"robots.txt forbids it": 2, "HTTP 404": 1, "not HTML (image/png; charset=x.y)": 1}
        r1 = store.add_crawl_run(CrawlRun(site="a.com", started_at=at(0), finished_at=at(3), outcome="finished",
                                          counts={"fetched": 10, "stored": 7}, skipped=reasons,
                                          failed={"timeout": 1}, job="a.com"))
        r2 = store.add_crawl_run(CrawlRun(site="b.org", started_at=at(5), finished_at=at(6), outcome="shutdown"))
        r3 = store.add_crawl_run(CrawlRun(site="a.com", started_at=at(10), finished_at=at(12), outcome="finished"))
        assert len({r1.id, r2.id, r3.id}) == 3 and all(r.id > 0 for r in (r1, r2, r3))
        assert [r.id for r in store.crawl_runs()] == [r3.id, r2.id, r1.id]
        got = store.crawl_runs(site="a.com", limit=5)
        assert [r.id for r in got] == [r3.id, r1.id]
        old = got[1]
        assert (old.counts, old.skipped, old.failed, old.job, old.outcome) == (
            {"fetched": 10, "stored": 7}, reasons, {"timeout": 1}, "a.com", "finished")
        assert old.started_at == at(0) and is_aware_utc(old.finished_at)
        assert store.crawl_runs(limit=1)[0].id == r3.id

    def test_users(self, store):
        from tracker.store import User

        u = store.upsert_user(User(name="ann", password_hash="pbkdf2:x", role="admin", created_at=at(0)))
        assert (u.name, u.role, u.failed_logins, u.locked_until, u.created_at) == ("ann", "admin", 0, None, at(0))
        store.upsert_user(User(name="ann", password_hash="pbkdf2:y", role="viewer", failed_logins=3,
                               locked_until=at(15), created_at=at(9)))
        u = store.get_user("ann")
        assert (u.password_hash, u.role, u.failed_logins, u.locked_until, u.created_at) == (
            "pbkdf2:y", "viewer", 3, at(15), at(0))
        store.upsert_user(User(name="bob", password_hash="h"))
        assert [x.name for x in store.users()] == ["ann", "bob"]
        with pytest.raises(ValueError, match="unknown role"):
            store.upsert_user(User(name="eve", password_hash="h", role="root"))
        store.delete_user("bob")
        with pytest.raises(NotFound):
            store.get_user("bob")
        with pytest.raises(NotFound):
            store.delete_user("bob")

    def test_status_filters_take_several_statuses(self, store):
        self._fill(store)
        store.set_match_status("https://b.org/x", "V/1", "dismissed", by="ann")
        active = ["new", "confirmed", "takedown-sent", "removed"]
        assert store.count_matches(status=active) == 4
        assert {m.page for m in store.matches(status=["confirmed", "dismissed"])} == {
            "https://a.com/2", "https://b.org/x"}
        rows = store.match_summary(["work"], status=active)
        assert [(r["work"], r["matches"], r["pages"], r["chapters"]) for r in rows] == [("W", 4, 4, 3)]
        with pytest.raises(ValueError, match="unknown match status"):
            store.count_matches(status=["new", "gone"])
        with pytest.raises(ValueError, match="at least one"):
            store.matches(status=[])

    def test_record_login_counts_failures_and_locks(self, store):
        from tracker.store import User

        store.upsert_user(User(name="ann", password_hash="h", role="admin"))
        lock = timedelta(minutes=15)
        for n in (1, 2):
            u = store.record_login("ann", False, max_failures=3, lock_for=lock, at=at(n))
            assert (u.failed_logins, u.locked_until) == (n, None)
        u = store.record_login("ann", False, max_failures=3, lock_for=lock, at=at(3))
        assert (u.failed_logins, u.locked_until) == (3, at(3) + lock)
        u = store.record_login("ann", False, max_failures=3, lock_for=lock, at=at(4))
        assert (u.failed_logins, u.locked_until) == (4, at(3) + lock)  # the lock stays as it was
        assert u.last_login is None  # failures are no sign-in
        u = store.record_login("ann", True, max_failures=3, lock_for=lock, at=at(5))
        assert (u.failed_logins, u.locked_until, u.password_hash, u.last_login) == (0, None, "h", at(5))
        assert is_aware_utc(store.get_user("ann").last_login)
        store.record_login("ann", False, max_failures=3, lock_for=lock, at=at(6))
        u = store.upsert_user(User(name="ann", password_hash="h2", role="admin"))  # keeps it too
        assert (u.last_login, store.get_user("ann").last_login, u.failed_logins) == (at(5), at(5), 0)
        with pytest.raises(NotFound):
            store.record_login("nobody", False, max_failures=3, lock_for=lock)

    def test_sessions_round_trip_and_end(self, store):
        from tracker.store import UserSession

        s = store.add_session(UserSession(id="h1", user="ann", created_at=at(0), last_seen=at(1), stamp="st"))
        assert (s.id, s.user, s.created_at, s.last_seen, s.stamp) == ("h1", "ann", at(0), at(1), "st")
        assert store.get_session("h1") == s and is_aware_utc(store.get_session("h1").last_seen)
        store.add_session(UserSession(id="h2", user="ann", created_at=at(2), last_seen=at(2)))
        store.add_session(UserSession(id="h3", user="bob", created_at=at(1), last_seen=at(1)))
        assert [x.id for x in store.sessions()] == ["h1", "h3", "h2"]
        assert [x.id for x in store.sessions(user="ann")] == ["h1", "h2"]
        store.touch_session("h1", at(5))
        assert store.get_session("h1").last_seen == at(5) and store.get_session("h1").created_at == at(0)
        store.delete_session("h1")
        store.delete_session("h1")  # twice is once
        with pytest.raises(NotFound):
            store.get_session("h1")
        store.touch_session("h1", at(6))  # an ended session is never brought back
        with pytest.raises(NotFound):
            store.get_session("h1")
        assert store.delete_sessions("ann") == 1 and store.delete_sessions("ann") == 0
        assert [x.id for x in store.sessions()] == ["h3"]

    def test_sessions_of_a_user_end_together_and_others_stay(self, store):
        from tracker.store import UserSession

        for i, user in enumerate(("ann", "ann", "bob", "ann")):
            store.add_session(UserSession(id=f"s{i}", user=user, created_at=at(i), last_seen=at(i)))
        assert store.delete_sessions("ann") == 3
        assert [(x.id, x.user) for x in store.sessions()] == [("s2", "bob")]
        assert store.delete_sessions("nobody") == 0

    def test_purge_sessions_drops_idle_and_old_ones(self, store):
        from tracker.store import UserSession

        store.add_session(UserSession(id="idle", user="ann", created_at=at(50), last_seen=at(55)))
        store.add_session(UserSession(id="old", user="ann", created_at=at(0), last_seen=at(90)))
        store.add_session(UserSession(id="live", user="ann", created_at=at(50), last_seen=at(70)))
        store.add_session(UserSession(id="edge", user="bob", created_at=at(10), last_seen=at(60)))
        assert store.purge_sessions(seen_before=at(60), created_before=at(10)) == 2
        assert [x.id for x in store.sessions()] == ["edge", "live"]  # exactly at the limits: kept
        assert store.purge_sessions(seen_before=at(60), created_before=at(10)) == 0

    def test_chapter_headers_and_counts_leave_the_texts_out(self, store):
        store.upsert_chapter(chapter("B/2", text="乙" * 50, number=2))
        store.upsert_chapter(chapter("B/1", text="甲" * 50, number=1))
        store.upsert_chapter(chapter("A/9", text="丙" * 50, number=9))
        heads = store.chapter_headers()
        full = list(store.chapters())
        assert [h.key for h in heads] == [c.key for c in full] == ["A/9", "B/1", "B/2"]
        assert all(h.text == "" for h in heads)
        assert [(h.title, h.number, h.doc, h.content_hash) for h in heads] == [
            (c.title, c.number, c.doc, c.content_hash) for c in full]
        assert [h.key for h in store.chapter_headers(work="B")] == ["B/1", "B/2"]
        assert (store.count_chapters(), store.count_chapters(work="B"), store.count_chapters(work="Z")) == (3, 2, 0)

    def test_the_catalog_stamp_moves_with_every_change_to_the_chapters(self, store):
        assert store.catalog_stamp() == (0, "")
        store.upsert_chapter(chapter("A/1", text="一", updated_at=at(1)))
        store.upsert_chapter(chapter("A/2", text="二", updated_at=at(2)))
        added = store.catalog_stamp()
        assert added[0] == 2 and added[1].startswith("2024-05-01T08:32")
        store.upsert_chapter(chapter("A/1", text="一", updated_at=at(3)))  # the same text: nothing changed
        assert store.catalog_stamp() == added
        store.upsert_chapter(chapter("A/1", text="一改", updated_at=at(4)))  # a new edition, the same count
        edited = store.catalog_stamp()
        assert edited[0] == 2 and edited != added
        store.delete_chapter("A/2")
        assert store.catalog_stamp()[0] == 1
