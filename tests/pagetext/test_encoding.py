"""decode_bytes: every encoding Chinese novels arrive in, wrong labels, and binary data."""
from __future__ import annotations

import codecs
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fingerprint.errors import InputError
from pagetext.encoding import cjk_score, declared_charsets, decode, decode_bytes

SIMPLIFIED = [
    "话说天下大势，分久必合，合久必分。",
    "却说那猴王在山中，与群猴游戏，不觉过了三百余年。",
    "他走到门前，看见一个老人坐在石头上，手里拿着一本书。",
    "第一回　宴桃园豪杰三结义　斩黄巾英雄首立功",
    "我们今天要去城里买些东西，晚上回来吃饭。",
    "“你这是做什么？”她笑着问道。",
]
TRADITIONAL = [
    "話說天下大勢，分久必合，合久必分。",
    "卻說那猴王在山中，與群猴遊戲，不覺過了三百餘年。",
    "他走到門前，看見一個老人坐在石頭上，手裡拿著一本書。",
    "第一回　宴桃園豪傑三結義　斬黃巾英雄首立功",
    "濟公長老說道：「善哉善哉，這是天數。」",
    "臺灣與香港的讀者都喜歡這部小說。",
]


def _paragraph(sentences, rng, n=8):
    return "\n".join(rng.choice(sentences) for _ in range(n))


# --- the plain cases, without the shared corpus -------------------------------------------


def test_utf8_is_read_as_utf8():
    text = "\n".join(SIMPLIFIED)
    assert decode_bytes(text.encode("utf-8")) == (text, "utf-8")


def test_empty_bytes_are_empty_text():
    assert decode_bytes(b"") == ("", "utf-8")


@pytest.mark.parametrize("codec,name", [("utf-8-sig", "utf-8-sig"), ("utf-16", "utf-16-le"), ("utf-32", "utf-32-le")])
def test_byte_order_marks(codec, name):
    text = SIMPLIFIED[0] + "\nhello"
    got, enc = decode_bytes(text.encode(codec))
    assert got == text  # the BOM itself is not part of the text
    assert enc == name


def test_big_endian_utf16_bom():
    text = TRADITIONAL[0]
    assert decode_bytes(codecs.BOM_UTF16_BE + text.encode("utf-16-be")) == (text, "utf-16-be")


def test_utf16_without_bom_is_recognised_by_its_nul_pattern():
    text = "\n".join(SIMPLIFIED) + " plain ASCII words too"
    assert decode_bytes(text.encode("utf-16-le")) == (text, "utf-16-le")


@pytest.mark.parametrize("codec", ["gbk", "gb2312", "gb18030"])
def test_gb_family_decodes_as_gb18030(codec):
    text = "\n".join(SIMPLIFIED)
    assert decode_bytes(text.encode(codec)) == (text, "gb18030")


def test_traditional_text_in_gbk_is_not_mistaken_for_big5():
    text = "\n".join(TRADITIONAL)
    assert decode_bytes(text.encode("gbk")) == (text, "gb18030")


@pytest.mark.parametrize("codec", ["big5", "big5hkscs", "cp950"])
def test_big5_family(codec):
    text = "\n".join(TRADITIONAL)
    got, enc = decode_bytes(text.encode(codec))
    assert got == text
    assert enc in ("big5", "big5hkscs", "cp950")


def test_gb18030_only_characters():
    text = "𠀀𠀁 are CJK Extension B, encodable only in GB18030 among the GB codecs。" + SIMPLIFIED[0]
    assert decode_bytes(text.encode("gb18030")) == (text, "gb18030")


def test_meta_charset_gbk_page():
    page = f'<html><head><meta charset="gbk"><title>标题</title></head><body><p>{SIMPLIFIED[1]}</p></body></html>'
    assert decode_bytes(page.encode("gbk")) == (page, "gb18030")


def test_lying_label_is_overruled():
    """A page labelled Big5 (or ISO-8859-1) whose bytes are GBK is read as GBK."""
    body = "".join(SIMPLIFIED)
    for label in ("big5", "iso-8859-1", "utf-8"):
        page = f'<html><head><meta http-equiv="Content-Type" content="text/html; charset={label}"></head><body>{body}</body></html>'
        assert decode_bytes(page.encode("gbk")) == (page, "gb18030"), label


