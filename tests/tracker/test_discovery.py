"""Discovery end to end: queries of a registered work sent to a search engine on 127.0.0.1,
the result URLs crawled (a real crawl, in a child process, of fixture sites on 127.0.0.1),
matches recorded, the copying site tracked, and the counts of every query kept; then the
failures of a search API (HTTP 500, a timeout, an answer that is not JSON or has no results
list), each one line while the run goes on."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fptrack.cli import main
from tracker.discovery.discover import DiscoverySettings, discover, plan_queries
from tracker.discovery.providers import HTTPSearchProvider, SearchError, config_from
from tracker.registry import register_work
from tracker.store import NotFound
from tracker.store.tenancy import Organisation

from ..conftest import ROOT
from .fixture_site import pirate_site
from .search_engine import search_engine

ORIGINALS = ROOT / "samples" / "originals"
FAST = ["--timeout", "2", "--retries", "0", "--delay", "0"]


def chapter_page(title: str, text: str, n: int) -> str:
    paragraphs = "".join(f"<p>{line}</p>" for line in text.splitlines()[1:] if line.strip())
    return (f"<html><head><meta charset='utf-8'><title>{title}_山城旧事_全本小说网</title></head><body>"
            f"<div class='nav'><a href='/book/1/'>目录</a> 作者：林岚</div><h1>{title}</h1>"
            f"<div id='content'>{paragraphs}</div><a href='/book/1/{n + 1}.html'>下一章</a></body></html>")


def originals() -> list[tuple[str, str]]:
    order = {"一": 1, "二": 2, "三": 3}
    files = sorted(ORIGINALS.glob("*.txt"), key=lambda p: order[p.stem[-2]])
    return [(p.read_text("utf-8").splitlines()[0], p.read_text("utf-8")) for p in files]


@pytest.fixture
def registered(ctx):
    register_work(ctx, "山城旧事", str(ORIGINALS), author="林岚")
    return ctx


def engine_settings(engine, **kw) -> DiscoverySettings:
    base = dict(search_preset="searxng", search_url=engine.search_url, search_interval=0.0, search_retries=0,
                search_backoff=0.0, search_timeout=2.0, search_per_page=3, discovery_depth=1, discovery_max_pages=20)
    return DiscoverySettings(**{**base, **kw})


def expected_counts(engine, queries, ignored_prefix):
    """What each query should return and find new, from the engine's own index."""
    seen: set[str] = set()
    out = []
    for q in queries:
        urls = engine.matching(q)
        new = [u for u in urls if not u.startswith(ignored_prefix) and u not in seen]
        seen.update(new)
        out.append((len(urls), new))
    return out


