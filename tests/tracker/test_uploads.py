"""Uploaded novels: each kind read into chapters, hostile files refused with a message that
names the problem and the fix, and registration all or nothing."""
from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fingerprint.errors import InputError
from fingerprint.models import Document
from tracker.context import Context
from tracker.settings import Settings
from tracker.store import MatchRecord, NotFound
from tracker.store.sqlite import SQLiteStore
from tracker.uploads.novels import Limits, UploadError, WorkExists, read_upload, register_upload, remove_work

CH1 = "山城的雨下了整整一夜，陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。" * 6
CH2 = "雨停了，码头上的人渐渐多起来，挑夫们吆喝着把货物搬上船，汽笛声远远传来。" * 6


def zipped(entries: dict[str, bytes | str], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, body in entries.items():
            z.writestr(name, body)
    return out.getvalue()


def epub_book(chapters: list[tuple[str, str]]) -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title("山城旧事")
    book.set_language("zh")
    items = []
    for i, (heading, text) in enumerate(chapters, 1):
        c = epub.EpubHtml(title=heading, file_name=f"c{i}.xhtml", lang="zh")
        c.content = f"<h1>{heading}</h1><p>{text}</p>" if text else f"<h1>{heading}</h1>"
        book.add_item(c)
        items.append(c)
    book.toc = tuple(items)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def book_text(encoding: str = "utf-8") -> bytes:
    return f"第一章 雨夜\n{CH1}\n第二章 码头\n{CH2}\n".encode(encoding)


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    store = SQLiteStore(tmp_path / "s.db")
    c = Context(Settings.load({"FPT_HOME": str(tmp_path)}), store=store)
    yield c
    store.close()


# ---- the three kinds ---------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8", "gb18030", "utf-16"])
def test_a_text_file_is_split_at_its_headings_in_any_encoding(encoding):
    up = read_upload("book.txt", book_text(encoding))
    assert up.kind == "text"
    assert [(c.name, c.number) for c in up.chapters] == [("第一章 雨夜", 1), ("第二章 码头", 2)]
    assert CH2[:20] in up.chapters[1].text


def test_a_zip_of_chapter_files_is_one_chapter_per_file_in_number_order():
    up = read_upload("w.zip", zipped({"book/第2章.txt": CH2, "book/第1章.html": f"<html><body><p>{CH1}</p></body></html>",
                                      "book/.hidden.txt": "x", "__MACOSX/book/._第1章.txt": "junk"}))
    assert up.kind == "zip"
    assert [c.name for c in up.chapters] == ["第1章", "第2章"]
    assert CH1[:20] in up.chapters[0].text and "<p>" not in up.chapters[0].text


def test_an_epub_gives_its_spine_documents_as_chapters():
    up = read_upload("w.epub", epub_book([("第一章 雨夜", CH1), ("插图", ""), ("第二章 码头", CH2)]))
    assert up.kind == "epub"
    assert [c.title for c in up.chapters] == ["第一章 雨夜", "第二章 码头"]  # the page without text is left out
    assert up.chapters[1].text.startswith(CH2[:20])


# ---- hostile and broken uploads -------------------------------------------------------------

def test_path_traversal_in_zip_names_stays_inside():
    up = read_upload("w.zip", zipped({"../../../etc/第1章.txt": CH1, "/abs/第2章.txt": CH2}))
    assert sorted(c.name for c in up.chapters) == ["第1章", "第2章"]


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"\x00\x01\x02\x03" * 200, "not text"),
    (zipped({}), "zip is empty"),
    (zipped({"a.zip": zipped({"1.txt": CH1})}), "another archive"),
    (zipped({"cover.png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 50}), "no file in the zip holds text"),
    (b"PK\x03\x04 this is no zip at all" * 3, "zip cannot be read"),
    (epub_book([("封面", "")]), "EPUB has no chapters"),
    (zipped({"mimetype": "application/epub+zip", "META-INF/container.xml": "<container/>"}), "EPUB cannot be read"),
])
def test_bad_uploads_get_a_message_that_names_the_problem_and_the_fix(data, words):
    with pytest.raises(UploadError) as e:
        read_upload("upload", data)
    message = str(e.value)
    assert words in message
    assert any(fix in message for fix in ("upload", "put ", "make ", "export", "zip ")), message


def test_a_zip_bomb_is_refused_by_ratio_total_and_entry_count():
    bomb = zipped({"1.txt": "雨" * 2_000_000})  # 6 MB of one character: compressed about 1000:1
    with pytest.raises(UploadError, match="zip bomb"):
        read_upload("b.zip", bomb)
    with pytest.raises(UploadError, match="zip bomb"):
        read_upload("b.zip", zipped({"1.txt": CH1 * 20, "2.txt": CH2 * 20}, zipfile.ZIP_STORED),
                    Limits(max_total=10_000))
    with pytest.raises(UploadError, match="at most 3"):
        read_upload("b.zip", zipped({f"{i}.txt": CH1 for i in range(4)}), Limits(max_entries=3))


def test_a_zip_that_lies_about_its_sizes_is_stopped_while_unpacking():
    data = bytearray(zipped({"1.txt": CH1 * 400}))
    # Claim 10 bytes unpacked in the central directory; the reader counts what really comes out.
    at = data.rfind(b"PK\x01\x02")
    data[at + 24:at + 28] = (10).to_bytes(4, "little")
    with pytest.raises(UploadError):
        read_upload("b.zip", bytes(data), Limits(max_entry=1000, max_total=1000))


def test_a_file_over_the_size_limit_is_refused():
    with pytest.raises(UploadError, match="at most 100 bytes"):
        read_upload("big.txt", book_text(), Limits(max_bytes=100))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=3000),
    st.binary(max_size=2000).map(lambda b: b"PK\x03\x04" + b),
    st.builds(lambda a, b: zipped({"1.txt": a, "2.html": b}), st.binary(max_size=500), st.binary(max_size=500)),
    st.binary(max_size=300).map(lambda b: zipped({"mimetype": "application/epub+zip", "META-INF/container.xml": b})),
))
def test_random_bytes_give_chapters_or_a_clear_error(data):
    try:
        up = read_upload("random", data)
    except UploadError as e:
        assert str(e) and "Traceback" not in str(e)
        return
    assert up.chapters and all(c.text.strip() and c.name for c in up.chapters)


