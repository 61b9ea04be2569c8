"""A new edition of a registered work (register_upload with replace=True): unchanged chapters
keep everything, changed ones are indexed again, new ones added, missing ones removed from the
index and the store; nothing changes before the whole upload is checked, and a store failure
half-way leaves each chapter in its old or its new version and says what was done."""
from __future__ import annotations

import pytest

from fingerprint.errors import InputError
from fingerprint.models import Document
from tracker.context import Context
from tracker.settings import Settings
from tracker.store import MatchRecord, NotFound, StoreError
from tracker.store.scoped import ScopedStore
from tracker.store.sqlite import SQLiteStore
from tracker.store.tenancy import DEFAULT_ORG, Organisation
from tracker.uploads.novels import (
    EditionIncomplete,
    NoWork,
    Upload,
    UploadError,
    WorkExists,
    read_upload,
    register_upload,
)

from .test_uploads import CH1, CH2, zipped

CH3 = "城东的老槐树下，说书人敲响醒木，讲起三十年前那场大火，听客们屏住了呼吸。" * 6
CH4 = "第二年春天，陈守义离开山城，沿着江水一路东下，船舱里挤满了逃难的人家。" * 6
CH2_NEW = "天亮以后，码头上冷冷清清，只有一个卖烧饼的老人守着炉子，望着江面发呆。" * 6


def edition(**chapters: str) -> Upload:
    return read_upload("w.zip", zipped({f"{name}.txt": text for name, text in chapters.items()}))


def found(ctx: Context, text: str) -> set[str]:
    """The chapters a page copying `text` is matched to."""
    return {m.original for m in ctx.tracker.match(Document("copy", text))}


def match(chapter: str) -> MatchRecord:
    return MatchRecord(page=f"https://pirate.example/{chapter}", chapter=chapter, work="雨夜", site="pirate",
                       similarity=1, containment=1, page_share=1, verdict="duplicate")


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    store = SQLiteStore(tmp_path / "s.db")
    c = Context(Settings.load({"FPT_HOME": str(tmp_path)}), store=store)
    register_upload(c, "雨夜", edition(第1章=CH1, 第2章=CH2, 第3章=CH3), author="林岚")
    for key in ("雨夜/第1章", "雨夜/第2章", "雨夜/第3章"):
        store.upsert_match(match(key))
    yield c
    store.close()


def state(ctx: Context) -> tuple:
    """Everything a refused upload must leave as it was."""
    store = ctx.store
    return ([(c.key, c.content_hash, c.doc) for c in store.chapter_headers("雨夜")],
            sorted((f.chapter, f.data) for f in store.fingerprints(ctx.params_hash)),
            store.get_work("雨夜").author, len(store.matches(work="雨夜")))


def test_a_new_edition_keeps_unchanged_chapters_reindexes_changed_adds_new_and_removes_missing(ctx):
    store = ctx.store
    before = {c.key: c for c in store.chapter_headers("雨夜")}
    prints = {f.chapter: f.data for f in store.fingerprints(ctx.params_hash)}
    assert found(ctx, CH2) == {"雨夜/第2章"} and found(ctx, CH3) == {"雨夜/第3章"}

    report = register_upload(ctx, "雨夜", edition(第1章=CH1, 第2章=CH2_NEW, 第4章=CH4), replace=True)

    assert (report.added, report.changed, report.unchanged, report.removed) == (
        ["雨夜/第4章"], ["雨夜/第2章"], ["雨夜/第1章"], ["雨夜/第3章"])
    assert report.replaced and report.counts() == "1 added, 1 changed, 1 unchanged, 1 removed"
    after = {c.key: c for c in store.chapter_headers("雨夜")}
    assert sorted(after) == ["雨夜/第1章", "雨夜/第2章", "雨夜/第4章"]
    # unchanged: the same doc, fingerprint and match, still found
    assert after["雨夜/第1章"].doc == before["雨夜/第1章"].doc
    assert {f.chapter: f.data for f in store.fingerprints(ctx.params_hash)}["雨夜/第1章"] == prints["雨夜/第1章"]
    assert store.get_match(match("雨夜/第1章").page, "雨夜/第1章")
    assert found(ctx, CH1) == {"雨夜/第1章"}
    # changed: found by its new text, no longer by its old one; the same doc number
    assert after["雨夜/第2章"].doc == before["雨夜/第2章"].doc
    assert found(ctx, CH2_NEW) == {"雨夜/第2章"} and found(ctx, CH2) == set()
    # removed: out of the store and the index; its match stays, for the record
    with pytest.raises(NotFound):
        store.get_chapter("雨夜/第3章")
    assert found(ctx, CH3) == set()
    assert "雨夜/第3章" not in {f.chapter for f in store.fingerprints(ctx.params_hash)}
    assert store.get_match(match("雨夜/第3章").page, "雨夜/第3章")
    # added
    assert found(ctx, CH4) == {"雨夜/第4章"}
    # another process loads the same index from the store
    fresh = Context(ctx.settings, store=store)
    assert found(fresh, CH2_NEW) == {"雨夜/第2章"} and found(fresh, CH2) == set() and found(fresh, CH3) == set()
    assert found(fresh, CH1) == {"雨夜/第1章"} and found(fresh, CH4) == {"雨夜/第4章"}


