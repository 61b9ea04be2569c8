"""Channels on demand: a prepared text computes a channel when it is asked for, and only then,
with the same values as when every channel is computed."""
from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from fingerprint.engine import CHANNELS, prepare
from simtool import main

TEXT = "山城的雨下了整整一夜。陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。" * 20
WORK = ("sounds", "kgrams", "winnowed", "minhash", "simhash", "initials")


def test_minhash_alone_computes_no_other_channel():
    p = prepare("x", TEXT)
    assert not any(name in vars(p) for name in WORK)  # normalised, nothing else yet
    _ = p.minhash
    assert [name for name in WORK if name in vars(p)] == ["minhash"]


def test_each_channel_alone_equals_the_channel_computed_with_all():
    full = prepare("x", TEXT).compute()
    for channel, attr in (("minhash", "minhash"), ("simhash", "simhash"), ("pinyin", "initials"),
                          ("winnow", "winnowed")):
        alone = prepare("x", TEXT).compute((channel,))
        a, b = getattr(alone, attr), getattr(full, attr)
        for field in ("values", "value", "codes", "hashes", "positions"):
            if hasattr(a, field):
                assert np.array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field))), (channel, field)
    assert set(CHANNELS) == {"simhash", "minhash", "pinyin", "winnow", "translation"}
    alone = prepare("x", TEXT).compute(("translation",))
    assert np.array_equal(alone.translation_keys(), full.translation_keys())
    assert not any(name in vars(alone) for name in WORK)  # the translation channel computes no other


def test_simtool_fingerprint_translation_channel_names_the_language(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    r = CliRunner().invoke(main, ["fingerprint", str(tmp_path / "a.txt"), "--channels", "translation", "-q"])
    assert r.exit_code == 0, r.output
    assert '"translation"' in r.output and '"language": "zh"' in r.output and '"winnow"' not in r.output


def test_simtool_fingerprint_of_one_channel_prints_that_channel_only(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    r = CliRunner().invoke(main, ["fingerprint", str(tmp_path / "a.txt"), "--channels", "minhash", "-q"])
    assert r.exit_code == 0, r.output
    assert '"minhash"' in r.output and '"simhash"' not in r.output and '"winnow"' not in r.output


def test_fingerprints_from_worker_processes_are_the_same_bytes_in_the_same_order(tmp_path):
    for i in range(40):  # enough documents for two workers
        (tmp_path / f"{i:02d}.txt").write_text(TEXT[i:] + f"第{i}章", encoding="utf-8")
    runner = CliRunner()
    outputs = []
    for jobs in ("1", "2"):
        for fmt in ("jsonl", "csv"):
            r = runner.invoke(main, ["fingerprint", str(tmp_path), "--jobs", jobs, "--format", fmt, "-q"])
            assert r.exit_code == 0, r.output
            outputs.append(r.output)
    assert outputs[0] == outputs[2] and outputs[1] == outputs[3]
    ids = [line.split('"id": "', 1)[1].split('"', 1)[0] for line in outputs[0].splitlines()]
    assert len(ids) == 40 and ids == sorted(ids)
