"""The "seen this text before?" gate of page processing (tracker.seen), on the SQLite store, on a
MongoDB store (mongomock) and with the index and the filter in Redis: a mirror of a page judged
before gets that judgement by lookup, on its own site and with spans on its own text; a
judgement made before chapters were registered, or with other settings, is made again; a false
positive of the filter, a failed page and another chapter never lend a judgement; the filter
outlives the process, or is built again from the stored keys."""
from __future__ import annotations

import mongomock
import pytest

from fingerprint.normalize import normalize
from fingerprint.textkeys import exact_key
from tracker.context import Context
from tracker.pipeline import process_page
from tracker.registry import register_work
from tracker.seen import RedisFilter, StoreFilter
from tracker.settings import Settings
from tracker.store import Page
from tracker.store.mongo import MongoStore

from ..conftest import redis_settings_for, redis_url
from .conftest import SAMPLES

CHAPTER_3 = (SAMPLES / "pages" / "tw-3.txt").read_text(encoding="utf-8")
CHAPTER_2 = (SAMPLES / "pages" / "wap-2-p1.txt").read_text(encoding="utf-8") + "\n" + \
    (SAMPLES / "pages" / "wap-2-p2.txt").read_text(encoding="utf-8")
BACKENDS = ["sqlite", "mongo", "redis"]


def mirrored(text: str, domain: str) -> str:
    """The text as another site serves it: its watermarks and ad lines around and inside it."""
    lines = text.split("\n")
    lines.insert(1, f"天才一秒记住本站地址：{domain}")
    lines.insert(len(lines) // 2, f"    最新章节请访问m.{domain}")
    return "\n".join(lines) + f"\n手机用户请浏览{domain}阅读，更优质的阅读体验。"


@pytest.fixture(params=BACKENDS)
def contexts(request, tmp_path, monkeypatch):
    """open() gives a Context on one store (a new one per call: a process started again)."""
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG", "FPT_SEEN_TEXTS"):
        monkeypatch.delenv(var, raising=False)
    opened, cleanup = [], None
    if request.param == "redis":
        settings, cleanup = redis_settings_for(redis_url(14), tmp_path / "home", monkeypatch)
    else:
        settings = Settings.load({"FPT_HOME": str(tmp_path / "home")})
    client = mongomock.MongoClient()

    def open_(**changes) -> Context:
        s = settings._with(changes) if changes else settings
        store = MongoStore(client=client, db="fpt_seen") if request.param == "mongo" else None
        ctx = Context(s, store=store)
        opened.append(ctx)
        return ctx

    open_.backend = request.param
    yield open_
    for ctx in opened:
        ctx.close()
    if cleanup:
        cleanup()


def put(ctx: Context, key: str, text: str, site: str) -> None:
    ctx.store.upsert_page(Page(key=key, text=text, url=key, site=site))


def judged(ctx: Context, key: str):
    return {(m.chapter, m.verdict, m.similarity, m.containment, m.page_share, tuple(sorted(m.scores.items())))
            for m in ctx.store.matches(page=key)}


def no_judging(ctx: Context, monkeypatch) -> None:
    def refuse(prepared):
        raise AssertionError(f"{prepared.key} was judged again")

    monkeypatch.setattr(ctx.tracker, "match", refuse)


def test_a_mirror_gets_the_judgement_by_lookup_on_its_own_site_and_text(contexts, monkeypatch):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "https://a.example/3.html", CHAPTER_3, "a.example")
    first = process_page(ctx, "https://a.example/3.html")
    assert first.status == "done" and not first.looked_up and first.matches
    mirror_text = mirrored(CHAPTER_3, "www.b-fake.com")
    assert exact_key(mirror_text) == exact_key(CHAPTER_3) and mirror_text != CHAPTER_3
    put(ctx, "https://b.example/3.html", mirror_text, "b.example")
    mirror = ctx.tracker.prepare(_doc("https://b.example/3.html", mirror_text))
    full = {m.original: m for m in ctx.tracker.match(mirror)}  # what judging the mirror itself gives
    no_judging(ctx, monkeypatch)
    second = process_page(ctx, "https://b.example/3.html")
    assert second.status == "done" and second.looked_up
    assert judged(ctx, "https://b.example/3.html") == judged(ctx, "https://a.example/3.html")
    for m in ctx.store.matches(page="https://b.example/3.html"):
        original = ctx.store.get_match("https://a.example/3.html", m.chapter)
        assert m.site == "b.example" and m.status == "new" and m.first_seen >= original.first_seen
        # The spans are where a judgement of the mirror itself puts them, on the mirror's text.
        assert m.spans == [vars(s) for s in full[m.chapter].spans] and m.spans != original.spans
        for here, there in zip(m.spans, original.spans):
            assert normalize(mirror_text[here["page_start"]:here["page_end"]]).canonical == \
                normalize(CHAPTER_3[there["page_start"]:there["page_end"]]).canonical


def _doc(key: str, text: str):
    from fingerprint.models import Document

    return Document(key, text)


def test_the_same_text_on_another_page_gets_the_very_same_spans(contexts, monkeypatch):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "p1", CHAPTER_3, "a.example")
    process_page(ctx, "p1")
    put(ctx, "p2", CHAPTER_3, "c.example")
    no_judging(ctx, monkeypatch)
    assert process_page(ctx, "p2").looked_up
    assert [(m.chapter, m.spans) for m in ctx.store.matches(page="p2")] == \
        [(m.chapter, m.spans) for m in ctx.store.matches(page="p1")]