# ---- registering and removing ------------------------------------------------------------------

def test_register_then_remove_takes_chapters_fingerprints_index_and_matches(ctx):
    report = register_upload(ctx, "山城旧事", read_upload("b.txt", book_text()), author="林岚")
    assert len(report.added) == 2 and ctx.store.get_work("山城旧事").author == "林岚"
    docs = [c.doc for c in ctx.store.chapter_headers("山城旧事")]
    ctx.store.upsert_match(MatchRecord(page="p", chapter=report.added[0], work="山城旧事", site="s", similarity=1,
                                       containment=1, page_share=1, verdict="duplicate"))
    assert ctx.tracker.match(Document("copy", CH1))  # indexed: a copy is found
    assert remove_work(ctx, "山城旧事") == 2
    with pytest.raises(NotFound):
        ctx.store.get_work("山城旧事")
    assert ctx.store.count_chapters() == 0 and ctx.store.count_matches() == 0
    assert list(ctx.store.fingerprints(ctx.params_hash)) == []
    assert not set(docs) & set(ctx.tracker.candidates(ctx.tracker.prepare(Document("copy", CH1))))
    assert ctx.tracker.match(Document("copy", CH1)) == []


def test_a_taken_title_is_refused_and_leaves_the_work_as_it_was(ctx):
    register_upload(ctx, "山城旧事", read_upload("b.txt", book_text()))
    with pytest.raises(WorkExists, match="remove it first"):
        register_upload(ctx, "山城旧事", read_upload("w.zip", zipped({"1.txt": CH1})))
    assert ctx.store.count_chapters("山城旧事") == 2


def test_a_failure_half_way_leaves_nothing_registered(ctx, monkeypatch):
    import tracker.uploads.registration as registration

    calls = []
    real = registration.register_chapter

    def failing(c, chapter, **kw):
        calls.append(chapter.key)
        if len(calls) == 2:
            raise RuntimeError("the store went away")
        return real(c, chapter, **kw)

    monkeypatch.setattr(registration, "register_chapter", failing)
    with pytest.raises(RuntimeError):
        register_upload(ctx, "山城旧事", read_upload("b.txt", book_text()))
    assert ctx.store.works() == [] and ctx.store.count_chapters() == 0
    assert list(ctx.store.fingerprints(ctx.params_hash)) == []


def test_a_bad_title_is_an_input_error_before_anything_is_stored(ctx):
    with pytest.raises(InputError):
        register_upload(ctx, "a/b", read_upload("b.txt", book_text()))
    assert ctx.store.works() == []


def test_covers_in_a_zip_are_registered_as_the_works_images_and_a_broken_one_is_skipped(ctx):
    from tests.web.conftest import picture

    up = read_upload("w.zip", zipped({"第1章.txt": CH1, "cover.png": picture((30, 60, 200)),
                                      "broken.jpg": b"\xff\xd8 not really"}))
    report = register_upload(ctx, "山城旧事", up)
    assert report.images.added == ["山城旧事/cover.png"]
    assert [name for name, _ in report.images.skipped] == ["broken.jpg"]
    assert ctx.store.count_work_images("山城旧事") == 1
    remove_work(ctx, "山城旧事")
    assert ctx.store.count_work_images() == 0


def test_an_epubs_cover_comes_with_its_chapters():
    from ebooklib import epub

    from tests.web.conftest import picture

    book = epub.EpubBook()
    book.set_identifier("id-2")
    book.set_title("山城旧事")
    book.set_language("zh")
    book.set_cover("images/cover.png", picture((10, 20, 30)))
    c1 = epub.EpubHtml(title="第一章", file_name="c1.xhtml", lang="zh")
    c1.content = f"<h1>第一章 雨夜</h1><p>{CH1}</p>"
    book.add_item(c1)
    book.toc = (c1,)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["cover", "nav", c1]  # the cover page holds no text: not a chapter
    out = io.BytesIO()
    epub.write_epub(out, book)
    up = read_upload("b.epub", out.getvalue())
    assert [c.title for c in up.chapters] == ["第一章 雨夜"]
    assert [name for name, _ in up.images] == ["cover.png"]
