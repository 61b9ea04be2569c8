from pathlib import Path

import pytest

from fingerprint.engine import EngineConfig
from tracker.settings import Settings, SettingsError


def test_defaults_need_nothing_set(tmp_path):
    s = Settings.load({"XDG_DATA_HOME": str(tmp_path)})
    assert s.mongo_url == s.redis_url == s.broker_url == ""
    assert s.engine_config() == EngineConfig()  # the engine's own thresholds: simtool and the tracker agree
    assert s.index_params().winnow_sample == 1  # in-process index keeps every key


def test_environment_overrides_with_types(tmp_path):
    s = Settings.load({"FPT_HOME": str(tmp_path / "h"), "FPT_REDIS_URL": "redis://x:1/2",
                       "FPT_MIN_CONTAINMENT": "0.2", "FPT_WINNOW_SAMPLE": "16"})
    assert s.home == tmp_path / "h" and isinstance(s.home, Path)
    assert s.engine_config().min_containment == 0.2
    assert s.index_params().winnow_sample == 16  # sampling applies with Redis
    assert s.index_params().min_hits == 1  # and one sampled key makes a candidate


def test_config_file_then_environment(tmp_path):
    f = tmp_path / "fptrack.toml"
    f.write_text('[fptrack]\nmin_long_run = 300\nredis_prefix = "a:"\n')
    s = Settings.load({"FPT_CONFIG": str(f), "FPT_REDIS_PREFIX": "b:"})
    assert s.min_long_run == 300 and s.redis_prefix == "b:"


@pytest.mark.parametrize("env, words", [
    ({"FPT_MIN_CONTAINMENT": "lots"}, ["min_containment", "float"]),
    ({"FPT_MIN_CONTAINMENT": "2"}, ["min_containment", "between 0 and 1"]),
    ({"FPT_WINNOW_SAMPLE": "0"}, ["FPT_WINNOW_SAMPLE"]),
    ({"FPT_EVENTS_DAYS": "-1"}, ["FPT_EVENTS_DAYS", "0 (keep notification events for ever) or more days"]),
    ({"FPT_EVENTS_DAYS": "half a year"}, ["events_days", "int"]),
    ({"FPT_CONFIG": "/nonexistent.toml"}, ["FPT_CONFIG", "/nonexistent.toml"]),
])
def test_bad_settings_name_the_setting(env, words):
    with pytest.raises(SettingsError) as e:
        Settings.load(env)
    for w in words:
        assert w in str(e.value)


def test_unknown_key_in_the_file_is_refused(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("colour = 'blue'\n")
    with pytest.raises(SettingsError, match="unknown setting 'colour'"):
        Settings.load({"FPT_CONFIG": str(f)})


def test_a_config_file_may_hold_other_parts_tables(tmp_path):
    cfg = tmp_path / "fptrack.toml"
    cfg.write_text('recrawl_hour = 4\n\n[discovery]\nsearch_per_page = 20\n', encoding="utf-8")
    assert Settings.load({"FPT_CONFIG": str(cfg), "FPT_HOME": str(tmp_path)}).recrawl_hour == 4
    cfg.write_text('[fptrack]\nrecrawl_hour = 6\n\n[discovery]\nsearch_per_page = 20\n', encoding="utf-8")
    assert Settings.load({"FPT_CONFIG": str(cfg), "FPT_HOME": str(tmp_path)}).recrawl_hour == 6
    cfg.write_text('recrawl_hour = 6\nnot_a_setting = 1\n', encoding="utf-8")
    with pytest.raises(SettingsError, match="not_a_setting"):
        Settings.load({"FPT_CONFIG": str(cfg), "FPT_HOME": str(tmp_path)})


def test_events_are_kept_180_days_and_the_file_or_environment_may_say_otherwise(tmp_path):
    assert Settings.load({"FPT_HOME": str(tmp_path)}).events_days == 180
    cfg = tmp_path / "fptrack.toml"
    cfg.write_text("[fptrack]\nevents_days = 0\n", encoding="utf-8")
    assert Settings.load({"FPT_CONFIG": str(cfg), "FPT_HOME": str(tmp_path)}).events_days == 0
    assert Settings.load({"FPT_CONFIG": str(cfg), "FPT_EVENTS_DAYS": "30"}).events_days == 30