def test_outside_label_is_used_when_true():
    text = "Grüße aus Köln — déjà vu."
    assert decode_bytes(text.encode("cp1252"), declared="windows-1252") == (text, "cp1252")


def test_declared_charsets_reads_xml_and_meta():
    data = b'<?xml version="1.0" encoding="GB2312"?><html><meta charset=big5>'
    assert declared_charsets(data, "utf-8") == ["utf-8", "gb2312", "big5"]


def test_english_cp1252_text():
    text = "“Déjà vu,” said the naïve café owner — twice.\n" * 3
    assert decode_bytes(text.encode("cp1252")) == (text, "cp1252")


def test_mostly_utf8_with_a_damaged_byte_is_kept_lossy():
    text = "\n".join(SIMPLIFIED * 20)
    data = text.encode() + b"\xff" + text.encode()
    got, enc = decode_bytes(data)
    assert enc == "utf-8 (lossy)"
    assert got == text + "\ufffd" + text


def test_lossy_utf8_counts_the_bad_bytes_not_the_real_replacement_characters():
    text = "\n".join(SIMPLIFIED * 20) + "\ufffd"  # one U+FFFD that was in the file
    got = decode(text.encode() + b"\xff\xfe" + text.encode())
    assert got.encoding == "utf-8 (lossy)" and got.replaced == 2
    assert decode(text.encode()).replaced == 0


@pytest.mark.parametrize("codec,name", [("gbk", "gb18030"), ("gb18030", "gb18030"), ("big5", "big5hkscs")])
def test_a_few_bad_bytes_in_gbk_or_big5_are_replaced_not_fatal(codec, name):
    text = "\n".join((SIMPLIFIED if codec != "big5" else TRADITIONAL) * 30)
    # stray bytes between characters, as a bad sector or a botched edit leaves them
    damaged = text[:200].encode(codec) + b"\xff" + text[200:800].encode(codec) + b"\x80" + text[800:].encode(codec)
    got = decode(damaged)
    assert got.encoding == f"{name} (lossy)" and got.replaced == 2
    assert got.text.replace("\ufffd", "") == text
    assert decode_bytes(damaged) == (got.text, got.encoding)


def test_a_gbk_page_with_a_meta_label_and_a_bad_byte_is_still_read():
    body = ("<html><head><meta charset='gbk'></head><body>" + "".join(SIMPLIFIED * 10) + "</body></html>")
    got = decode(body.encode("gbk") + b"\xff")
    assert got.encoding == "gb18030 (lossy)" and got.replaced == 1 and "话说天下大势" in got.text


def test_many_bad_bytes_are_still_refused():
    data = "\n".join(SIMPLIFIED * 5).encode("gbk")
    damaged = b"".join(data[i:i + 8] + b"\xff" for i in range(0, len(data), 8))  # one in nine bytes
    with pytest.raises(InputError, match="unknown encoding"):
        decode(damaged)


def test_binary_with_chinese_text_around_it_is_still_binary():
    text = "\n".join(SIMPLIFIED * 30).encode("gbk")
    with pytest.raises(InputError, match="^binary"):
        decode(text + bytes(range(1, 9)) * 60 + text)


@pytest.mark.parametrize(
    "data,what",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "PNG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "PDF"),
        (b"PK\x03\x04\x14\x00\x06\x00", "ZIP"),
        (b"text then a NUL\x00 byte", "NUL"),
        (bytes([1, 2, 3, 4, 5, 6, 7, 8, 14, 15]) * 50 + b"words", "control bytes"),
    ],
)
def test_binary_data_is_an_input_error_that_says_what_to_do(data, what):
    with pytest.raises(InputError) as e:
        decode_bytes(data)
    msg = str(e.value)
    assert msg.startswith("binary:")
    assert what in msg
    assert "UTF-8" in msg  # the fix


def test_random_garbage_is_rejected():
    data = random.Random(0).randbytes(4096)
    with pytest.raises(InputError, match="binary|unknown encoding"):
        decode_bytes(data)


