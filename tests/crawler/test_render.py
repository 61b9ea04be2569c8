"""Pages whose chapter a script writes are rendered in the system's chromium; static pages never are.

The crawls are real `fptrack crawl` processes against tests/crawler/render_site.py: static
chapters, chapters written from an escaped JS string, chapters fetched as JSON after load
(with junk that only the browser's computed style hides), and chapters with junk hidden by
the page's CSS each way.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from crawler.middlewares.render import needs_rendering
from crawler.render import NEEDS_BROWSER, chromium_path
from crawler.rules import make_rules
from tracker.context import Context
from tracker.registry import register_work
from web.demo.chapters import chapters_from_folder

from ..conftest import ROOT
from ..linear import assert_linear
from .render_site import HIDING, JUNK, RenderSite

ORIGINALS = ROOT / "samples" / "originals"
FAST = ["--timeout", "5", "--retries", "0", "--delay", "0", "--depth", "2", "--format", "jsonl", "-q"]
RENDERED_KINDS = ("script", "ajax")


def squeeze(text: str) -> str:
    return "".join(text.split())


# ----------------------------------------------------------------------------- detection


def test_scripts_that_write_text_are_detected_and_ordinary_ones_are_not():
    escaped = json.dumps("陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶", ensure_ascii=True)
    assert needs_rendering(f"<div id=c></div><script>c.innerHTML = {escaped};</script>")
    assert needs_rendering("<script>fetch('/api/1.json').then(r => r.json())</script>")
    assert needs_rendering("<script type='text/javascript'>var x = new XMLHttpRequest();</script>")
    assert needs_rendering("<script>$.ajax({url: '/c/1'})</script>")
    assert needs_rendering("<script>$.get('/c/1', f)</script>")
    assert not needs_rendering("<script>var _hmt = _hmt || []; _hmt.push(['_trackPageview']);</script>")
    assert not needs_rendering("<script src='/ads.js'></script><p>fetch( in prose is not a script</p>")
    assert not needs_rendering("<script>var s = '\\u4e00';</script>")


def test_detection_is_linear_on_unclosed_scripts():
    assert_linear(needs_rendering, lambda n: "<script>x" * n, 20_000, what="needs_rendering")


def test_the_render_rule_is_a_site_rule():
    assert make_rules({"start_urls": ["http://127.0.0.1/"], "render": True}).render is True
    assert make_rules({"start_urls": ["http://127.0.0.1/"]}).render is False


# ----------------------------------------------------------------------------- crawls


@pytest.fixture
def site():
    with RenderSite(chapters_from_folder(ORIGINALS)) as s:
        yield s


@pytest.fixture
def registered(settings):
    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    return settings


def crawl(settings, url, env=None):
    env = {**os.environ, **settings.to_env(), **(env or {})}
    r = subprocess.run([sys.executable, "-m", "fptrack", "crawl", url, *FAST], env=env, capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, f"fptrack crawl exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    (line,) = r.stdout.splitlines()
    return json.loads(line)


def last_run(settings, name):
    ctx = Context(settings)
    try:
        (run, *_) = ctx.store.crawl_runs(site=name)
        return run
    finally:
        ctx.close()


needs_chromium = pytest.mark.skipif(
    chromium_path() is None and not os.environ.get("FPT_REQUIRE_SERVICES"),
    reason="chromium is not installed (scripts/system-deps test, or apt-get install chromium)")


@pytest.mark.slow
@needs_chromium
def test_a_crawl_renders_the_scripted_pages_only_and_stores_every_chapter_without_junk(registered, site):
    result = crawl(registered, site.url + "/")
    assert result["outcome"] == "finished"
    chapters = [p for p, k in site.kinds.items() if k in ("static", "script", "ajax", "hidden")]
    ctx = Context(registered)
    try:
        stored = {p.key.removeprefix(site.url): p for p in ctx.store.pages()}
        assert set(stored) == set(chapters)
        for path, page in stored.items():
            original = site.chapters[site.copies[path]][1]
            assert not any(c in page.text for c in JUNK), path
            assert squeeze(original) in squeeze(page.text), path
        found = {m.page.removeprefix(site.url): m.chapter for m in ctx.store.matches()}
    finally:
        ctx.close()
    titles = [t.split()[0] for t, _ in site.chapters]
    for path in chapters:
        assert found.get(path, "").endswith(titles[site.copies[path]]), (path, found.get(path))
    # Rendered: the scripted and AJAX pages, each fetched once more by the browser; static pages once.
    rendered = [p for p in chapters if site.kinds[p] in RENDERED_KINDS]
    run = last_run(registered, result["site"])
    assert run.counts.get("rendered") == len(rendered) == 6
    assert result["rendered"] == 6  # in the crawl's own summary too
    hits = site.hits
    for path in chapters:
        assert hits[path] == (2 if path in rendered else 1), path
    assert all(hits[f"/api/chapter/{n}.json"] == 1 for n in (1, 2, 3))
    assert result["failed"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("chromium", ["/nonexistent/chromium", "/bin/false"], ids=["missing", "does not start"])
def test_without_chromium_scripted_pages_fail_with_the_reason_and_static_ones_are_stored(registered, site, chromium):
    result = crawl(registered, site.url + "/", env={"FPT_CHROMIUM": chromium})
    assert result["outcome"] == "finished"
    scripted = [p for p, k in site.kinds.items() if k in RENDERED_KINDS]
    static = [p for p, k in site.kinds.items() if k in ("static", "hidden")]
    assert result["failed_reasons"] == {NEEDS_BROWSER: len(scripted)}
    assert result["stored"] == len(static) == 3 * (1 + len(HIDING))
    assert last_run(registered, result["site"]).counts.get("rendered", 0) == 0
    assert all(site.hits[p] == 1 for p in scripted)  # no browser fetched them


@pytest.mark.slow
@needs_chromium
def test_a_static_crawl_starts_no_browser(registered, site, tmp_path):
    """The handler starts Playwright's driver and chromium only for a page that needs them."""
    started = tmp_path / "started"
    fake = tmp_path / "chromium"  # the real chromium, leaving a mark when it starts
    fake.write_text(f"#!/bin/sh\ntouch {started}\nexec {chromium_path()} \"$@\"\n")
    fake.chmod(0o755)

    def crawl_from(path: str) -> dict:
        # Depth 1: the page and the catalogue it links to, whose links are not followed.
        r = subprocess.run([sys.executable, "-m", "fptrack", "crawl", site.url + path, "--depth", "1",
                            "--timeout", "5", "--retries", "0", "--delay", "0", "--format", "jsonl", "-q", "--fresh"],
                           env={**os.environ, **registered.to_env(), "FPT_CHROMIUM": str(fake)},
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    assert crawl_from("/static/1.html")["stored"] == 1
    assert not started.exists()
    assert crawl_from("/script/2.html")["stored"] == 1  # the control: this one needs it
    assert started.exists()


# ----------------------------------------------------------------------------- the middleware alone


class _Stats:
    def __init__(self):
        self.values: dict = {}

    def inc_value(self, key, n=1):
        self.values[key] = self.values.get(key, 0) + n


class _Crawler:
    def __init__(self, **rules):
        from types import SimpleNamespace

        site = make_rules({"start_urls": ["http://127.0.0.1/"], **rules})
        self.stats = _Stats()
        self.spider = SimpleNamespace(sites={site.name: site})
        self.site = site.name


def _exchange(crawler, body: str, **meta):
    from scrapy import Request
    from scrapy.http import HtmlResponse

    from crawler.meta import SITE

    request = Request("http://127.0.0.1/book/1.html", meta={SITE: crawler.site, **meta}, priority=7)
    response = HtmlResponse(request.url, body=body.encode(), encoding="utf-8", request=request)
    return request, response


ESCAPED = json.dumps("陈守义坐在茶馆靠窗的位置" * 30, ensure_ascii=True)
PROSE = "<p>" + "陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。" * 20 + "</p>"


def test_the_middleware_re_requests_only_pages_without_text_whose_scripts_write_it(monkeypatch):
    from scrapy import Request

    from crawler.middlewares.render import RenderMiddleware

    monkeypatch.setenv("FPT_CHROMIUM", sys.executable)  # any executable: nothing is launched here
    crawler = _Crawler()
    mw = RenderMiddleware(crawler)
    for body in (PROSE, f"{PROSE}<script>x.innerHTML = {ESCAPED};</script>", "<p>short</p><script>var a=1;</script>"):
        request, response = _exchange(crawler, body)
        assert mw.process_response(request, response) is response
    request, response = _exchange(crawler, f"<div id=c></div><script>c.innerHTML = {ESCAPED};</script>")
    again = mw.process_response(request, response)
    assert isinstance(again, Request) and again.meta["playwright"] and again.dont_filter
    assert again.priority == 7 and again.callback == request.callback
    # the rendered response is counted per site, and passes
    rendered = _exchange(crawler, PROSE, **again.meta)[1]
    assert mw.process_response(again, rendered) is rendered
    assert crawler.stats.values[f"site/{crawler.site}/rendered"] == 1


def test_a_render_rule_renders_pages_with_any_script_and_no_text(monkeypatch):
    from scrapy import Request

    from crawler.middlewares.render import RenderMiddleware

    monkeypatch.setenv("FPT_CHROMIUM", sys.executable)
    body = "<div id=c></div><script src='/app.js'></script>"
    assert isinstance(RenderMiddleware(_Crawler(render=True)).process_response(*_exchange(_Crawler(), body)), Request)
    crawler = _Crawler()
    request, response = _exchange(crawler, body)
    assert RenderMiddleware(crawler).process_response(request, response) is response


def test_without_a_browser_the_page_fails_with_the_reason(monkeypatch):
    from crawler.middlewares.render import NeedsBrowser, RenderMiddleware

    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")
    crawler = _Crawler()
    with pytest.raises(NeedsBrowser, match="needs a browser: install chromium"):
        RenderMiddleware(crawler).process_response(*_exchange(crawler, f"<script>c.innerHTML = {ESCAPED};</script>"))
