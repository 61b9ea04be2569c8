import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.errors import InputError
from fingerprint.normalize import normalize
from fingerprint.textkeys import exact_key

TEXT = "孙悟空大闹天宫，玉皇大帝请来如来佛祖。如来佛祖把孙悟空压在五行山下。孙悟空在五行山下等了五百年。"


def test_exact_key_shared_by_disguised_copies():
    key = exact_key(TEXT)
    assert len(key) == 32 and int(key, 16) >= 0
    assert exact_key(TEXT.replace("，", " ").replace("。", "\n")) == key  # punctuation and whitespace
    assert exact_key(TEXT.replace("孙悟空", "孫悟空")) == key  # traditional characters
    assert exact_key(normalize(TEXT)) == key
    assert exact_key(TEXT + "猪八戒") != key
    with pytest.raises(InputError):
        exact_key(b"bytes")


# ---- properties of the exact key ----------------------------------------------------------

CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)
# Lines that normalisation keeps whole (no ad phrase in them: "上一章一" is an ad line, dropped).
lines = st.lists(st.text(CJK, min_size=1, max_size=30).filter(lambda s: normalize(s).canonical == s),
                 min_size=1, max_size=8)
AD_LINE = "天才一秒记住本站地址：www.xbiquge-fake.com"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_the_key_of_a_text_is_the_key_of_its_normalised_form(text):
    key = exact_key(text)
    assert len(key) == 32 and key == exact_key(normalize(text)) == exact_key(text)


@settings(max_examples=150, deadline=None)
@given(lines, st.data())
def test_site_furniture_between_lines_and_spaces_between_characters_keep_the_key(ls, data):
    text = "\n".join(ls)
    at = data.draw(st.integers(0, len(ls)))
    mirrored = "\n".join(ls[:at] + [AD_LINE] + ls[at:])
    spaced = "\n".join(" ".join(line) for line in ls)
    assert exact_key(mirrored) == exact_key(text) == exact_key(spaced)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_texts_with_other_canonical_units_never_share_a_key(a, b):
    if normalize(a).canonical != normalize(b).canonical:
        assert exact_key(a) != exact_key(b)


@settings(max_examples=100, deadline=None)
@given(lines, st.text(CJK, min_size=1, max_size=5))
def test_more_text_or_another_sentence_end_changes_the_key(ls, extra):
    text = "\n".join(ls)
    assert exact_key(text + extra) != exact_key(text)
    one = "".join(ls)
    if len(one) > 1:
        assert exact_key(one[:1] + "。" + one[1:]) != exact_key(one)


def test_word_breaks_count_but_full_width_and_case_do_not():
    assert exact_key("ok 了") == exact_key("ＯＫ了") != exact_key("o k 了")
