"""The contract every CandidateIndex backend keeps; backends' test modules run it
by defining a `make_index(config, params)` fixture."""
from functools import cache

import numpy as np
import pytest

from bench.translation_corpus import pairs
from fingerprint.engine import EngineConfig, prepare
from fingerprint.hashing import mix64
from fingerprint.index import IndexParams, index_keys

from ..conftest import ROOT

CH = {p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "originals").glob("*.txt"))}
NEWS = (ROOT / "samples" / "pages" / "unrelated-news.txt").read_text(encoding="utf-8")
CONFIG = EngineConfig()
PREPARED = {i: prepare(k, t, CONFIG) for i, (k, t) in enumerate(CH.items())}
ZH_BASE, EN_BASE = 100, 200  # document numbers of the Liaozhai stories' Chinese and English texts


@cache
def liaozhai() -> tuple[dict[int, object], dict[int, object]]:
    """The development stories of bench/data/translation/liaozhai, prepared: (Chinese texts by
    ZH_BASE + i, English translations by EN_BASE + i)."""
    ps = pairs("liaozhai", "dev")
    zh = {ZH_BASE + i: prepare(f"zh{p.number}", p.zh_text, CONFIG) for i, p in enumerate(ps)}
    en = {EN_BASE + i: prepare(f"en{p.number}", p.en_text, CONFIG) for i, p in enumerate(ps)}
    return zh, en