def test_the_author_changes_only_when_given_and_images_are_registered(ctx):
    from tests.web.conftest import picture

    register_upload(ctx, "雨夜", edition(第1章=CH1), replace=True)
    assert ctx.store.get_work("雨夜").author == "林岚"
    up = read_upload("w.zip", zipped({"第1章.txt": CH1, "cover.png": picture((30, 60, 200))}))
    report = register_upload(ctx, "雨夜", up, author="周原", replace=True)
    assert report.work.author == "周原" and ctx.store.get_work("雨夜").author == "周原"
    assert report.images.added == ["雨夜/cover.png"] and report.unchanged == ["雨夜/第1章"]


def test_replacing_a_missing_title_or_with_no_chapters_changes_nothing(ctx):
    before = state(ctx)
    with pytest.raises(NoWork, match="no work titled '晴天' to replace"):
        register_upload(ctx, "晴天", edition(第1章=CH1), replace=True)
    with pytest.raises(UploadError, match="no chapters"):
        register_upload(ctx, "雨夜", Upload("text", []), replace=True)
    with pytest.raises(InputError):
        register_upload(ctx, "a/b", edition(第1章=CH1), replace=True)
    assert state(ctx) == before
    with pytest.raises(NotFound):
        ctx.store.get_work("晴天")


def test_another_organisations_work_is_no_work_to_replace(ctx):
    ctx.store.upsert_org(Organisation("east"))
    east = Context(ctx.settings, store=ScopedStore(ctx.store, "east"))
    before = state(ctx)
    messages = []
    for title in ("雨夜", "晴天"):  # the other organisation's work, and none: told apart by nothing
        with pytest.raises(NoWork) as e:
            register_upload(east, title, edition(第1章=CH4), replace=True)
        messages.append(str(e.value).replace(title, "TITLE"))
    assert messages[0] == messages[1]
    assert state(ctx) == before and ctx.store.owner("work", "雨夜") == DEFAULT_ORG


def test_without_replace_a_taken_title_says_how_to_upload_a_new_edition(ctx):
    with pytest.raises(WorkExists, match="new edition"):
        register_upload(ctx, "雨夜", edition(第1章=CH4))


def test_a_store_failure_half_way_leaves_each_chapter_old_or_new_and_says_what_was_done(ctx, monkeypatch):
    store = ctx.store
    real = store.put_fingerprint
    calls = []

    def failing(record):
        calls.append(record.chapter)
        if len(calls) == 1:  # the changed chapter: its new text is stored, its fingerprint is not
            raise StoreError("the disk is full")
        return real(record)

    monkeypatch.setattr(store, "put_fingerprint", failing)
    with pytest.raises(EditionIncomplete) as e:
        register_upload(ctx, "雨夜", edition(第1章=CH1, 第2章=CH2_NEW, 第4章=CH4), author="周原", replace=True)
    message = str(e.value)
    assert "the disk is full" in message and "'雨夜/第2章'" in message and "keeps its old version" in message
    assert "0 added, 0 changed, 1 unchanged, 0 removed" in message and "upload the edition again" in message
    assert e.value.report.unchanged == ["雨夜/第1章"]
    # the failed chapter has its old text and is found by it; the rest was not reached
    assert store.get_chapter("雨夜/第2章").text == CH2
    assert found(ctx, CH2) == {"雨夜/第2章"} and found(ctx, CH2_NEW) == set()
    assert found(Context(ctx.settings, store=store), CH2) == {"雨夜/第2章"}
    assert store.get_chapter("雨夜/第3章") and store.get_work("雨夜").author == "林岚"
    with pytest.raises(NotFound):
        store.get_chapter("雨夜/第4章")
    # uploading again finishes the edition
    report = register_upload(ctx, "雨夜", edition(第1章=CH1, 第2章=CH2_NEW, 第4章=CH4), author="周原", replace=True)
    assert report.counts() == "1 added, 1 changed, 1 unchanged, 1 removed"
    assert found(ctx, CH2_NEW) == {"雨夜/第2章"} and found(ctx, CH2) == set()


def test_a_new_chapter_that_fails_is_taken_out_and_a_chapter_not_put_back_is_named(ctx, monkeypatch):
    store = ctx.store
    real = store.put_fingerprint

    def failing(record):
        if record.chapter == "雨夜/第4章":
            raise StoreError("the disk is full")
        return real(record)

    monkeypatch.setattr(store, "put_fingerprint", failing)
    with pytest.raises(EditionIncomplete, match="'雨夜/第4章' was not added") as e:
        register_upload(ctx, "雨夜", edition(第1章=CH1, 第2章=CH2_NEW, 第4章=CH4), replace=True)
    assert e.value.report.changed == ["雨夜/第2章"]
    with pytest.raises(NotFound):
        store.get_chapter("雨夜/第4章")
    assert found(ctx, CH4) == set() and found(ctx, CH2_NEW) == {"雨夜/第2章"}

    monkeypatch.setattr(store, "put_fingerprint", lambda record: (_ for _ in ()).throw(StoreError("gone")))
    with pytest.raises(EditionIncomplete, match="'雨夜/第1章' could not be put back"):
        register_upload(ctx, "雨夜", edition(第1章=CH4), replace=True)
