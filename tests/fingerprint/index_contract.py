"""The contract every CandidateIndex backend keeps; backends' test modules run it
by defining a `make_index(config, params)` fixture."""
import numpy as np
import pytest

from fingerprint.engine import EngineConfig, prepare
from fingerprint.hashing import mix64
from fingerprint.index import IndexParams, index_keys

from ..conftest import ROOT

CH = {p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "originals").glob("*.txt"))}
NEWS = (ROOT / "samples" / "pages" / "unrelated-news.txt").read_text(encoding="utf-8")
CONFIG = EngineConfig()
PREPARED = {i: prepare(k, t, CONFIG) for i, (k, t) in enumerate(CH.items())}


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


class SampledIndexContract(IndexContract):
    params = IndexParams(winnow_sample=8, pinyin_sample=4)

    def test_sampling_keeps_a_fraction_of_the_keys(self, make_index):
        full = index_keys(PREPARED[0], CONFIG, IndexParams())
        sampled = index_keys(PREPARED[0], CONFIG, self.params)
        assert 0 < len(sampled.winnow) < len(full.winnow) / 4
        assert set(sampled.winnow.tolist()) <= set(full.winnow.tolist())
        assert np.all(mix64(sampled.winnow) % np.uint64(8) == 0)
        assert 0 < len(sampled.pinyin) < len(full.pinyin)
