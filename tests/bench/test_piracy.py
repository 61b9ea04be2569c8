from __future__ import annotations

import random
import re

import numpy as np
import pytest
from pypinyin import lazy_pinyin

from bench import piracy
from bench.baseline import Baseline, clean_codepoints, ngram_hashes, shared_count
from bench.piracy import Page, Simulator, Source
from fingerprint.chapters import split_chapters
from fingerprint.models import Document

PARAS = [
    "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚汉分争，又并入于汉。",
    "汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓灵二帝。",
    "桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。时有宦官曹节等弄权。",
    "窦武、陈蕃谋诛之，机事不密，反为所害，中涓自此愈横。建宁二年四月望日，帝御温德殿。方升座，殿角狂风骤起。",
    "只见一条大青蛇，从梁上飞将下来，蟠于椅上。帝惊倒，左右急救入宫，百官俱奔避。须臾，蛇不见了。",
    "忽然大雷大雨，加以冰雹，落到半夜方止，坏却房屋无数。建宁四年二月，洛阳地震；又海水泛溢，沿海居民，尽被大浪卷入海中。",
] * 3
BODY = "\n".join(PARAS)
SRC = Source("novel_001", "第一回 宴桃园豪杰三结义", BODY)
NEXT = Source("novel_002", "第二回 张翼德怒鞭督邮", BODY[::-1])
FILLER = "\n".join(["　　却说那乔俊行了五六日，早到北新关，歇船上岸，叫一乘轿子抬了春香，自随着径入武林门里。"] * 40)
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def sim() -> Simulator:
    return Simulator(seed=7, filler=[FILLER])


def _call(name, sim, src=SRC, key="k"):
    fn = piracy.TRANSFORMS[name]
    return fn(sim, src, key, NEXT) if name == "merged" else fn(sim, src, key)


@pytest.mark.parametrize("name", sorted(piracy.TRANSFORMS))
def test_every_transformation_is_seeded_and_has_ground_truth(sim, name):
    a = _call(name, sim)
    b = _call(name, Simulator(seed=7, filler=[FILLER]))
    assert [p.text for p in a] == [p.text for p in b]
    assert all(isinstance(p, Page) and p.kind for p in a)
    assert all("novel_001" in p.copies for p in a)
    assert len({p.key for p in a}) == len(a)
    if name not in ("traditional",):  # s2t is deterministic by nature
        c = _call(name, Simulator(seed=8, filler=[FILLER]))
        assert [p.text for p in a] != [p.text for p in c]
    # Other page keys do not change the page: randomness is per page.
    assert _call(name, sim, key="k")[0].text == a[0].text


@pytest.mark.parametrize("name", sorted(piracy.TRANSFORMS))
def test_unregistered_sources_copy_nothing(sim, name):
    src = Source("novel_099", SRC.title, BODY, registered=False)
    nxt_registered = name == "merged"
    for p in _call(name, sim, src=src):
        # A merged page also holds the (registered) next chapter, so only that one counts.
        assert p.copies == (("novel_002",) if nxt_registered else ())
        assert "novel_099" in p.derived_from


def test_boilerplate_wraps_the_whole_chapter_with_watermarks(sim):
    (p,) = piracy.boilerplate(sim, SRC, "k")
    for para in PARAS:
        assert para in p.text
    assert "天才一秒记住本站地址：www." in p.text
    assert "本章未完，请点击下一页继续阅读" in p.text
    assert re.search(r"手机用户请浏览m\.[a-z0-9]+\.[a-z]+阅读", p.text)
    assert p.text.index(SRC.title) < p.text.index(PARAS[0])
    assert len(p.text) > len(BODY) + 100


def test_split_pages_concatenate_to_the_body(sim):
    seen = set()
    for seed in range(12):
        pages = piracy.split(Simulator(seed), SRC, "k")
        seen.add(len(pages))
        assert 2 <= len(pages) <= 3
        assert "".join(p.payload[0] for p in pages) == BODY
        for i, p in enumerate(pages):
            assert p.payload[0] in p.text
            assert p.copies == ("novel_001",)
            assert p.key == f"k_p{i + 1}"
            assert len(p.payload[0]) > len(BODY) / 5
        assert "本章未完" in pages[0].text
    assert seen == {2, 3}


def test_merged_holds_both_chapters(sim):
    (p,) = piracy.merged(sim, SRC, "k", NEXT)
    for para in SRC.body.split("\n") + NEXT.body.split("\n"):
        assert para in p.text
    assert p.text.index(PARAS[0]) < p.text.index(NEXT.title, p.text.index(PARAS[0]))
    assert p.copies == ("novel_001", "novel_002")


