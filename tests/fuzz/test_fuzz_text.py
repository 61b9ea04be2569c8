"""Fuzzing the engine's text entry points: no input, however broken, may raise.

normalize, prepare, judge and split_chapters must give a clean result (possibly empty)
for any string; decode_bytes gives text or its documented InputError (its callers turn
that into a message naming the file) for any bytes.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fingerprint.chapters import split_chapters
from fingerprint.engine import judge, prepare
from fingerprint.errors import InputError
from fingerprint.normalize import LONG_WORD, normalize
from pagetext.encoding import decode_bytes
from tests.fuzz.strategies import hostile_texts, texts

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(hostile_texts)
def test_normalize_gives_units_with_offsets_into_the_text(text):
    n = normalize(text)
    assert n.units.shape == n.unit_pos.shape == n.kinds.shape
    assert n.tokens.shape == n.tok_start.shape == n.tok_end.shape
    if len(n.unit_pos):
        assert 0 <= n.unit_pos.min() and n.unit_pos.max() < len(text)
        assert np.all(np.diff(n.unit_pos) > 0)
    assert np.all(n.tok_start < n.tok_end) and (len(n) == 0 or n.tok_end.max() <= len(text))
    assert all(len(w) <= LONG_WORD for w in n.words.values())
    assert n.long_tokens == sum(1 for *_, why in n.removed if why == "long word")
    assert all(0 <= a < b <= len(text) for a, b, _ in n.removed)
    assert isinstance(n.canonical, str)


@FUZZ
@given(hostile_texts, hostile_texts)
def test_prepare_and_judge_any_two_texts(page_text, original_text):
    page, original = prepare("page", page_text), prepare("original", original_text)
    j = judge(page, original)
    assert j.match.verdict in ("duplicate", "contains", "part", "excerpt", "different")
    assert 0.0 <= j.match.similarity <= 1.0
    for s in j.match.spans:
        assert 0 <= s.page_start <= s.page_end <= len(page_text)
        assert 0 <= s.original_start <= s.original_end <= len(original_text)


@FUZZ
@given(hostile_texts)
def test_a_text_judged_against_itself(text):
    p = prepare("p", text)
    j = judge(p, p)
    assert j.match.verdict in ("duplicate", "different")


_HEADINGS = st.sampled_from(("第一章", "第 二 回 ", "第一百零八回", "Chapter IV", "正文 第三章 标题", "卷一 第1章", "第x章"))


@FUZZ
@given(st.lists(st.one_of(hostile_texts, _HEADINGS), max_size=8).map("\n".join))
def test_split_chapters_covers_the_text_in_order(text):
    chapters = split_chapters(text)
    end = 0
    for c in chapters:
        assert c.text == text[c.start : c.end]
        assert end <= c.start <= c.body_start <= c.end <= len(text)
        end = c.end


_CODECS = ("utf-8", "gbk", "gb18030", "big5", "utf-16-le", "utf-16", "utf-32", "latin-1", "shift_jis")
_LABELS = st.sampled_from((None, "", "gbk", "utf-8", "big5", "utf-16", "x-gbk", "bogus", "base64", "rot13",
                           "unicode_escape", "\ud800"))


def _encoded(text: str, codec: str) -> bytes:
    return text.encode(codec, errors="surrogatepass" if codec.startswith("utf") else "replace")


_BYTES = st.one_of(
    st.binary(max_size=3000),
    st.builds(_encoded, texts, st.sampled_from(_CODECS)),
    st.builds(lambda a, b: a + b, st.builds(_encoded, texts, st.sampled_from(_CODECS)), st.binary(max_size=40)),
)


@FUZZ
@given(_BYTES, _LABELS)
def test_decode_bytes_gives_text_or_its_input_error(data, declared):
    try:
        text, encoding = decode_bytes(data, declared=declared)
    except InputError:
        return  # documented: binary or undecodable data; callers report it with the file name
    assert isinstance(text, str) and isinstance(encoding, str) and encoding
