"""The translation channel: names across romanisations, numbers, language, alignment, the
engine's verdict on a translated page, and the tracker finding it among other originals.

The translated pairs are real: the parallel corpus committed under bench/data/translation
(聊斋志异 and H. A. Giles's 1880 translation; 道德经 and James Legge's)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fingerprint.engine import CHANNELS, EngineConfig, judge, prepare
from fingerprint.models import Document
from fingerprint.normalize import normalize
from fingerprint.track import Tracker
from fingerprint.translation import align_texts, language_of, text_bags, translation_keys
from fingerprint.translation.numbers import en_values, zh_value
from fingerprint.translation.quick import read
from fingerprint.translation.romanize import chinese_name_keys, romanised
from tests.linear import assert_linear

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from translation_corpus import pairs

SAME_LANGUAGE = tuple(c for c in CHANNELS if c != "translation")


@pytest.fixture(scope="module")
def liaozhai():
    return pairs("liaozhai")


def _keys(token: str) -> set[str]:
    return {" ".join(r) for r in romanised(token)}


@pytest.mark.parametrize("chinese, spellings", [
    ("宝玉", ["Pao-yü", "Pao-yu", "Baoyu", "Bao-yu"]),
    ("曹操", ["Ts'ao Ts'ao", "Cao Cao", "Tsao Tsao"]),
    ("诸葛", ["Chu-ko", "Zhuge"]),
    ("悟空", ["Wu-k'ung", "Wukong"]),
])
def test_a_name_meets_its_romanisations(chinese, spellings):
    (key,) = [k for k in chinese_name_keys(chinese) if len(k.split()) == 2]
    for spelling in spellings:
        tokens = spelling.split()
        joined = {" ".join(a.split() + b.split()) for a in _keys(tokens[0]) for b in (
            _keys(tokens[1]) if len(tokens) > 1 else [""])}
        assert key in {j.strip() for j in joined}, spelling


def test_english_words_are_not_names():
    assert romanised("Dragon") == []
    assert romanised("Horse") == []


def test_numbers_in_both_languages():
    assert zh_value("三千六百") == 3600
    assert zh_value("二十五万") == 250_000
    assert zh_value("一九一三") == 1913
    assert en_values("three thousand six hundred men and 36 horses".split()) == [3600, 36]


def test_language_of_texts():
    assert language_of(normalize("话说天下大势，分久必合，合久必分。" * 3)) == "zh"
    assert language_of(normalize("It is a truth universally acknowledged, that a single man " * 3)) == "en"
    assert language_of(normalize("ok")) == ""
    # an English page under a Chinese menu is still English
    assert language_of(normalize("首页 排行 书架 " + "The priest said to the countryman that he would go. " * 10)) == "en"


def test_a_translation_is_judged_a_copy_with_aligned_sentence_pairs(liaozhai):
    pair = liaozhai[4]
    original, page = prepare("zh", pair.zh_text), prepare("en", pair.en_text)
    j = judge(page, original)
    m = j.match
    assert j.is_copy and m.verdict in ("duplicate", "contains")
    assert m.containment >= 0.8 and m.page_share >= 0.8
    assert m.scores["chapter_sentences"] == len(original.bags)
    assert 0 < m.scores["aligned_sentences"] <= m.scores["chapter_sentences"]
    assert len(m.spans) >= 10
    for s in m.spans:  # each span is an original sentence range beside a page sentence range
        assert 0 <= s.original_start < s.original_end <= len(pair.zh_text)
        assert 0 <= s.page_start < s.page_end <= len(pair.en_text)
    # in order on both sides, as a translation keeps its original's order
    assert [s.original_start for s in m.spans] == sorted(s.original_start for s in m.spans)
    assert [s.page_start for s in m.spans] == sorted(s.page_start for s in m.spans)


def test_the_reverse_direction(liaozhai):
    pair = liaozhai[6]
    j = judge(prepare("zh-page", pair.zh_text), prepare("en-original", pair.en_text))
    assert j.is_copy and j.match.containment >= 0.5


def test_other_stories_are_not_translations(liaozhai):
    wrong = 0
    for a, b in zip(liaozhai[:12], liaozhai[1:13]):
        wrong += judge(prepare("en", a.en_text), prepare("zh", b.zh_text)).is_copy
    assert wrong == 0


def test_translation_channel_off_judges_nothing_across_languages(liaozhai):
    pair = liaozhai[4]
    config = EngineConfig(channels=SAME_LANGUAGE)
    assert not judge(prepare("en", pair.en_text, config), prepare("zh", pair.zh_text, config), config).is_copy


def test_same_language_copies_keep_the_same_language_judgement(liaozhai):
    text = liaozhai[5].zh_text
    m = judge(prepare("page", "网友转载：" + text), prepare("orig", text)).match
    assert m.verdict == "duplicate" and "chapter_sentences" not in m.scores and "winnow" in m.scores


def test_keys_meet_only_across_languages(liaozhai):
    pair = liaozhai[4]
    zh, en = read(pair.zh_text, "zh"), read(pair.en_text, "en")
    posted = set(translation_keys(zh, "post").tolist())
    asked = set(translation_keys(en, "query").tolist())
    assert len(posted & asked) >= 10
    # English never meets English, Chinese never Chinese
    assert not set(translation_keys(en, "post").tolist()) & asked
    assert not posted & set(translation_keys(zh, "query").tolist())


def test_tracker_finds_translations_among_other_originals(liaozhai):
    tr = Tracker(EngineConfig())
    for p in liaozhai:
        tr.add(Document(f"zh-{p.number}", p.zh_text))
    found = 0
    for p in liaozhai[:10]:
        keys = [m.original for m in tr.match(Document(f"en-{p.number}", p.en_text))]
        assert set(keys) <= {f"zh-{p.number}"}, keys  # never another story
        found += keys == [f"zh-{p.number}"]
    assert found >= 9


def test_english_registered_in_english_gives_no_cross_lingual_match(liaozhai):
    tr = Tracker(EngineConfig())
    for p in liaozhai[:8]:
        tr.add(Document(f"en-{p.number}", p.en_text))
    for p in liaozhai[8:16]:
        assert tr.match(Document(f"page-{p.number}", p.en_text)) == []


def test_alignment_refuses_same_language_pairs():
    with pytest.raises(ValueError, match="one Chinese and one English"):
        align_texts(text_bags("甲乙丙丁。", "zh"), text_bags("戊己庚辛。", "zh"))


@pytest.mark.parametrize("make", [
    lambda n: "Pao-yü said. " * n,  # one name in every sentence
    lambda n: "Horse " * n,  # one word, no stop
    lambda n: ("Chia-" * n) + "x",  # a hyphenated run with no end
    lambda n: "the horse ran. " * n,
])
def test_english_bags_and_alignment_are_linear(make, liaozhai):
    zh = text_bags(liaozhai[4].zh_text * 2, "zh")
    assert_linear(lambda t: align_texts(zh, text_bags(t, "en")), make, 400)


def test_chinese_bags_are_linear():
    assert_linear(lambda t: text_bags(t, "zh"), lambda n: "马马马马。" * n, 2000)
    assert_linear(lambda t: text_bags(t, "zh"), lambda n: "三" * n, 4000)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_aligns_without_error(text):
    zh, en = text_bags(text, "zh"), text_bags(text, "en")
    a = align_texts(zh, en)
    assert 0.0 <= a.containment <= 1.0 and 0.0 <= a.page_share <= 1.0
    p = prepare("p", text)
    assert p.language in ("zh", "en", "")
    p.translation_keys("query")


def test_simtool_compare_shows_the_aligned_sentences(tmp_path, liaozhai):
    from click.testing import CliRunner

    from simtool import main

    pair = liaozhai[4]
    (tmp_path / "zh.txt").write_text(pair.zh_text, encoding="utf-8")
    (tmp_path / "en.txt").write_text(pair.en_text, encoding="utf-8")
    (tmp_path / "other.txt").write_text(liaozhai[5].en_text, encoding="utf-8")
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "zh.txt"), str(tmp_path / "en.txt"), "--passages", "2"])
    assert r.exit_code == 0, r.output
    assert "B is an English translation of A (Chinese)" in r.output
    first = judge(prepare("en", pair.en_text), prepare("zh", pair.zh_text)).match.spans[0]
    assert pair.zh_text[first.original_start:first.original_end][:8] in r.output
    assert " ".join(pair.en_text[first.page_start:first.page_end].split())[:30] in r.output
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "zh.txt"), str(tmp_path / "other.txt")])
    assert r.exit_code == 0 and "verdict:      different" in r.output
    assert "does not translate A (Chinese)" in r.output


def test_the_whole_text_reading_agrees_with_the_sentences(liaozhai):
    """The whole-text reading (no sentences, no segmentation: every dictionary word of one and
    two characters) finds the concepts the sentence bags find, and an original's posted keys
    meet its translation's query."""
    for pair in liaozhai[:4]:
        for text, lang in ((pair.zh_text, "zh"), (pair.en_text, "en")):
            bags = text_bags(text, lang)
            if lang == "zh":  # the first senses of each word, as the reading keeps them
                in_bags = {c for sent in bags.units for u in sent for c in u.tolist()[:3]}
            else:
                in_bags = {c for s in bags.concepts for c in s}
            found = set(read(text, lang).concepts)
            assert len(in_bags & found) >= 0.85 * len(in_bags), lang
        posted = set(prepare("o", pair.zh_text).translation_keys("post").tolist())
        asked = set(prepare("p", pair.en_text).translation_keys("query").tolist())
        assert len(posted & asked) >= 5
        assert len(posted) <= 52


