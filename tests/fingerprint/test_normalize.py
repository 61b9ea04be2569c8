import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.normalize import CJK, LONG_WORD, WORD_TAG, normalize

TEXT = "他们说：“明天再来。”"


def test_fullwidth_case_punctuation_and_traditional_fold_to_one_form():
    a = normalize("他們說：ＯＫ，Ｈｅｌｌｏ！")
    b = normalize("他们说 ok hello")
    assert a.canonical == b.canonical == "他们说okhello"


def test_zero_width_and_junk_between_characters_are_dropped():
    junk = "他\u200b们*说^明~天@再#来※"
    assert normalize(junk).canonical == normalize("他们说明天再来").canonical


def test_units_keep_their_raw_offsets():
    raw = "第一章\n　　他們＊說"
    n = normalize(raw)
    for u, p in zip(n.canonical, n.unit_pos.tolist()):
        # each unit came from the raw character at its offset (after folding)
        assert normalize(raw[p]).canonical == u


def test_words_are_one_token_and_characters_one_each():
    n = normalize("他说hello world了")
    assert n.token_strings() == ["他", "说", "hello", "world", "了"]
    assert n.tokens[2] >= WORD_TAG and n.tokens[0] < WORD_TAG
    # raw span of a word token covers the whole word
    assert n.raw[n.tok_start[2] : n.tok_end[2]] == "hello"


def test_ad_lines_and_urls_are_removed_but_story_lines_kept():
    raw = (
        "天才一秒记住本站地址：www.biquge.com 最快更新！\n"
        "陈守义坐在茶馆靠窗的位置，眼睛一直望着对面那条窄巷。\n"
        "本章未完，请点击下一页继续阅读"
    )
    n = normalize(raw)
    assert n.canonical == "陈守义坐在茶馆靠窗的位置眼睛一直望着对面那条窄巷"
    reasons = {r for _, _, r in n.removed}
    assert "ad line" in reasons


def test_watermark_inside_a_long_paragraph_removes_only_the_watermark():
    story = "他把信反复看了十几遍终于决定来赴这个莫名其妙的约" * 3
    n = normalize(story[:30] + "丫丫电子书" + story[30:])
    assert n.canonical == story


def test_full_width_url_is_removed():
    n = normalize("正文内容很长很长的一段话。ｗｗｗ．ｂｉｑｕｇｅ．ｃｏｍ 后面还有正文内容很长的一段话")
    assert "biquge" not in n.canonical and "正文内容" in n.canonical


def test_empty_and_punctuation_only_give_no_units():
    assert len(normalize("")) == 0
    assert len(normalize("，。！？……———  \n\t")) == 0


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_normalises_with_offsets_inside_the_text(text):
    n = normalize(text)
    assert n.units.shape == n.unit_pos.shape
    if len(n.unit_pos):
        assert n.unit_pos.min() >= 0 and n.unit_pos.max() < len(text)
        assert np.all(np.diff(n.unit_pos) > 0)
    assert np.all(n.tok_start < n.tok_end)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5), min_size=1, max_size=50))
def test_cjk_text_keeps_one_unit_per_character(text):
    n = normalize(text, remove_ads=False)
    assert len(n) == len(text)
    assert np.all(n.kinds == CJK)


def test_a_blob_too_long_to_be_a_word_is_dropped_and_counted():
    story = "他说明天再来。"
    blob = "QUJD" * 100  # 400 letters and digits of base64, no break
    n = normalize(story + blob + story + "7" * 300 + "好")
    assert n.long_tokens == 2
    assert n.canonical == "他说明天再来他说明天再来好"
    spans = [(a, b) for a, b, why in n.removed if why == "long word"]
    assert spans == [(7, 407), (414, 714)]
    # offsets of what remains still point at the raw text
    assert n.raw[n.tok_start[-1] : n.tok_end[-1]] == "好"
    assert all(n.raw[p] in story + "好" for p in n.unit_pos.tolist())


def test_words_up_to_the_limit_stay_words():
    word = "a" * LONG_WORD
    n = normalize(f"他说{word}了")
    assert n.long_tokens == 0 and n.token_strings() == ["他", "说", word, "了"]


def test_a_url_in_a_long_run_of_letters_is_still_found():
    n = normalize("正文很长的一段话" + "x" * 5000 + " www.biquge.com 后面还有正文")
    assert "biquge" not in n.canonical and "后面还有正文" in n.canonical
    assert n.long_tokens == 1