def test_chapters_registered_since_make_the_judgement_stale(contexts, tmp_path):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "p1", CHAPTER_2, "a.example")
    assert not process_page(ctx, "p1").looked_up
    # Another process registers a work whose chapter the page also carries.
    other = contexts()
    more = tmp_path / "more"
    more.mkdir()
    (more / "第一章.txt").write_text(CHAPTER_2.split("\n", 3)[-1], encoding="utf-8")
    register_work(other, "转载合集", more)
    put(ctx, "p2", mirrored(CHAPTER_2, "www.d-fake.com"), "d.example")
    again = process_page(ctx, "p2")
    assert not again.looked_up  # judged again, against the chapters registered now
    assert {m.work for m in ctx.store.matches(page="p2")} == {"山城旧事", "转载合集"}
    assert {m.work for m in ctx.store.matches(page="p1")} == {"山城旧事"}
    put(ctx, "p3", mirrored(CHAPTER_2, "www.e-fake.com"), "e.example")
    third = process_page(ctx, "p3")
    assert third.looked_up and judged(ctx, "p3") == judged(ctx, "p2")


def test_other_thresholds_make_the_judgement_stale(contexts):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "p1", CHAPTER_3, "a.example")
    process_page(ctx, "p1")
    stricter = contexts(min_long_run=400)
    put(stricter, "p2", CHAPTER_3, "b.example")
    assert not process_page(stricter, "p2").looked_up


def test_a_false_positive_of_the_filter_is_judged_in_full(contexts):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    ctx.seen.filter.might_have = lambda key: True  # every key "maybe seen": none is in the store
    put(ctx, "p1", CHAPTER_3, "a.example")
    done = process_page(ctx, "p1")
    assert done.status == "done" and not done.looked_up and done.matches
    assert ctx.store.get_seen_text(exact_key(CHAPTER_3)).page == "p1"


def test_two_different_chapters_never_share_a_judgement(contexts):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "p3", CHAPTER_3, "a.example")
    put(ctx, "p2", CHAPTER_2, "a.example")
    three, two = process_page(ctx, "p3"), process_page(ctx, "p2")
    assert not three.looked_up and not two.looked_up
    assert {m.chapter for m in three.matches} == {"山城旧事/山城旧事-第三章"}
    assert {m.chapter for m in two.matches} == {"山城旧事/山城旧事-第二章"}
    assert ctx.store.count_seen_texts() == 2


def test_a_page_that_failed_lends_no_judgement(contexts):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "ads", "天才一秒记住本站地址：www.x-fake.com\n上一章 目录 下一章", "a.example")
    assert process_page(ctx, "ads").status == "failed"
    assert ctx.store.count_seen_texts() == 0
    # A page whose matches could not be stored is not a source either: it is processed again.
    put(ctx, "p1", CHAPTER_3, "a.example")
    real_upsert = ctx.store.upsert_match

    def broken(record):
        raise OSError("disk full")

    ctx.store.upsert_match = broken
    with pytest.raises(OSError):
        process_page(ctx, "p1")
    ctx.store.upsert_match = real_upsert
    assert ctx.store.count_seen_texts() == 0
    put(ctx, "p2", CHAPTER_3, "b.example")
    assert not process_page(ctx, "p2").looked_up


def test_a_new_process_has_the_filter_or_builds_it_from_the_stored_keys(contexts, monkeypatch):
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    put(ctx, "p1", CHAPTER_3, "a.example")
    process_page(ctx, "p1")
    ctx.close()
    kind = RedisFilter if contexts.backend == "redis" else StoreFilter
    after = contexts()
    assert isinstance(after.seen.filter, kind) and after.seen.filter.might_have(exact_key(CHAPTER_3))
    if contexts.backend == "redis":  # Redis lost its keys: the filter is built again from the store
        import redis

        client = redis.Redis.from_url(after.settings.redis_url)
        client.delete(*client.scan_iter(match=after.settings.redis_prefix + "seen:*"))
    else:  # the saved filter is lost (or never saved, the process killed): the same
        after.store.put_seen_filter(b"not a filter", 0)
    rebuilt = contexts()
    assert rebuilt.seen.filter.might_have(exact_key(CHAPTER_3))
    put(rebuilt, "p2", mirrored(CHAPTER_3, "www.f-fake.com"), "f.example")
    no_judging(rebuilt, monkeypatch)
    assert process_page(rebuilt, "p2").looked_up


def test_the_gate_can_be_turned_off(contexts):
    ctx = contexts(seen_texts=0)
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    for key in ("p1", "p2"):
        put(ctx, key, CHAPTER_3, "a.example")
        assert not process_page(ctx, key).looked_up
    assert ctx.seen is None and ctx.store.count_seen_texts() == 0


def test_a_judgement_made_while_the_index_missed_a_chapter_is_made_again(contexts):
    """The index lost a chapter (Redis emptied, a rebuild under way): a page judged then matched
    nothing; once the chapter is indexed again, a copy of that text is judged again."""
    ctx = contexts()
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    doc = ctx.store.get_chapter("山城旧事/山城旧事-第三章").doc
    ctx.catalog_judged()  # the in-process index loaded
    from tracker.fingerprints import unpack_keys

    record = next(r for r in ctx.store.fingerprints(ctx.params_hash) if r.chapter == "山城旧事/山城旧事-第三章")
    ctx.index.remove(doc)
    put(ctx, "p1", CHAPTER_3, "a.example")
    assert process_page(ctx, "p1").matches == []
    ctx.index.add(doc, unpack_keys(record.data))
    put(ctx, "p2", mirrored(CHAPTER_3, "www.g-fake.com"), "g.example")
    again = process_page(ctx, "p2")
    assert not again.looked_up and {m.chapter for m in again.matches} == {"山城旧事/山城旧事-第三章"}
