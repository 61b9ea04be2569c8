import shutil

from fingerprint.track import track
from pagetext.sources import read_documents
from tracker.context import Context
from tracker.pipeline import EMPTY_REASON, ingest, process_page, process_queued, reindex
from tracker.registry import chapters_from, register_work

from .conftest import SAMPLES


def pairs(store):
    return {(m.page, m.chapter.split("/", 1)[1]) for m in store.matches()}


def test_register_ingest_process_gives_the_same_matches_as_simtool(ctx):
    r = register_work(ctx, "山城旧事", SAMPLES / "originals", author="林岚")
    assert len(r.added) == 3 and not r.changed and not r.unchanged
    ing = ingest(ctx, [str(SAMPLES / "pages")], site="biquge")
    assert len(ing.queued) == 8
    counts = process_queued(ctx)
    assert counts["done"] == 8 and counts["failed"] == 0
    offline = track(read_documents([str(SAMPLES / "originals")]), read_documents([str(SAMPLES / "pages")]))
    assert pairs(ctx.store) == {(m.page, m.original) for m in offline}
    m = ctx.store.get_match("tw-3", "山城旧事/山城旧事-第三章")
    assert m.work == "山城旧事" and m.site == "biquge" and m.verdict == "duplicate" and m.spans


def test_processing_twice_updates_and_never_duplicates(ctx):
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    ingest(ctx, [str(SAMPLES / "pages" / "merged-1-2.txt")])
    first = process_page(ctx, "merged-1-2")
    again = process_page(ctx, "merged-1-2")
    assert len(first.matches) == len(again.matches) == 2
    assert len(ctx.store.matches()) == 2
    for a, b in zip(sorted(first.matches, key=lambda m: m.chapter), sorted(again.matches, key=lambda m: m.chapter)):
        assert a.first_seen == b.first_seen and b.last_seen >= a.last_seen


def test_unchanged_pages_are_not_requeued_and_changed_ones_are(ctx, tmp_path):
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    page = tmp_path / "p.txt"
    shutil.copy(SAMPLES / "pages" / "tw-3.txt", page)
    assert ingest(ctx, [str(page)]).queued == ["p"]
    process_queued(ctx)
    assert ingest(ctx, [str(page)]).unchanged == ["p"]
    page.write_text(page.read_text() + "\n新的一行")
    assert ingest(ctx, [str(page)]).queued == ["p"]


def test_reregistering_a_changed_chapter_updates_its_fingerprints(ctx, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(SAMPLES / "originals", work)
    register_work(ctx, "山城旧事", work)
    news = (SAMPLES / "pages" / "unrelated-news.txt").read_text()
    (work / "山城旧事-第三章.txt").write_text(news)  # the chapter is now the news text
    r = register_work(ctx, "山城旧事", work)
    assert r.changed == ["山城旧事/山城旧事-第三章"] and len(r.unchanged) == 2
    ingest(ctx, [str(SAMPLES / "pages")])
    process_queued(ctx)
    found = pairs(ctx.store)
    assert ("unrelated-news", "山城旧事-第三章") in found
    assert ("tw-3", "山城旧事-第三章") not in found


def test_matches_survive_a_new_process_and_a_reindex(settings):
    a = Context(settings)
    register_work(a, "山城旧事", SAMPLES / "originals")
    ingest(a, [str(SAMPLES / "pages")])
    process_queued(a)
    before = pairs(a.store)
    a.close()
    b = Context(settings)  # a new process: the in-process index is rebuilt from the store
    assert reindex(b) == 3
    for key in [p.key for p in b.store.pages()]:
        process_page(b, key)
    assert pairs(b.store) == before and len(b.store.matches()) == len(before)
    b.close()


def test_bad_pages_are_kept_as_failed_with_the_reason(ctx, tmp_path):
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    (tmp_path / "ads.txt").write_text("天才一秒记住本站地址：www.biquge.com\n本章未完，请点击下一页继续阅读")
    ingest(ctx, [str(tmp_path / "ads.txt")])
    r = process_page(ctx, "ads")
    assert r.status == "failed" and r.reason == EMPTY_REASON
    page = ctx.store.get_page("ads")
    assert page.status == "failed" and page.reason == EMPTY_REASON and page.attempts == 1
    assert [p.key for p in ctx.store.failures()] == ["ads"]
    assert process_page(ctx, "no-such-page").status == "missing"


def test_a_whole_book_file_is_split_into_chapters(tmp_path):
    book = tmp_path / "book.txt"
    chapters = [(SAMPLES / "originals" / f"山城旧事-第{n}章.txt").read_text() for n in "一二三"]
    book.write_text("山城旧事\n作者：林岚\n\n" + "\n\n".join(chapters))
    got = chapters_from(book)
    assert [c.number for c in got] == [1, 2, 3]
    assert got[0].name.startswith("第一章") and "雨夜来客" in got[0].title


def test_chapter_numbers_come_from_file_names_in_any_numeral(tmp_path):
    from tracker.registry import number_in_name

    assert [number_in_name(n) for n in ("山城旧事-第三章", "第一百零一回", "chapter-012", "序")] == [3, 101, 12, None]
    got = chapters_from(SAMPLES / "originals")
    assert [c.number for c in got] == [1, 2, 3] and got[1].name == "山城旧事-第二章"