def test_cjk_score_separates_right_and_wrong_decodes():
    text = "".join(SIMPLIFIED)
    wrong = text.encode("gbk").decode("big5hkscs", errors="replace")
    assert cjk_score(text) > 0.95
    assert cjk_score(wrong) < 0.6
    assert cjk_score("plain ASCII") == 1.0


# --- properties -----------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t"), max_size=200)


@given(_text)
def test_any_text_round_trips_through_utf8(text):
    assert decode_bytes(text.encode("utf-8")) == (text, "utf-8")


@given(_text, st.sampled_from(["utf-8-sig", "utf-16", "utf-32"]))
def test_any_text_round_trips_with_a_bom(text, codec):
    assert decode_bytes(text.encode(codec))[0] == text


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(2, 30))
def test_chinese_prose_round_trips_through_gb18030_and_big5(rng, n):
    simplified = _paragraph(SIMPLIFIED, rng, n)
    traditional = _paragraph(TRADITIONAL, rng, n)
    assert decode_bytes(simplified.encode("gb18030")) == (simplified, "gb18030")
    assert decode_bytes(traditional.encode("gb18030")) == (traditional, "gb18030")
    got, enc = decode_bytes(traditional.encode("big5"))
    assert (got, enc) == (traditional, "big5hkscs")


@given(st.binary(max_size=600))
def test_any_bytes_give_text_or_input_error(data):
    try:
        text, name = decode_bytes(data)
    except InputError as e:
        assert str(e).split(":", 1)[0] in ("binary", "unknown encoding")
    else:
        assert isinstance(text, str) and name


# --- the shared corpus ----------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name,codec,expected",
    [
        ("rulinwaishi.txt", "gb18030", {"gb18030"}),
        ("laocanyouji.txt", "gbk", {"gb18030"}),
        ("dongzhoulieguozhi.txt", "big5hkscs", {"big5hkscs"}),
        ("guanchangxianxingji.txt", "big5hkscs", {"big5hkscs"}),
        ("jigongquanzhuan.txt", "big5", {"big5", "big5hkscs"}),
    ],
)
def test_corpus_novels_whole_and_in_slices(corpus, name, codec, expected):
    text = (corpus / "zh_novels" / name).read_text(encoding="utf-8")
    got, enc = decode_bytes(text.encode(codec))
    assert got == text and enc in expected
    step = len(text) // 40
    for start in range(0, len(text) - 300, step):  # short pieces carry less evidence
        piece = text[start:start + 120]
        got, enc = decode_bytes(piece.encode(codec))
        assert got == piece and (enc in expected or enc == "utf-8"), (start, enc)


@pytest.mark.corpus
def test_corpus_english_book_in_cp1252(corpus):
    text = (corpus / "en_books" / "pride_and_prejudice_pg1342.txt").read_text(encoding="utf-8")
    assert decode_bytes(text.encode("cp1252")) == (text, "cp1252")


@pytest.mark.corpus
@pytest.mark.parametrize("codec", ["utf-8", "gb18030", "big5hkscs"])
def test_ten_megabytes_decode_exactly(corpus, codec):
    source = "dongzhoulieguozhi.txt" if codec == "big5hkscs" else "rulinwaishi.txt"
    text = (corpus / "zh_novels" / source).read_text(encoding="utf-8")
    unit = text.encode(codec)
    data = unit * (10_000_000 // len(unit) + 1)
    got, enc = decode_bytes(data)
    assert got == data.decode(codec)


@pytest.mark.parametrize("label", ["unicode_escape", "raw_unicode_escape", "base64", "rot13", "punycode",
                                   "utf-7", "a\x00b", "\udcff", "x" * 5000])
def test_a_hostile_charset_label_is_ignored_never_obeyed(label):
    data = ("\\ud800 " + "\n".join(SIMPLIFIED)).encode("gb18030")  # backslash escapes, as text
    text, name = decode_bytes(data, declared=label)
    assert name == "gb18030" and text.startswith("\\ud800 ")
    data = b"caf\xe9 \\ud800 and a plain English line " * 20
    text, name = decode_bytes(data, declared=label)
    assert "\\ud800" in text and all(not "\ud800" <= c <= "\udfff" for c in text)
