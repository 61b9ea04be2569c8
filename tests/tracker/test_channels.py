"""A deployment that indexes a subset of the channels (FPT_CHANNELS) computes only those,
and still finds and verifies copies on their copied passages."""
from __future__ import annotations

import pytest

import fptrack_samples
from fingerprint.engine import CHANNELS, EngineConfig
from fingerprint.models import Document
from fingerprint.track import Tracker
from tracker.fingerprints import params_of
from tracker.settings import Settings, SettingsError
from web.demo.chapters import chapters_from_folder

CHAPTERS = chapters_from_folder(fptrack_samples.ORIGINALS)


def test_the_setting_names_the_channels_and_refuses_unknown_ones(tmp_path):
    s = Settings.load({"FPT_HOME": str(tmp_path), "FPT_CHANNELS": "winnow, minhash"})
    assert s.engine_config().channels == ("minhash", "winnow")  # in the engine's order
    with pytest.raises(SettingsError) as e:
        Settings.load({"FPT_HOME": str(tmp_path), "FPT_CHANNELS": "minhash,shingles"}).engine_config()
    assert "shingles" in str(e.value) and "FPT_CHANNELS" in str(e.value)


def test_a_minhash_and_winnow_tracker_prepares_nothing_else_and_finds_the_copies():
    config = EngineConfig(channels=("minhash", "winnow"))
    tracker = Tracker(config)
    for title, text in CHAPTERS:
        tracker.add(Document(title, text))
    for p in tracker.originals.values():
        assert "simhash" not in vars(p) and "initials" not in vars(p)
    title, text = CHAPTERS[1]
    page = tracker.prepare(Document("page", "转载自某小说网\n" + text))
    (m,) = tracker.match(page)
    assert m.original == title and m.verdict == "duplicate"
    assert "pinyin" not in m.scores and "simhash" not in m.scores and "minhash_jaccard" in m.scores
    assert "simhash" not in vars(page) and "initials" not in vars(page)


def test_the_fingerprint_parameters_name_a_subset_and_keep_the_full_set_as_it_was():
    full = params_of(EngineConfig(), Tracker().index.params)
    subset = params_of(EngineConfig(channels=("winnow",)), Tracker().index.params)
    assert "channels" not in full["index"] and subset["index"]["channels"] == ["winnow"]
    assert full["engine"] == subset["engine"]
    assert "whole_share" not in full["engine"]  # verdict thresholds change no key
    assert set(EngineConfig().channels) == set(CHANNELS)
