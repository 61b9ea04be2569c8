"""The parallel Chinese-English corpus (bench/translation_corpus.py, bench/data/translation/):
every committed pair loads, the counts are the manifest's, each pair is really aligned, and no
translation of 红楼梦 (held out for the final measurement) is in the data."""
from __future__ import annotations

import re

import pytest

from bench import translation_corpus as tc

from .conftest import need

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
MANIFEST = tc.DATA / "MANIFEST.md"
ROW = re.compile(r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$")

# Key terms of the Daodejing and Legge's usual English for them.
DAO_TERMS = {
    "道": "tao", "聖人": "sage", "水": "water", "天": "heaven", "民": "people", "德": "virtue",
    "母": "mother", "兵": "weapon", "國": "state", "谷": "valley", "嬰兒": "infant",
    "玄": "mysterious", "名": "name", "樸": "simplicity", "柔": "soft", "死": "death",
    "生": "life", "王": "king",
}


def manifest_rows() -> dict[str, tuple[int, ...]]:
    rows = {}
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line.strip())
        if m:
            rows[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    return rows


def test_works_and_counts_match_the_manifest():
    rows = manifest_rows()
    assert sorted(rows) == tc.works() == ["daodejing", "liaozhai"]
    for work, (n, dev, test, zh_bytes, en_bytes) in rows.items():
        ps = tc.pairs(work)
        assert len(ps) == n
        assert len(tc.pairs(work, tc.DEV)) == dev and len(tc.pairs(work, tc.TEST)) == test
        assert sum(len(p.zh_text.encode("utf-8")) for p in ps) == zh_bytes
        assert sum(len(p.en_text.encode("utf-8")) for p in ps) == en_bytes


def test_held_out_sets_are_not_empty_and_do_not_overlap_the_development_set():
    dev = {(p.work, p.number) for w in tc.works() for p in tc.pairs(w, tc.DEV)}
    test = {(p.work, p.number) for w in tc.works() for p in tc.pairs(w, tc.TEST)}
    assert dev and not dev & test
    assert {w for w, _ in test} == {"liaozhai", "daodejing"}


@pytest.mark.parametrize("work", ["liaozhai", "daodejing"])
def test_every_pair_loads_with_chinese_on_one_side_and_english_on_the_other(work):
    ps = tc.pairs(work)
    numbers = [p.number for p in ps]
    assert numbers == sorted(set(numbers))
    for p in ps:
        assert len(CJK.findall(p.zh_text)) >= 20, p.title
        assert not CJK.search(p.en_text), p.title
        assert len(re.findall(r"[A-Za-z]", p.en_text)) >= 100, p.title
        assert p.zh_text == p.zh_text.strip() and p.en_text == p.en_text.strip()
    # No stray files: every text on disk belongs to an indexed pair.
    for side in ("zh", "en"):
        on_disk = sorted(int(f.stem) for f in (tc.DATA / work / side).glob("*.txt"))
        assert on_disk == numbers


def test_each_liaozhai_story_names_the_same_person_or_place_in_both_languages():
    for p in tc.pairs("liaozhai"):
        assert p.anchor_zh and p.anchor_en, p.title
        assert p.anchor_zh in p.zh_text, p.title
        assert p.anchor_en in " ".join(p.en_text.split()), p.title


def test_liaozhai_first_story_is_mr_sung_and_the_guardian_angel():
    first = tc.pairs("liaozhai")[0]
    assert first.number == 1 and first.split == tc.DEV
    assert first.zh_text.startswith("予姊丈之祖，宋公讳焘")
    assert first.en_text.startswith("My eldest sister’s husband’s grandfather, named Sung Tao")


def _terms_zh(text: str) -> set[str]:
    return {k for k in DAO_TERMS if k in text}


def _terms_en(text: str) -> set[str]:
    low = text.lower()
    return {k for k, v in DAO_TERMS.items() if v in low}


def _agreement(zh: str, en: str) -> float:
    a, b = _terms_zh(zh), _terms_en(en)
    return len(a & b) / len(a | b) if a | b else 1.0


def test_daodejing_chapters_agree_with_their_own_translation_better_than_with_a_neighbour():
    ps = tc.pairs("daodejing")
    assert [p.number for p in ps] == list(range(1, 82))
    n = len(ps)
    aligned = sum(_agreement(ps[i].zh_text, ps[i].en_text) for i in range(n)) / n
    for shift in (1, -1):
        shifted = sum(_agreement(ps[i].zh_text, ps[(i + shift) % n].en_text) for i in range(n)) / n
        assert aligned > 2 * shifted, (aligned, shifted)
    # Most chapters share at least one key term (a few short ones use none of the list).
    shared = sum(1 for p in ps if _terms_zh(p.zh_text) & _terms_en(p.en_text))
    assert shared >= 70
    assert "Tao" in ps[0].en_text and "道" in ps[0].zh_text


def test_no_translation_of_the_held_out_novel_is_in_the_data():
    banned = re.compile(r"pao-?y[uü]|bao-?yu|tai-?y[uü]|daiyu|hung lou|hong lou|red chamber|story of the stone",
                        re.IGNORECASE)
    for f in tc.DATA.rglob("*"):
        if f.is_file():
            text = f.read_text(encoding="utf-8")
            assert not banned.search(text), f
            if f.suffix == ".txt" and "/zh/" in f.as_posix():
                assert "宝玉" not in text and "黛玉" not in text, f


def test_unknown_work_and_split_name_the_fix():
    with pytest.raises(tc.TranslationCorpusError, match="available: daodejing, liaozhai"):
        tc.pairs("hongloumeng")
    with pytest.raises(tc.TranslationCorpusError, match="'dev'"):
        tc.pairs("liaozhai", "train")


def test_missing_shared_corpus_names_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("FPT_SHARED", str(tmp_path / "nowhere"))
    with pytest.raises(tc.TranslationCorpusError, match=re.escape(str(tmp_path / "nowhere" / "corpus" / "zh_novels"))):
        tc.shared_corpus()


def test_shared_novel_is_cut_into_the_chapters_the_tracker_registers():
    try:
        tc.shared_corpus()
    except tc.TranslationCorpusError as e:
        need(False, str(e))
    chapters = tc.shared_chapters("sanguoyanyi")
    assert sorted(chapters) == list(range(1, 121))
    assert "刘备" in chapters[1] and "桃园" in chapters[1]
    with pytest.raises(tc.TranslationCorpusError, match="sanguoyanyi"):
        tc.shared_chapters("no_such_novel")
