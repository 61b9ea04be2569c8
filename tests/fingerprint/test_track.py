import random
import re

import opencc
import pytest

from fingerprint.engine import EngineConfig, judge, prepare
from fingerprint.models import Document
from fingerprint.track import Tracker, track

from ..conftest import ROOT

ORIGINALS = sorted((ROOT / "samples" / "originals").glob("*.txt"))
CH = {p.stem: p.read_text(encoding="utf-8") for p in ORIGINALS}
ONE, TWO, THREE = (CH[f"山城旧事-第{n}章"] for n in "一二三")
NEWS = (ROOT / "samples" / "pages" / "unrelated-news.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tracker():
    t = Tracker()
    for key, text in CH.items():
        t.add(Document(key, text))
    return t


def found(tracker, text):
    return {m.original: m for m in tracker.match(Document("page", text))}


def test_whole_copy_in_site_boilerplate_is_a_duplicate(tracker):
    page = "天才一秒记住本站地址：www.biquge.com\n" + ONE + "\n本章未完，请点击下一页继续阅读"
    m = found(tracker, page)
    assert set(m) == {"山城旧事-第一章"}
    assert m["山城旧事-第一章"].verdict == "duplicate"
    assert m["山城旧事-第一章"].containment > 0.95


def test_split_pages_each_hold_part_of_the_chapter(tracker):
    cut = len(TWO) // 2
    a, b = found(tracker, TWO[:cut]), found(tracker, TWO[cut:])
    assert set(a) == set(b) == {"山城旧事-第二章"}
    total = a["山城旧事-第二章"].containment + b["山城旧事-第二章"].containment
    assert 0.9 < total <= 1.05
    assert a["山城旧事-第二章"].page_share > 0.9


def test_merged_chapters_match_both(tracker):
    m = found(tracker, ONE + TWO)
    assert set(m) == {"山城旧事-第一章", "山城旧事-第二章"}
    assert all(x.verdict == "contains" for x in m.values())


def test_excerpt_inside_unrelated_text_is_found_with_its_share(tracker):
    piece = THREE[200:300]
    m = found(tracker, NEWS + piece + NEWS)
    assert set(m) == {"山城旧事-第三章"}
    assert 0.08 < m["山城旧事-第三章"].containment < 0.2
    assert m["山城旧事-第三章"].verdict == "excerpt"


def test_traditional_script_homophones_junk_and_pinyin_words_are_found(tracker):
    trad = opencc.OpenCC("s2t").convert(THREE)
    rnd = random.Random(1)
    junk = "".join(c + (rnd.choice("*^~@#") if rnd.random() < 0.2 else "") for c in THREE)
    homo = THREE.replace("守", "手").replace("信", "心").replace("石", "十")
    piny = THREE.replace("母亲", "muqin").replace("账本", "zhangben")
    for page in (trad, junk, homo, piny):
        m = found(tracker, page)
        assert set(m) == {"山城旧事-第三章"}
        assert m["山城旧事-第三章"].containment > 0.85


def test_reordered_paragraphs_still_match(tracker):
    paras = [p for p in ONE.split("\n") if p.strip()]
    random.Random(3).shuffle(paras)
    m = found(tracker, "\n".join(paras))
    assert m["山城旧事-第一章"].containment > 0.9
    assert len(m["山城旧事-第一章"].spans) > 3


def test_unrelated_page_matches_nothing(tracker):
    assert found(tracker, NEWS) == {}


def test_spans_point_at_the_copied_text_in_both(tracker):
    piece = THREE[300:420]
    page = NEWS + piece + NEWS
    m = found(tracker, page)["山城旧事-第三章"]
    s = max(m.spans, key=lambda s: s.length)
    assert page[s.page_start : s.page_end] in THREE
    assert THREE[s.original_start : s.original_end] == page[s.page_start : s.page_end]
    assert s.page_start >= len(NEWS) - 2


def test_judge_is_stable_and_parameters_apply():
    o = prepare("o", THREE)
    p = prepare("p", NEWS + THREE[:200] + NEWS)
    j1, j2 = judge(p, o), judge(p, o)
    assert j1.match == j2.match and j1.is_copy
    strict = EngineConfig(min_containment=0.5, min_page_share=0.9, min_long_run=1000)
    assert not judge(p, o, strict).is_copy


def test_empty_page_is_counted_not_matched(tracker):
    before = len(tracker.stats.empty)
    assert tracker.match(Document("ads", "天才一秒记住本站地址：www.x.com")) == []
    assert len(tracker.stats.empty) == before + 1


def test_candidates_come_from_the_indexes_not_a_scan(tracker):
    p = tracker.prepare(Document("p", NEWS))
    assert tracker.candidates(p) == {}


@pytest.mark.corpus
def test_real_novel_copies_found_and_other_chapters_not(corpus):
    text = (corpus / "zh_novels" / "sanguoyanyi.txt").read_text(encoding="utf-8")
    chapters = re.split(r"\n(?=第[一二三四五六七八九十百]+回)", text)[1:]
    assert len(chapters) == 120
    originals = [Document(f"c{i}", c) for i, c in enumerate(chapters[:40])]
    pages = [Document(f"p{i}", "手机阅读本站：m.xxx.com\n" + c) for i, c in enumerate(chapters[:40])]
    pages += [Document(f"neg{i}", c) for i, c in enumerate(chapters[40:80])]
    matches = track(originals, pages)
    pairs = {(m.page, m.original) for m in matches}
    assert pairs == {(f"p{i}", f"c{i}") for i in range(40)}


def test_character_units_miss_homophones_that_syllable_units_catch():
    """In syllables a homophone is the same unit; in characters it is a substitution, which the
    anchors (the exact passages, scores["winnow"]) leave out and the coverage fills in place."""
    homo = THREE.replace("守", "手").replace("的", "地").replace("一", "衣").replace("了", "乐")
    by_sound = judge(prepare("p", homo), prepare("o", THREE)).match
    chars = EngineConfig(winnow_units="characters")
    by_char = judge(prepare("p", homo, chars), prepare("o", THREE, chars), chars).match
    assert by_sound.scores["winnow"] > 0.99 and by_sound.scores["longest_run"] > 1.5 * by_char.scores["longest_run"]
    assert by_char.scores["winnow"] < by_sound.scores["winnow"] - 0.1
    assert by_sound.containment > 0.95 and by_char.containment > 0.95  # the page carries all of it either way


def test_a_long_verbatim_passage_counts_even_when_a_small_share_of_a_long_chapter():
    o = prepare("o", THREE + TWO + ONE)  # ~2,100 units: the passage is under 10% of it
    page = prepare("p", NEWS * 2 + THREE[100:300] + NEWS * 2)  # and under 10% of the page
    base = EngineConfig(min_containment=0.1, min_page_share=0.5)
    j = judge(page, o, base)
    assert j.match.containment < 0.1 and j.match.page_share < 0.5
    assert j.is_copy and j.match.scores["longest_run"] >= base.min_long_run
    assert not judge(page, o, EngineConfig(min_containment=0.1, min_page_share=0.5, min_long_run=500)).is_copy


def test_repeated_phrases_in_the_page_do_not_cut_a_copied_run():
    import numpy as np

    from fingerprint.evidence import align
    from fingerprint.hashing import kgram_hashes

    rng = np.random.default_rng(5)
    orig = rng.integers(0, 400, 300).astype(np.uint64)
    phrase = orig[100:112]
    page = np.concatenate([phrase, rng.integers(400, 800, 50).astype(np.uint64), orig, phrase])
    runs = align(kgram_hashes(orig, 8), kgram_hashes(page, 8), 8, min_run=20, max_gap=8)
    assert [(r.o_start, r.o_end, r.p_start, r.p_end) for r in runs] == [(0, 300, 62, 362)]
