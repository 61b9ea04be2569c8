"""read_documents / read_text / ReadReport: every kind of input simtool commands accept."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fingerprint.errors import InputError
from fingerprint.models import Skipped
from pagetext.sources import ReadReport, read_documents, read_text

ZH = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。"
ZH_TRAD = "話說天下大勢，分久必合，合久必分。周末七國分爭，並入於秦。"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"


def _read(inputs, **kw):
    report = ReadReport()
    docs = list(read_documents([str(i) for i in inputs], report, **kw))
    return docs, report


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_text_file(tmp_path):
    f = _write(tmp_path / "chapter1.txt", ZH)
    (doc,), report = _read([f])
    assert (doc.key, doc.text, doc.source) == ("chapter1", ZH, str(f))
    assert doc.meta == {"encoding": "utf-8", "format": "text", "path": str(f)}
    assert report.documents == 1 and report.skipped == []


def test_directory_is_recursive_sorted_and_skips_hidden(tmp_path):
    _write(tmp_path / "b.txt", ZH + "乙")
    _write(tmp_path / "a.txt", ZH + "甲")
    _write(tmp_path / "sub" / "c.md", ZH + "丙")
    _write(tmp_path / ".git" / "d.txt", ZH)
    _write(tmp_path / ".hidden.txt", ZH)
    docs, report = _read([tmp_path])
    assert [d.key for d in docs] == ["a", "b", "c"]
    assert docs[2].source == str(tmp_path / "sub" / "c.md")
    assert report.skipped == []


def test_shared_stems_become_relative_paths(tmp_path):
    _write(tmp_path / "x.txt", ZH + "一")
    _write(tmp_path / "vol1" / "x.txt", ZH + "二")
    _write(tmp_path / "vol2" / "x.html", f"<html><body><p>{ZH}三</p></body></html>")
    _write(tmp_path / "y.txt", ZH + "四")
    docs, _ = _read([tmp_path])
    assert sorted(d.key for d in docs) == ["vol1/x", "vol2/x", "x", "y"]


def test_shared_stems_across_given_files_and_folders(tmp_path):
    a = _write(tmp_path / "a" / "ch.txt", ZH + "一")
    b = _write(tmp_path / "b" / "ch.txt", ZH + "二")
    docs, report = _read([a, b])
    assert [d.key for d in docs] == [Path(str(a)).with_suffix("").as_posix(), Path(str(b)).with_suffix("").as_posix()]
    docs, report = _read([tmp_path / "a", tmp_path / "b"])  # same relative path in both folders
    assert len({d.key for d in docs}) == 2 and report.skipped == []


def test_same_stem_different_extension_keeps_both(tmp_path):
    _write(tmp_path / "p.txt", ZH + "一")
    _write(tmp_path / "p.html", f"<html><body><p>{ZH}二</p></body></html>")
    docs, report = _read([tmp_path])
    assert len(docs) == 2 and len({d.key for d in docs}) == 2 and report.skipped == []


def test_gbk_html_with_meta_charset(tmp_path):
    page = (
        '<html><head><meta charset="gbk"><title>第三回 标题</title></head><body>'
        '<div class="nav"><a href="/">首页</a><a href="/l">目录</a></div>'
        f'<div id="content">{ZH}<br/>{ZH[::-1]}</div></body></html>'
    )
    f = _write(tmp_path / "page.htm", page.encode("gbk"))
    (doc,), _ = _read([f])
    assert doc.text.split("\n") == [ZH, ZH[::-1]]
    assert doc.meta["format"] == "html" and doc.meta["title"] == "第三回 标题"
    assert doc.meta["encoding"] == "gb18030"


def test_html_content_in_a_txt_file_is_extracted(tmp_path):
    f = _write(tmp_path / "saved.txt", f"<!DOCTYPE html><html><body><script>x=1</script><p>{ZH}</p></body></html>")
    (doc,), _ = _read([f])
    assert doc.text == ZH and doc.meta["format"] == "html"


@pytest.mark.parametrize("codec,expected", [("big5", "big5hkscs"), ("utf-16", "utf-16-le"), ("gb18030", "gb18030")])
def test_encodings_in_files(tmp_path, codec, expected):
    text = ZH_TRAD * 3
    f = _write(tmp_path / "t.txt", text.encode(codec))
    (doc,), _ = _read([f])
    assert doc.text == text and doc.meta["encoding"] == expected


def test_invalid_utf8_byte_is_replaced_not_fatal(tmp_path):
    f = _write(tmp_path / "t.txt", (ZH * 50).encode() + b"\xc3(" + (ZH * 50).encode())
    (doc,), report = _read([f])
    assert doc.meta["encoding"] == "utf-8 (lossy)" and doc.text.count("\ufffd") == 1


@pytest.mark.parametrize(
    "name,data,kind",
    [
        ("picture.txt", PNG, "binary"),  # a PNG under a text name, found by its content
        ("photo.png", PNG, "binary"),
        ("book.zip", b"PK\x03\x04" + bytes(100), "binary"),
        ("noise.dat", bytes(range(256)) * 4, "binary"),
        ("empty.txt", b"", "empty"),
        ("blank.txt", " \n\t\u3000\n".encode(), "empty"),
        ("punct.txt", "……。，！？——\n*** ---".encode(), "empty"),
        ("nothing.html", b"<html><body><script>var a=1</script></body></html>", "empty"),
    ],
)
def test_unusable_files_are_skipped_with_a_reason(tmp_path, name, data, kind):
    _write(tmp_path / name, data)
    good = _write(tmp_path / "zz_good.txt", ZH)
    docs, report = _read([tmp_path])
    assert [d.source for d in docs] == [str(good)]
    (skip,) = report.skipped
    assert skip.source == str(tmp_path / name)
    assert skip.reason.split(":")[0] == kind
    if kind == "binary":
        assert "convert" in skip.reason or "give a text" in skip.reason  # says what to do


def test_missing_path_is_an_error_naming_it(tmp_path):
    with pytest.raises(InputError, match=r"no such file or directory: .*nope\.txt; check the path"):
        list(read_documents([str(tmp_path / "nope.txt")]))


def test_empty_directory_yields_nothing(tmp_path):
    assert _read([tmp_path]) == ([], ReadReport())


JSONL = "\n".join([
    json.dumps({"id": "p1", "text": ZH, "url": "https://example.com/1"}, ensure_ascii=False),
    "{broken json",
    json.dumps({"text": ZH}),
    json.dumps({"id": "p2", "text": 42}),
    "",
    json.dumps({"key": 7, "html": f"<html><head><title>页</title></head><body><p>{ZH}</p></body></html>"}, ensure_ascii=False),
    json.dumps({"id": "p1", "text": ZH + "又一次"}, ensure_ascii=False),
    json.dumps(["not", "an", "object"]),
    json.dumps({"id": "p3", "text": "   "}),
    json.dumps({"id": "p4"}),
]) + "\n"


def test_jsonl_records_and_broken_lines(tmp_path):
    f = _write(tmp_path / "pages.jsonl", JSONL)
    docs, report = _read([f])
    assert [(d.key, d.source) for d in docs] == [("p1", f"{f}:1"), ("7", f"{f}:6")]
    assert docs[0].meta["url"] == "https://example.com/1" and docs[0].meta["format"] == "jsonl"
    assert docs[1].text == ZH and docs[1].meta["title"] == "页"
    reasons = {s.source.rsplit(":", 1)[1]: s.reason.split(":")[0] for s in report.skipped}
    assert reasons == {
        "2": "invalid JSON", "3": "missing id", "4": "text not a string", "7": "duplicate key",
        "8": "not an object", "9": "empty", "10": "missing text",
    }


def test_json_array_file(tmp_path):
    f = _write(tmp_path / "pages.json", json.dumps([{"id": "a", "text": ZH}, {"id": "b", "text": ZH_TRAD}]))
    docs, _ = _read([f])
    assert [d.key for d in docs] == ["a", "b"]


def test_stdin_text_html_and_jsonl():
    (doc,), _ = _read(["-"], stdin=io.BytesIO(ZH.encode("gb18030")))
    assert (doc.key, doc.text, doc.source, doc.meta["encoding"]) == ("stdin", ZH, "-", "gb18030")
    (doc,), _ = _read(["-"], stdin=io.BytesIO(f"<html><body><p>{ZH}</p></body></html>".encode()))
    assert doc.text == ZH and doc.meta["format"] == "html"
    docs, report = _read(["-"], stdin=io.BytesIO(("\n  " + JSONL).encode()))
    assert [d.key for d in docs] == ["p1", "7"] and len(report.skipped) == 7
    assert all(s.source.startswith("-:") for s in report.skipped)


def test_stdin_binary_is_skipped():
    docs, report = _read(["-"], stdin=io.BytesIO(PNG))
    assert docs == [] and report.by_reason() == {"binary": 1}


def test_report_summary():
    report = ReadReport(documents=12)
    assert report.summary() == "read 12 documents"
    report.add_skip("a.txt", "empty")
    report.add_skip("b.png", "binary: .png files are not text; convert it first")
    report.add_skip("c.txt", "empty")
    assert report.by_reason() == {"empty": 2, "binary": 1}
    assert report.summary() == "read 12 documents; skipped 3: 2 empty, 1 binary (see --verbose)"
    assert report.skipped[0] == Skipped("a.txt", "empty")
    assert ReadReport(documents=1).summary() == "read 1 document"


def test_report_counts_what_read_documents_yields(tmp_path):
    _write(tmp_path / "a.txt", ZH)
    _write(tmp_path / "b.txt", "")
    report = ReadReport()
    docs = list(read_documents([str(tmp_path)], report))
    assert report.documents == len(docs) == 1 and report.summary().endswith("1 empty (see --verbose)")


def test_read_text(tmp_path):
    f = _write(tmp_path / "t.txt", ZH_TRAD.encode("big5"))
    assert read_text(f) == ZH_TRAD
    with pytest.raises(InputError, match="no such file or directory: .*; check the path"):
        read_text(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="is a directory"):
        read_text(tmp_path)
    png = _write(tmp_path / "p.txt", PNG)
    with pytest.raises(InputError, match=r"p\.txt: binary: .*PNG"):
        read_text(png)


def test_ten_megabytes_on_one_line(tmp_path):
    line = ZH * (10_000_000 // len(ZH.encode("gb18030")) + 1)
    f = _write(tmp_path / "long.txt", line.encode("gb18030"))
    (doc,), _ = _read([f])
    assert doc.text == line and doc.meta["encoding"] == "gb18030"


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.fixed_dictionaries({"id": st.text(max_size=5), "text": st.text(max_size=20)}),
    st.fixed_dictionaries({"key": st.integers(), "text": st.one_of(st.none(), st.integers(), st.text(max_size=5))}),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),  # control bytes make a file binary
), max_size=15))
def test_every_jsonl_line_is_either_read_or_skipped(tmp_path, records):
    lines = [json.dumps(r) if isinstance(r, dict) else r for r in records]
    f = tmp_path / "fuzz.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs, report = _read([f])
    assert report.documents == len(docs)
    assert len(docs) + len(report.skipped) == sum(1 for line in lines if line.strip())


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name,codec,expected",
    [
        ("rulinwaishi.txt", "gb18030", "gb18030"),
        ("dongzhoulieguozhi.txt", "big5hkscs", "big5hkscs"),
        ("jigongquanzhuan.txt", "big5", "big5hkscs"),
    ],
)
def test_corpus_slices_in_their_original_encodings(tmp_path, corpus, name, codec, expected):
    text = (corpus / "zh_novels" / name).read_text(encoding="utf-8")
    piece = text[10_000:60_000]
    _write(tmp_path / "plain" / f"{name}", piece.encode(codec))
    page = f'<html><head><meta charset="{codec}"><title>t</title></head><body><div id="content">{piece[:3000].replace(chr(10), "<br>")}</div></body></html>'
    _write(tmp_path / "web" / f"{Path(name).stem}.html", page.encode(codec))
    docs, report = _read([tmp_path])
    assert report.skipped == []
    by_format = {d.meta["format"]: d for d in docs}
    assert by_format["text"].text == piece and by_format["text"].meta["encoding"] == expected
    html_lines = [line for line in piece[:3000].split("\n") if line.strip()]
    assert by_format["html"].text.split("\n") == [" ".join(line.split()) for line in html_lines]
    assert {d.key for d in docs} == {f"plain/{Path(name).stem}", f"web/{Path(name).stem}"}


# --- damaged text: replaced and counted, never fatal ------------------------------------------


def test_lone_surrogates_in_jsonl_are_replaced_counted_and_the_batch_goes_on(tmp_path):
    lines = ['{"id": "a", "text": "%s"}' % ZH, '{"id": "b\\ud800", "text": "%s\\udfff", "title": "\\ud801"}' % ZH,
             '{"id": "c", "text": "%s"}' % ZH_TRAD]
    f = _write(tmp_path / "p.jsonl", "\n".join(lines))
    docs, report = _read([f])
    assert [d.key for d in docs] == ["a", "b\ufffd", "c"]
    assert docs[1].text == ZH + "\ufffd" and docs[1].meta["title"] == "\ufffd"
    for d in docs:
        d.key.encode("utf-8"), d.text.encode("utf-8")  # everything can be stored now
    assert report.replaced == {f"{f}:2": 3} and not report.skipped
    assert report.summary() == "read 3 documents; 3 bad characters replaced with U+FFFD in 1 input (see --verbose)"
    assert report.details() == [f"replaced 3 bad characters with U+FFFD in {f}:2"]


def test_bad_bytes_in_a_gbk_file_are_counted_per_file(tmp_path):
    f = _write(tmp_path / "gbk.txt", (ZH * 20).encode("gbk") + b"\xff" + (ZH * 20).encode("gbk"))
    (doc,), report = _read([f])
    assert doc.meta["encoding"] == "gb18030 (lossy)" and doc.text == ZH * 20 + "\ufffd" + ZH * 20
    assert report.replaced == {str(f): 1} and "1 bad character replaced" in report.summary()


def test_a_file_name_that_is_not_utf8_gives_a_storable_key(tmp_path):
    import os

    name = os.fsdecode(b"ch\xff\xfe1.txt")  # invalid UTF-8: lone surrogates under surrogateescape
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / name).write_text(ZH, encoding="utf-8")
    (doc,), report = _read([tmp_path / "d"])
    assert doc.key == "ch\ufffd\ufffd1" and doc.text == ZH
    assert report.replaced == {str(tmp_path / "d" / "ch\ufffd\ufffd1.txt"): 2}


@pytest.mark.parametrize("line, reason", [
    ("[" * 100_000 + "]" * 100_000, "invalid JSON: nested too deeply"),
    ('{"id": "x", "text": "y", "n": ' + "1" * 5000 + "}", "invalid JSON: Exceeds the limit"),
])
def test_json_lines_python_cannot_read_are_skipped_with_the_line(tmp_path, line, reason):
    f = _write(tmp_path / "p.jsonl", "\n".join([line, json.dumps({"id": "ok", "text": ZH}, ensure_ascii=False)]))
    docs, report = _read([f])
    assert [d.key for d in docs] == ["ok"]
    (skip,) = report.skipped
    assert skip.source == f"{f}:1" and skip.reason.startswith(reason)