class IndexContract:
    params = IndexParams()

    @pytest.fixture
    def index(self, make_index):
        idx = make_index(CONFIG, self.params)
        idx.add_many((i, index_keys(p, CONFIG, idx.params)) for i, p in PREPARED.items())
        return idx

    def keys(self, text, index):
        return index_keys(prepare("page", text, CONFIG), CONFIG, index.params)

    def test_every_original_finds_itself_through_every_channel(self, index):
        assert len(index) == len(PREPARED)
        for i, p in PREPARED.items():
            found = index.candidates(index_keys(p, CONFIG, index.params))
            assert i in found
            assert found[i] == {"winnow", "pinyin", "simhash", "minhash"}

    def test_an_excerpt_is_proposed_by_the_position_channels(self, index):
        page = NEWS + list(CH.values())[2][100:400] + NEWS
        found = index.candidates(self.keys(page, index))
        assert 2 in found and "winnow" in found[2]

    def test_unrelated_text_proposes_nothing(self, index):
        assert index.candidates(self.keys(NEWS, index)) == {}

    def test_remove_and_readd(self, index):
        k0 = index_keys(PREPARED[0], CONFIG, index.params)
        index.remove(0)
        assert 0 not in index.candidates(k0) and len(index) == len(PREPARED) - 1
        index.add(0, k0)
        assert 0 in index.candidates(k0) and len(index) == len(PREPARED)

    def test_add_replaces_what_a_number_had(self, index):
        index.add(0, index_keys(prepare("x", NEWS, CONFIG), CONFIG, index.params))
        assert 0 not in index.candidates(index_keys(PREPARED[0], CONFIG, index.params))
        assert 0 in index.candidates(self.keys(NEWS, index))

    def test_clear_forgets_everything(self, index):
        index.clear()
        assert len(index) == 0
        assert index.candidates(index_keys(PREPARED[1], CONFIG, index.params)) == {}

    def test_empty_keys_are_neither_indexed_nor_matched(self, index):
        empty = index_keys(prepare("e", "，。", CONFIG), CONFIG, index.params)
        assert empty.empty
        index.add(99, empty)
        assert len(index) == len(PREPARED) and index.candidates(empty) == {}

    def test_max_df_drops_hashes_shared_by_too_many_originals(self, make_index):
        idx = make_index(CONFIG, IndexParams(max_df=2))
        k = index_keys(PREPARED[0], CONFIG, idx.params)
        for d in range(3):  # three originals with the same text
            idx.add(d, k)
        found = idx.candidates(k)
        assert all("winnow" not in ch and "pinyin" not in ch for ch in found.values())
        assert set(found) == {0, 1, 2}  # still proposed by the whole-text channels

    # -- the translation channel ------------------------------------------------------------------

    @pytest.fixture
    def bilingual(self, make_index):
        """An index of the Liaozhai stories in both languages (each text posted as an original)."""
        zh, en = liaozhai()
        idx = make_index(CONFIG, self.params)
        idx.add_many((d, index_keys(p, CONFIG, idx.params)) for d, p in {**zh, **en}.items())
        return idx

    def test_an_english_translation_proposes_its_chinese_original(self, bilingual):
        zh, en = liaozhai()
        proposed = 0
        for d, page in en.items():
            found = bilingual.candidates(index_keys(page, CONFIG, bilingual.params))
            proposed += "translation" in found.get(d - EN_BASE + ZH_BASE, ())
        assert proposed >= len(en) // 3  # 7 of the 17 development stories at 6 shared keys

    def test_a_chinese_chapter_proposes_its_english_translation(self, bilingual):
        zh, en = liaozhai()
        proposed = sum("translation" in bilingual.candidates(index_keys(p, CONFIG, bilingual.params)).get(
            d - ZH_BASE + EN_BASE, ()) for d, p in zh.items())
        assert proposed >= len(zh) // 3  # 7 of 17 the other way

    def test_english_never_meets_english_nor_chinese_chinese_in_this_channel(self, bilingual):
        zh, en = liaozhai()
        for pages, same in ((en, range(EN_BASE, EN_BASE + len(en))), (zh, range(ZH_BASE, ZH_BASE + len(zh)))):
            for d, page in pages.items():
                found = bilingual.candidates(index_keys(page, CONFIG, bilingual.params))
                assert not [o for o in same if "translation" in found.get(o, ())], d
                assert d in found  # a text finds itself through the other channels

    def test_translation_min_hits_decides(self, make_index):
        zh, en = liaozhai()
        d, page = next(iter(en.items()))
        k = index_keys(page, CONFIG, self.params)
        shared = np.intersect1d(k.translation_query, index_keys(zh[d - EN_BASE + ZH_BASE], CONFIG,
                                                                 self.params).translation).shape[0]
        assert shared >= 2
        for least, proposed in ((shared, True), (shared + 1, False)):
            params = IndexParams(winnow_sample=self.params.winnow_sample, pinyin_sample=self.params.pinyin_sample,
                                 translation_min_hits=least)
            idx = make_index(CONFIG, params)
            idx.add(7, index_keys(zh[d - EN_BASE + ZH_BASE], CONFIG, params))
            assert ("translation" in idx.candidates(k).get(7, ())) is proposed

    def test_a_channel_left_out_has_no_translation_keys(self):
        zh, _ = liaozhai()
        off = EngineConfig(channels=("winnow", "minhash"))
        k = index_keys(next(iter(zh.values())), off, self.params)
        assert k.translation.shape == k.translation_query.shape == (0,)
        on = index_keys(next(iter(zh.values())), CONFIG, self.params)
        assert on.translation.shape[0] > 20 and on.translation_query.shape[0] >= on.translation.shape[0]
        assert not np.intersect1d(on.translation, on.translation_query).shape[0]  # tagged apart


class SampledIndexContract(IndexContract):
    params = IndexParams(winnow_sample=8, pinyin_sample=4)

    def test_sampling_keeps_a_fraction_of_the_keys(self, make_index):
        full = index_keys(PREPARED[0], CONFIG, IndexParams())
        sampled = index_keys(PREPARED[0], CONFIG, self.params)
        assert 0 < len(sampled.winnow) < len(full.winnow) / 4
        assert set(sampled.winnow.tolist()) <= set(full.winnow.tolist())
        assert np.all(mix64(sampled.winnow) % np.uint64(8) == 0)
        assert 0 < len(sampled.pinyin) < len(full.pinyin)