@pytest.mark.slow
def test_discovery_finds_a_copy_crawls_it_records_the_matches_and_tracks_the_site(registered, settings):
    ctx = registered
    with pirate_site() as copy, pirate_site() as review, pirate_site() as own, search_engine() as engine:
        for n, (title, text) in enumerate(originals(), 1):
            copy.put(f"/book/1/{n}.html", chapter_page(title, text, n))
        copy.put("/book/1/", "<html><body>" + "".join(f"<a href='/book/1/{n}.html'>第{n}章</a>" for n in (1, 2, 3))
                 + "</body></html>")
        review.put("/review.html", "<html><head><title>书评：山城旧事</title></head><body><p>林岚的《山城旧事》"
                                   "写一座雨城里的旧案，值得一读。</p></body></html>")
        title, text = originals()[0]
        own.put("/works/1.html", chapter_page(title, text, 1))  # the rights holder's own site: ignored
        for url in [f"{copy.url}/book/1/{n}.html" for n in (1, 2, 3)] + [f"{review.url}/review.html",
                                                                          f"{own.url}/works/1.html"]:
            engine.index(url)
        own.requests.clear()
        copy.requests.clear()
        settings = engine_settings(engine, discovery_ignore=f"example.org, {own.url.split('//')[1]}")
        planned = [q.text for q in plan_queries(ctx.store, settings)]
        want = expected_counts(engine, planned, own.url)
        assert any(new for _, new in want) and any(n > len(new) for n, new in want)  # the test has both kinds

        ctx.store.upsert_org(Organisation(name="north-press"))  # the work's organisation gets what is found for it
        (work,) = ctx.store.works()
        ctx.store.set_owner("work", work.id, "north-press")
        lines: list[str] = []
        report = discover(ctx, settings, say=lines.append, crawl_options=FAST)

        assert lines == []
        # the queries made: each query once, and a second page only when the first one was full
        asked = [q for q in planned for _ in range(len(engine.matching(q)) // engine.per_page + 1)]
        assert engine.queries == asked
        assert [o.query.text for o in report.queries] == planned
        # URLs found: every result counted, only the ones never seen and not ignored are new
        assert [(len(o.results), o.new) for o in report.queries] == want
        assert own.requests == []  # an ignored site is never crawled
        # the copying site was crawled: its chapters stored and matched, credited to the first query that found it
        copy_site = f"127.0.0.1:{copy.url.rsplit(':', 1)[1]}"
        review_site = f"127.0.0.1:{review.url.rsplit(':', 1)[1]}"
        first = next(o for o in report.queries if any(u.startswith(copy.url) for u in o.new))
        assert copy_site in first.sites and first.matches == 3 and first.stored >= 3
        assert {"/book/1/1.html", "/book/1/2.html", "/book/1/3.html"} <= set(copy.requests)
        others = [o for o in report.queries if o is not first]
        assert sum(o.matches for o in others) == 0 and all(copy_site not in o.sites for o in others)
        found = {(m.page, m.chapter.rsplit("-", 1)[1]) for m in ctx.store.matches(site=copy_site)}
        assert found == {(f"{copy.url}/book/1/{n}.html", ch) for n, ch in ((1, "第一章"), (2, "第二章"), (3, "第三章"))}
        # the review site was crawled too, matched nothing, and is not tracked; the copying site is
        assert any(review_site in o.sites for o in report.queries) and review.requests
        assert report.sites_added == [copy_site]
        tracked = ctx.store.get_site(copy_site)
        assert tracked.recrawl and tracked.start_urls and all(u.startswith(copy.url) for u in tracked.start_urls)
        assert ctx.store.owner("site", copy_site) == "north-press"
        with pytest.raises(NotFound):
            ctx.store.get_site(review_site)
        # the run and the counts of every query are kept in the store
        (run,) = ctx.store.discovery_runs()
        assert run == report.run and run.outcome == "finished" and run.sites_added == [copy_site]
        assert run.counts == {"queries": len(planned), "failed": 0, "returned": sum(n for n, _ in want),
                              "new": sum(len(new) for _, new in want), "stored": first.stored, "matches": 3,
                              "sites_added": 1}
        kept = ctx.store.discovery_queries(run.id)
        assert [(q.text, q.kind, q.returned, q.new, q.stored, q.matches, q.sites) for q in kept] == \
            [(o.query.text, o.query.kind, len(o.results), len(o.new), o.stored, o.matches, o.sites)
             for o in report.queries]

        # a second run: the same results, nothing new, nothing crawled again
        copy.requests.clear()
        again = discover(ctx, settings, say=lines.append, crawl_options=FAST)
        assert lines == [] and copy.requests == []
        assert [len(o.results) for o in again.queries] == [n for n, _ in want]
        assert all(o.new == [] and o.stored == 0 and o.matches == 0 for o in again.queries)
        assert again.sites_added == [] and ctx.store.discovery_runs()[0].counts["new"] == 0


@pytest.mark.parametrize("failure, says", [
    ("500", "answered HTTP 500 (2 tries)"),
    ("429", "answered HTTP 429 (2 tries)"),
    ("timeout", "did not answer: timed out after 0.5 s (2 tries)"),
    ("badjson", "answered something that is not JSON (text/html)"),
    ("nolist", "has no 'results' (it has: answers, query); set FPT_SEARCH_RESULTS"),
])
def test_a_failing_search_api_costs_one_line_per_query_and_the_run_goes_on(registered, failure, says):
    ctx = registered
    with search_engine(slow_s=1.5) as engine:
        settings = engine_settings(engine, search_timeout=0.5, search_retries=1)
        planned = [q.text for q in plan_queries(ctx.store, settings)]
        broken = planned[1]
        engine.fail[broken] = failure
        lines: list[str] = []
        report = discover(ctx, settings, say=lines.append)
    assert len(lines) == 1 and "\n" not in lines[0] and "Traceback" not in lines[0]
    assert says in lines[0] and broken in lines[0]
    retried = failure in ("500", "429", "timeout")
    assert engine.queries == [planned[0], *[broken] * (2 if retried else 1), *planned[2:]]  # the others were sent
    assert [bool(o.error) for o in report.queries] == [n == 1 for n in range(len(planned))]
    (run,) = ctx.store.discovery_runs()
    assert run.counts["failed"] == 1 and run.counts["queries"] == len(planned)
    assert [q.error for q in ctx.store.discovery_queries(run.id)] == [o.error for o in report.queries]


def test_the_provider_pages_until_its_limit_and_keeps_its_rate():
    with search_engine(per_page=2) as engine:
        for n in range(5):
            engine.pages[f"https://copy{n}.example/1.html"] = ("山城旧事", "山城旧事 第一章")
        waits: list[float] = []
        clock = iter(float(t) for t in range(0, 1000, 1))  # every clock read is 1 s later
        config = config_from({"url": engine.search_url, "interval": 5.0, "per_page": 2}, "searxng")
        provider = HTTPSearchProvider(config, sleep=waits.append, clock=lambda: next(clock))
        results = provider.search('"山城旧事"', limit=3)
        assert [r.url for r in results] == [f"https://copy{n}.example/1.html" for n in range(3)]
        assert results[0].title == "山城旧事" and "第一章" in results[0].snippet
        assert engine.queries == ['"山城旧事"', '"山城旧事"'] and provider.requests == 2
        assert waits and all(w <= 5.0 for w in waits)  # the second request waited for its turn
        everything = provider.search('"山城旧事"', limit=50)
        assert len(everything) == 5 and len(engine.queries) == 5  # pages 1-3: the third held fewer than 2


def test_the_key_goes_where_the_api_wants_it_and_bad_settings_say_the_fix(monkeypatch):
    import tracker.discovery.providers as providers

    seen: list[dict] = []
    real = providers.fetch

    def spy(url, **kw):
        seen.append(dict(kw["headers"]))
        return real(url, **kw)

    monkeypatch.setattr(providers, "fetch", spy)
    with search_engine() as engine:
        HTTPSearchProvider(config_from({"url": engine.search_url, "key": "s3cret",
                                        "key_header": "Authorization: Bearer {key}"}, "searxng")).search("x", limit=1)
    assert seen[0]["Authorization"] == "Bearer s3cret" and seen[0]["User-Agent"].startswith("fptrack")
    for values, preset, says in [
        ({}, "", "set FPT_SEARCH_URL"),
        ({"url": "https://api.example/s?x=1"}, "", "has no {query}"),
        ({"url": "https://api.example/s?q={query}&key={key}"}, "", "set FPT_SEARCH_KEY"),
        ({"url": "https://api.example/s?q={query}&n={num}"}, "", "{num}, which is not a placeholder"),
        ({"url": "https://api.example/s?q={query}"}, "yahoo", "unknown search preset 'yahoo'"),
        ({"url": "ftp://api.example/s?q={query}"}, "", "not an http(s) URL"),
    ]:
        with pytest.raises(SearchError) as e:
            HTTPSearchProvider(config_from(values, preset))
        assert says in str(e.value)


def test_settings_come_from_the_environment_and_the_config_file(tmp_path):
    config = tmp_path / "fptrack.toml"
    config.write_text('[fptrack]\nhome = "/tmp/x"\n[discovery]\nsearch_preset = "bing"\ndiscovery_sentences = 3\n',
                      encoding="utf-8")
    s = DiscoverySettings.load({"FPT_CONFIG": str(config), "FPT_SEARCH_KEY": "k",
                                "FPT_SEARCH_URL": "https://api.example/v7.0/search?q={query}&offset={offset}",
                                "FPT_DISCOVERY_IGNORE": "www.Mine.example, other.example"})
    assert s.discovery_sentences == 3 and s.plan().sentences == 3 and s.ignored() == ("mine.example", "other.example")
    c = s.search_config()
    assert c.results == "webPages.value" and c.key_header == "Ocp-Apim-Subscription-Key" and c.key == "k"
    with pytest.raises(ValueError, match="FPT_DISCOVERY_SENTENCES"):
        DiscoverySettings.load({"FPT_DISCOVERY_SENTENCES": "many"})


def test_the_command_prints_the_queries_and_the_counts(registered, monkeypatch):
    runner = CliRunner()
    dry = runner.invoke(main, ["discover", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "sentence" in dry.output and '"山城旧事" "林岚"' in dry.output
    with search_engine() as engine:
        monkeypatch.setenv("FPT_SEARCH_URL", engine.search_url)
        monkeypatch.setenv("FPT_SEARCH_INTERVAL", "0")
        engine.fail['"山城旧事" "林岚"'] = "badjson"
        r = runner.invoke(main, ["discover", "--work", "山城旧事", "--format", "jsonl", "--max-queries", "6"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 6 and rows[5]["kind"] == "title" and "not JSON" in rows[5]["error"]
    assert all(row["returned"] == 0 and row["run"] == 1 for row in rows)
    assert "not JSON" in r.stderr and "6 queries (1 failed)" in r.stderr and "query budget" in r.stderr
    bad = runner.invoke(main, ["discover", "--work", "不存在"])
    assert bad.exit_code == 1 and "no work titled '不存在'" in bad.output and "Traceback" not in bad.output
    monkeypatch.setenv("FPT_SEARCH_URL", "https://api.example/search")
    bad = runner.invoke(main, ["discover"])
    assert bad.exit_code == 1 and "has no {query}" in bad.output


def test_the_daily_hook_skips_without_a_search_api(ctx, monkeypatch):
    from tracker.discovery.discover import daily_discovery

    monkeypatch.delenv("FPT_SEARCH_URL", raising=False)
    assert daily_discovery(ctx) == {"skipped": "no search API configured (FPT_SEARCH_URL)"}


def test_query_kinds_match_the_store(registered):
    from tracker.store.discovery import QUERY_KINDS

    kinds = {q.kind for q in plan_queries(registered.store, DiscoverySettings())}
    assert kinds == set(QUERY_KINDS)


class CannedProvider:
    """A plug-in provider (`--provider tests.tracker.test_discovery:CannedProvider`): no results."""

    name = "canned"

    def __init__(self, settings=None):
        self.asked: list[str] = []

    def search(self, query, *, limit):
        self.asked.append(query)
        return []


def test_a_plug_in_provider_is_named_by_its_module_and_class(registered):
    from tracker.discovery.discover import DiscoveryError, make_provider

    provider = make_provider(DiscoverySettings(), "tests.tracker.test_discovery:CannedProvider")
    assert provider.name == "canned"
    report = discover(registered, DiscoverySettings(discovery_sentences=1, discovery_chapter_titles=0),
                      provider=provider)
    assert provider.asked == [o.query.text for o in report.queries] and len(provider.asked) == 2
    assert report.run.provider == "canned" and report.counts["returned"] == 0
    for name, says in [("bing", "use http, or package.module:Class"), ("tests.nowhere:X", "cannot load"),
                       ("tests.tracker.test_discovery:engine_settings", "does not make a search provider")]:
        with pytest.raises(DiscoveryError) as e:
            make_provider(DiscoverySettings(), name)
        assert says in str(e.value)


def test_a_site_crawled_earlier_whose_pages_matched_since_is_tracked_by_the_next_run(registered):
    from tracker.store.discovery import DiscoveryQuery, DiscoveryRun

    from .store_contract import T0, match, page

    store = registered.store
    run = store.add_discovery_run(DiscoveryRun(started_at=T0, finished_at=T0, provider="http"))
    store.put_discovery_query(DiscoveryQuery(run=run.id, n=0, work="山城旧事", kind="sentence", text='"x"',
                                             new=1, sites=["late.example", "nothing.example"]))
    store.upsert_page(page("https://late.example/book/1.html", site="late.example"))
    store.upsert_page(page("https://nothing.example/a.html", site="nothing.example"))
    # the workers matched the page after that run
    store.upsert_match(match("https://late.example/book/1.html", "山城旧事/第一章", site="late.example"))
    report = discover(registered, DiscoverySettings(discovery_sentences=1, discovery_chapter_titles=0),
                      provider=CannedProvider())
    assert report.sites_added == ["late.example"] and report.run.sites_added == ["late.example"]
    assert store.get_site("late.example").start_urls == ["https://late.example/book/1.html"]
    with pytest.raises(NotFound):
        store.get_site("nothing.example")
    again = discover(registered, DiscoverySettings(discovery_sentences=1, discovery_chapter_titles=0),
                     provider=CannedProvider())
    assert again.sites_added == []