def test_excerpt_is_a_tenth_inside_unrelated_text(sim):
    (p,) = piracy.excerpt(sim, SRC, "k")
    piece = p.payload[0]
    assert piece in BODY and piece in p.text
    assert abs(len(piece) - len(BODY) * 0.1) <= 2
    rest = p.text.replace(piece, "")
    assert len(rest) > 5 * len(piece)
    # The rest is unrelated: it comes from the filler.
    assert "乔俊" in rest
    with pytest.raises(ValueError, match="unrelated text"):
        piracy.excerpt(Simulator(1), SRC, "k")


def test_homophone_table_is_symmetric_and_same_sound():
    table = piracy.homophone_table()
    assert len(table) > 3000
    for ch in ["说", "是", "天", "下"]:
        assert ch in table and ch not in table[ch]
        for h in table[ch]:
            assert lazy_pinyin(h) == lazy_pinyin(ch)
            assert piracy.is_common_char(h)
            assert ch in table[h]
    assert piracy.is_common_char("的") and not piracy.is_common_char("鬱") and not piracy.is_common_char("a")


def test_homophones_keep_length_and_change_a_tenth_with_same_pinyin(sim):
    (p,) = piracy.homophones(sim, SRC, "k")
    out = p.text[len(SRC.title) + 2 :]
    assert len(out) == len(BODY)
    diff = [(a, b) for a, b in zip(BODY, out) if a != b]
    n_cjk = len(CJK.findall(BODY))
    assert 0.08 * n_cjk <= len(diff) <= 0.11 * n_cjk
    for a, b in diff:
        assert CJK.match(a) and CJK.match(b)
        assert lazy_pinyin(a) == lazy_pinyin(b)


def test_traditional_differs_and_t2s_brings_it_back(sim):
    import opencc

    (p,) = piracy.traditional(sim, SRC, "k")
    out = p.text[p.text.index("\n\n") + 2 :]
    assert out != BODY and len(out) == len(BODY)
    changed = sum(a != b for a, b in zip(BODY, out))
    assert changed > 0.1 * len(BODY)
    back = opencc.OpenCC("t2s").convert(out)
    same = sum(a == b for a, b in zip(BODY, back))
    assert same >= 0.98 * len(BODY)


def test_simplified_converts_traditional_originals(sim):
    trad = Source("trad_001", "第一回 說楔子", "話說這個人來了，見了國王。" * 20)
    (p,) = piracy.simplified(sim, trad, "k")
    assert "话说这个人来了，见了国王。" in p.text and "這" not in p.text


def test_junk_after_about_15_percent_of_characters(sim):
    (p,) = piracy.junk(sim, SRC, "k")
    out = p.text[len(SRC.title) + 2 :]
    junk = [c for c in out if c in piracy.JUNK_CHARS]
    visible = sum(1 for c in BODY if not c.isspace())
    assert 0.11 * visible <= len(junk) <= 0.19 * visible
    assert "".join(c for c in out if c not in piracy.JUNK_CHARS) == BODY
    # Never two junk symbols in a row: one after a character.
    assert not re.search(f"[{re.escape(piracy.JUNK_CHARS)}]{{2}}", out)


def test_pinyin_replaces_a_tenth_of_characters_with_their_pinyin(sim):
    (p,) = piracy.pinyin_words(sim, SRC, "k")
    out = p.text[len(SRC.title) + 2 :]
    n_cjk = len(CJK.findall(BODY))
    left = len(CJK.findall(out))
    assert round(n_cjk * 0.1) == n_cjk - left
    words = re.findall(r"[a-z]+", out)
    assert words and all(w.isascii() for w in words)
    # Undo: every replaced character is its lazy pinyin.
    rng = random.Random("7:k")
    assert piracy.to_pinyin(BODY, rng) == out
    assert "shuo" in piracy.to_pinyin("说" * 10, random.Random(0), share=1.0)


def test_html_gbk_page(sim):
    (p,) = piracy.html_gbk(sim, SRC, "k")
    assert p.ext == "html" and p.encoding == "gb18030"
    raw = p.to_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    html = raw.decode("gbk")
    assert '<meta charset="gbk">' in html
    content = re.search(r'<div id="content">(.*?)</div>', html, re.S).group(1)
    assert content.count("<br><br>") >= len(PARAS) - 1
    for para in PARAS[:6]:
        assert para in content
    assert "<script" in html and 'id="sidebar"' in html and "上一章" in html


