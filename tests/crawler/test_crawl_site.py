"""End to end: `fptrack crawl` against the sample pirate site served on 127.0.0.1.

Each crawl runs in a child process, as users run it (Scrapy's reactor starts once
per process). The site has GBK, UTF-8, mislabelled and Big5 chapters, a chapter
split over two pages, broken HTML, ads and watermarks, a 404, a redirect, a slow
page, a huge page, binary files, a calendar trap, session-id links and a
robots.txt that forbids /vip/.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tracker.context import Context
from tracker.registry import register_work
from tracker.workers import tasks
from web.demo.chapters import chapters_from_folder
from web.demo.server import SampleSite

from ..conftest import ROOT

ORIGINALS = ROOT / "samples" / "originals"
FAST = ["--timeout", "1", "--retries", "0", "--delay", "0", "--max-bytes", "1000000", "--depth", "4"]

pytestmark = pytest.mark.slow


@pytest.fixture
def site():
    with SampleSite(chapters_from_folder(ORIGINALS), slow_delay=3.0, huge_bytes=2_000_000) as s:
        yield s


@pytest.fixture
def registered(settings):
    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    return settings


def fptrack(settings, *args, check=True):
    env = {**os.environ, **settings.to_env()}
    r = subprocess.run([sys.executable, "-m", "fptrack", *args], env=env, capture_output=True, text=True,
                       timeout=180, cwd=ROOT)
    if check and r.returncode != 0:
        pytest.fail(f"fptrack {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def crawl(settings, url, *extra):
    r = fptrack(settings, "crawl", url, *FAST, "--format", "jsonl", "-q", *extra)
    (line,) = r.stdout.splitlines()
    return json.loads(line)


def test_crawl_stores_chapters_skips_the_rest_with_reasons_and_finds_the_matches(registered, site):
    result = crawl(registered, site.url + "/")
    assert result["outcome"] == "finished"
    chapter_paths = {p for p, kind in site.expected.items() if kind == "chapter"}
    ctx = Context(registered)
    stored = {p.key.removeprefix(site.url): p for p in ctx.store.pages()}
    # every chapter page (the split one joined), and the unrelated news page, nothing else
    assert set(stored) == chapter_paths | {"/news/1.html"}
    joined = stored["/book/1/2.html"]
    assert joined.meta["parts"] == 2
    assert site.chapters[1][1].splitlines()[-1].strip() in joined.text  # the end came from the 2nd page
    for page in stored.values():
        assert "xbiquge-fake" not in page.text and "天才一秒记住" not in page.text, page.key
    # every chapter page matches the original it copies, whatever its encoding; the news page matches nothing
    found = {m.page.removeprefix(site.url): m.chapter for m in ctx.store.matches()}
    titles = [f"山城旧事/{p.stem}" for p in sorted(ORIGINALS.glob("*.txt"))]
    for path in chapter_paths:
        want = site.copies[path]
        assert found.get(path, "").endswith(("第一章", "第二章", "第三章")[want]), (path, found.get(path))
    assert "/news/1.html" not in found
    assert len(found) == len(chapter_paths) and titles
    # what was not stored, and why
    skipped, failed = result["skipped_reasons"], result["failed_reasons"]
    assert skipped["robots.txt forbids it"] == 1 and site.requests_under("/vip/") == 0
    assert skipped["HTTP 404"] >= 1
    assert skipped["larger than 1000000 bytes"] == 1
    assert skipped["not a web page (application/octet-stream)"] == 1
    assert "later part of a split chapter (joined to its first part)" not in skipped  # fetched once, by the chain
    assert failed == {"timed out after 1 s": 1}
    # traps bounded: the calendar by depth, session ids folded into one URL per page
    assert site.requests_under("/calendar") <= 2 * 4  # a day and its two neighbours per level of --depth 4
    assert site.hits["/book/1/"] + sum(n for p, n in site.hits.items() if p.startswith("/book/1/?")) <= 2
    # the run's statistics are kept for the admin
    (run,) = ctx.store.crawl_runs(site=result["site"])
    assert run.outcome == "finished" and run.counts["stored"] == len(chapter_paths) + 1
    assert run.counts["matched"] == len(chapter_paths) and run.skipped == skipped and run.failed == failed
    ctx.close()


def test_a_second_crawl_reprocesses_only_what_changed(registered, site):
    first = crawl(registered, site.url + "/")
    again = crawl(registered, site.url + "/")
    assert again["stored"] == 0 and again["unchanged"] == first["stored"]
    assert again["fetched"] == first["fetched"]  # a finished crawl starts afresh: everything is fetched again


def test_max_pages_pauses_and_the_same_command_resumes(registered, site):
    paused = crawl(registered, site.url + "/", "--max-pages", "3", "--concurrency", "1")
    assert paused["outcome"] == "closespider_pagecount"
    before = sum(site.hits.values())
    rest = crawl(registered, site.url + "/")
    assert rest["outcome"] == "finished"
    ctx = Context(registered)
    chapter_paths = {p for p, kind in site.expected.items() if kind == "chapter"}
    stored = {p.key.removeprefix(site.url) for p in ctx.store.pages()}
    assert chapter_paths <= stored
    ctx.close()
    # resumed, not restarted: the home page was not fetched a second time
    assert site.hits["/"] == 1 and sum(site.hits.values()) > before


def test_configured_site_with_rules_and_the_daily_recrawl(registered, site, tmp_path):
    rules = tmp_path / "sites.toml"
    rules.write_text(f'''
[[site]]
name = "sample-biquge"
start_urls = ["{site.url}/book/1/"]
content = "#content"
follow = ['//[^/]+/book/']
deny = ["huge"]
delay = 0
''', encoding="utf-8")
    out = fptrack(registered, "sites", "add", "sample-biquge", "--rules", str(rules)).stdout
    assert "content=#content" in out
    listed = fptrack(registered, "sites", "list", "--format", "jsonl").stdout
    assert json.loads(listed)["last_crawl"] is None  # "never" in the table
    # the daily run crawls the configured sites in a child process, and only stores the pages
    ctx = Context(registered)
    stored = tasks.recrawl_sites(ctx)
    chapter_paths = {p for p, kind in site.expected.items() if kind == "chapter" and p.startswith("/book/")}
    assert stored == len(chapter_paths) and site.hits["/book/1/huge.html"] == 0
    queued = {p.key.removeprefix(site.url) for p in ctx.store.pages(status="queued")}
    assert queued == chapter_paths and all(p.site == "sample-biquge" for p in ctx.store.pages())
    (run,) = ctx.store.crawl_runs(site="sample-biquge")
    assert run.counts["stored"] == len(chapter_paths)
    ctx.close()
    shown = fptrack(registered, "sites", "show", "sample-biquge").stdout
    assert "(finished)" in shown and "skipped: HTTP 404" in shown


def test_bad_input_gets_a_message_not_a_traceback(registered, tmp_path):
    r = fptrack(registered, "crawl", check=False)
    assert r.returncode == 2 and "give URLs to crawl" in r.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[[site]]\nname = 'x'\nstart_urls = ['http://x.test/']\ncontnet = '#c'\n", encoding="utf-8")
    r = fptrack(registered, "crawl", "--rules", str(bad), check=False)
    assert r.returncode == 1 and "unknown key 'contnet'" in r.stderr and "Traceback" not in r.stderr
    r = fptrack(registered, "crawl", "--site", "nowhere", check=False)
    assert "no site 'nowhere'" in r.stderr
    r = fptrack(registered, "sites", "add", "x", "ftp://x.test/", check=False)
    assert "is not an http(s) URL" in r.stderr and "Traceback" not in r.stderr


def test_an_unreachable_site_is_counted_as_failed(registered):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = fptrack(registered, "crawl", f"http://127.0.0.1:{port}/", *FAST, "--format", "jsonl", "-q", check=False)
    result = json.loads(r.stdout)
    assert result["failed_reasons"] == {"connection refused": 1} and result["stored"] == 0
    assert r.returncode == 1 and r.stderr == f"could not crawl http://127.0.0.1:{port}/: connection refused\n"


def test_ctrl_c_pauses_and_the_same_command_resumes(registered, site):
    import signal
    import time

    env = {**os.environ, **registered.to_env()}
    cmd = [sys.executable, "-m", "fptrack", "crawl", site.url + "/", *FAST, "--format", "jsonl", "-q",
           "--delay", "0.3", "--concurrency", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    while sum(site.hits.values()) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends: Scrapy stops gracefully
    out, err = proc.communicate(timeout=60)
    paused = json.loads(out.splitlines()[-1])
    assert paused["outcome"] == "shutdown", err
    assert "run the same command again to resume" in err
    rest = crawl(registered, site.url + "/")
    assert rest["outcome"] == "finished"
    assert site.hits["/"] == 1  # resumed where it stopped, not started over
    ctx = Context(registered)
    chapter_paths = {p for p, kind in site.expected.items() if kind == "chapter"}
    assert chapter_paths <= {p.key.removeprefix(site.url) for p in ctx.store.pages()}
    ctx.close()


def test_the_same_job_twice_at_once_on_disk_gets_a_message(registered, site):
    from crawler.frontier import Membership
    from crawler.rules import site_name
    from tracker.safe_names import job_for_urls

    held = Membership(registered, job_for_urls([site_name(site.url + "/")], [site.url + "/"]))  # the command's job
    held.join()
    try:
        r = fptrack(registered, "crawl", site.url + "/", *FAST, check=False)
    finally:
        held.leave()
    assert r.returncode == 1 and "is running in another process" in r.stderr and "Traceback" not in r.stderr
