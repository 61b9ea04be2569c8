"""Crawl job and site names from the command line: checked before anything is made or deleted."""
from __future__ import annotations

import pytest

from crawler.frontier import Membership, clear_frontier, job_dir
from crawler.rules import RulesError, make_rules
from fingerprint.errors import InputError
from tracker.safe_names import JOB_FORM

from .test_crawl_site import fptrack


@pytest.mark.parametrize("job", ["../../outside", "ABSOLUTE"])
def test_fresh_with_a_job_outside_fpt_home_deletes_nothing_and_says_why(settings, tmp_path, job):
    outside = tmp_path / "outside" if job != "ABSOLUTE" else tmp_path / "abs"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    job = str(outside) if job == "ABSOLUTE" else job  # home is tmp_path/home: ../../outside is tmp_path/outside
    r = fptrack(settings, "crawl", "http://127.0.0.1:1/", "--job", job, "--fresh", check=False)
    assert r.returncode == 1 and JOB_FORM in r.stderr and "Traceback" not in r.stderr
    assert (outside / "precious.txt").read_text() == "keep me"
    assert not list(tmp_path.glob("*.lock")) and not (settings.home / "crawls").exists()


def test_the_frontier_refuses_a_path_outside_its_folder(settings, tmp_path):
    (tmp_path / "victim").mkdir()
    for job in ("../../victim", str(tmp_path / "victim"), "..", ".", ""):
        with pytest.raises(InputError):
            job_dir(settings, job)
        with pytest.raises(InputError):
            clear_frontier(settings, job)
        with pytest.raises(InputError):
            Membership(settings, job).join()
    assert (tmp_path / "victim").is_dir()
    assert job_dir(settings, "biquge") == (settings.home / "crawls" / "biquge").resolve()


def test_site_names_are_cleaned_in_rules_and_refused_with_the_form():
    assert make_rules({"name": "  笔趣阁-分站 ", "start_urls": ["http://b.test/"]}).name == "笔趣阁-分站"
    with pytest.raises(RulesError, match="site 'x': bad site name .* e.g. 'bad-name'"):
        make_rules({"name": "bad name/../"}, where="site 'x'")
    with pytest.raises(RulesError, match="site 'x': bad site name .* control character"):
        make_rules({"name": "evil\x1b[2J"}, where="site 'x'")


def test_sites_commands_take_names_with_stray_spaces(settings):
    r = fptrack(settings, "sites", "add", "  biquge ", "http://www.biquge.test/book/1/")
    assert "site biquge: 1 start URL" in r.stdout
    assert "site biquge (schedule: daily at" in fptrack(settings, "sites", "show", "biquge  ").stdout
    r = fptrack(settings, "sites", "add", "a\x1b[2Jb", "http://a.test/", check=False)
    assert r.returncode == 1 and "control character" in r.stderr and "\x1b" not in r.stderr
    r = fptrack(settings, "crawl", "--site", "x\u202ey", check=False)
    assert r.returncode == 1 and "bad site name" in r.stderr and "Traceback" not in r.stderr
    assert "removed site biquge" in fptrack(settings, "sites", "remove", " biquge").stdout