def test_reordered_keeps_paragraphs_changes_order(sim):
    (p,) = piracy.reordered(sim, SRC, "k")
    out = p.text[len(SRC.title) + 2 :].split("\n")
    assert sorted(out) == sorted(PARAS)
    assert out != PARAS
    few = piracy.reorder_paragraphs("甲说了一句。乙又说了一句。丙不说。丁笑了。", random.Random(1))
    assert sorted(few.split("\n")) == sorted(["甲说了一句。", "乙又说了一句。", "丙不说。", "丁笑了。"])


def test_combined_has_boilerplate_homophones_and_junk(sim):
    (p,) = piracy.combined(sim, SRC, "k")
    assert "天才一秒记住本站地址" in p.text
    assert any(c in p.text for c in piracy.JUNK_CHARS)
    stripped = "".join(c for c in p.text if c not in piracy.JUNK_CHARS)
    assert PARAS[0] not in stripped  # homophones changed the text ...
    kept = sum(1 for para in PARAS if para[:6] in stripped)
    assert kept > 0  # ... but not all of it


# ------------------------------------------------------------------ baseline


def test_baseline_normalisation_and_ngrams():
    assert "".join(map(chr, clean_codepoints("他 说：「好！」\n*OK*"))) == "他说好OK"
    a = ngram_hashes("一二三四五六七八九十", n=8)
    assert a.dtype == np.uint64 and len(a) == 3 and np.all(np.diff(a) > 0)
    assert len(ngram_hashes("一二三", n=8)) == 0
    b = ngram_hashes("一二三，四五六七八九", n=8)
    assert shared_count(a, b) == 2


def test_baseline_finds_copies_and_skips_unrelated(sim):
    origs = [Document("o1", BODY), Document("o2", FILLER)]
    pages = [
        Document("copy", piracy.boilerplate(sim, SRC, "x")[0].text),
        Document("junk", piracy.junk(sim, SRC, "y")[0].text),
        Document("other", "今天天气很好，我们去公园散步，看见许多人在放风筝。" * 20),
    ]
    got = {(m.page, m.original) for m in Baseline().compare(origs, pages)}
    assert got == {("copy", "o1"), ("junk", "o1")}
    with pytest.raises(ValueError):
        Baseline(n=0)


# ------------------------------------------------------------------ chapters feed the simulator


def test_split_chapters_feeds_sources(sim):
    text = "\n".join(f"第{z}回 标题\n{BODY}" for z in ["一", "二", "三"])
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2, 3]
    srcs = [Source(f"n_{c.number:03d}", c.heading, c.body) for c in chs]
    pages = piracy.split(sim, srcs[1], "s")
    assert "".join(p.payload[0] for p in pages) == chs[1].body


# ------------------------------------------------------------------ the benchmark driver


def test_quality_without_corpus_is_a_clear_error(tmp_path, capsys):
    from bench import quality

    assert quality.main(["--corpus", str(tmp_path / "nowhere"), "--quick"]) == 2
    err = capsys.readouterr().err
    assert "corpus was not found" in err and "nowhere" in err and "--corpus" in err and "Traceback" not in err


@pytest.mark.corpus
def test_quality_ground_truth_on_the_corpus(corpus):
    from bench import quality

    nv = quality.load_novel(corpus / "zh_novels" / "sanguoyanyi.txt", "sanguoyanyi", True)
    assert nv.registered == list(range(1, 61)) and nv.unregistered == list(range(61, 121))
    alt = quality.alt_pages(corpus, {"sanguoyanyi": nv}, every=1)
    sg = [p for p in alt if p.kind == "alt:sanguoyanyi_webstore"]
    assert len(sg) == 120
    assert [p.copies for p in sg[:2]] == [("sanguoyanyi_001",), ("sanguoyanyi_002",)]
    assert all(p.copies == () for p in sg[60:])
    # Works that are not registered give pages that must match nothing.
    assert all(p.copies == () for p in alt if p.kind != "alt:sanguoyanyi_webstore")


def test_strength_scales_the_disguises():
    strong = Simulator(seed=7, filler=[FILLER], strength=3)
    (p,) = piracy.homophones(strong, SRC, "k")
    out = p.text[len(SRC.title) + 2 :]
    n_cjk = len(CJK.findall(BODY))
    assert sum(a != b for a, b in zip(BODY, out)) >= 0.25 * n_cjk
    (e,) = piracy.excerpt(strong, SRC, "k")
    assert abs(len(e.payload[0]) - len(BODY) / 30) <= 2
    with pytest.raises(ValueError):
        Simulator(strength=0)