def test_the_index_proposes_at_most_the_originals_sharing_the_most_keys():
    import numpy as np

    from fingerprint.index import IndexKeys, IndexParams, MemoryIndex, best_hits

    assert best_hits(np.array([5, 1, 9, 3]), np.array([4, 7, 4, 2]), 3, 2).tolist() == [1, 5]
    assert best_hits(np.array([5, 1, 9, 3]), np.array([4, 7, 4, 2]), 3).tolist() == [5, 1, 9]
    idx = MemoryIndex(EngineConfig(), IndexParams(translation_most=5))
    shared = np.arange(1, 4, dtype=np.uint64)
    for d in range(20):  # each shares 3 keys with the page, and original d shares d more
        own = np.arange(100 + 100 * d, 100 + 100 * d + d, dtype=np.uint64)
        idx.add(d, IndexKeys(winnow=[], pinyin=[], simhash=0, simhash_bits=0, bands=[],
                             translation=np.concatenate([shared, own])))
    asked = np.concatenate([shared] + [np.arange(100 + 100 * d, 100 + 100 * d + d, dtype=np.uint64)
                                       for d in range(20)])
    page = IndexKeys(winnow=[], pinyin=[], simhash=0, simhash_bits=0, bands=[], translation_query=asked)
    assert sorted(idx.candidates(page)) == [15, 16, 17, 18, 19]
