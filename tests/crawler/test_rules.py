"""Site rules: files, checks with the fix in the message, and what a rule allows."""
from __future__ import annotations

import json

import pytest

from crawler.rules import (
    RulesError,
    host_of,
    load_rules_file,
    make_rules,
    rules_for_urls,
    site_name,
)


def test_defaults_from_a_start_url():
    r = make_rules({"start_urls": ["https://www.Biquge.test:8443/book/1/"]})
    assert r.name == "biquge.test:8443"
    assert r.domains == ("biquge.test",)
    assert r.allows("https://m.biquge.test/book/1/2.html")  # subdomains are the same site
    assert r.allows("https://biquge.test/other")
    assert not r.allows("https://evil-biquge.test/book/1/")
    assert not r.allows("https://ads.example.com/x")


def test_follow_and_deny_patterns():
    r = make_rules({"start_urls": ["https://a.test/"], "follow": [r"/book/\d+/"], "deny": [r"\?sort="]})
    assert r.allows("https://a.test/book/12/3.html")
    assert not r.allows("https://a.test/news/1.html")  # follow given: only matching links
    assert not r.allows("https://a.test/book/12/?sort=asc")


def test_toml_file_with_several_sites(tmp_path):
    f = tmp_path / "sites.toml"
    f.write_text('''
[[site]]
name = "biquge"
start_urls = ["https://www.biquge.test/book/1/"]
content = "#content"
next_page = "//a[contains(., '下一页')]"
encoding = "gbk"
delay = 1.5
concurrency = 2

[[site]]
start_urls = ["https://b.test/"]
obey_robots = true
''', encoding="utf-8")
    a, b = load_rules_file(f)
    assert (a.name, a.content, a.encoding, a.delay, a.concurrency) == ("biquge", "#content", "gbk", 1.5, 2)
    assert a.selectors.next_page.startswith("//a")
    assert b.name == "b.test" and b.obey_robots


def test_json_file(tmp_path):
    f = tmp_path / "sites.json"
    f.write_text(json.dumps([{"name": "x", "start_urls": ["http://x.test/"], "depth": 2}]), encoding="utf-8")
    (x,) = load_rules_file(f)
    assert x.depth == 2


@pytest.mark.parametrize("values, message", [
    ({"start_urls": ["https://a.test/"], "contnet": "#c"}, "unknown key 'contnet'"),
    ({"start_urls": ["www.a.test/book"]}, "is not an http(s) URL"),
    ({"start_urls": ["https://a.test/"], "follow": ["(unclosed"]}, "not a valid regular expression"),
    ({"start_urls": ["https://a.test/"], "content": "div[[["}, "is not valid"),
    ({"start_urls": ["https://a.test/"], "content": "//div[@id='x'"}, "is not valid"),
    ({"start_urls": ["https://a.test/"], "encoding": "klingon"}, "'klingon' is not a known charset"),
    ({"start_urls": ["https://a.test/"], "encoding": "unicode_escape"}, "is not a known charset"),
    ({"start_urls": ["https://a.test/"], "encoding": "base64"}, "is not a known charset"),
    ({"start_urls": ["https://a.test/"], "delay": -1}, "number of seconds"),
    ({"start_urls": ["https://a.test/"], "concurrency": 0}, "whole number"),
    ({"start_urls": ["https://a.test/"], "obey_robots": "no"}, "true or false"),
    ({"start_urls": "https://a.test/", "follow": [1]}, "list of strings"),
])
def test_bad_rules_name_the_problem(values, message):
    with pytest.raises(RulesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_rules(values, where="sites.toml, site 1")


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[site]\nname=", encoding="utf-8")
    with pytest.raises(RulesError, match="not valid TOML"):
        load_rules_file(bad)
    with pytest.raises(RulesError, match="cannot read"):
        load_rules_file(tmp_path / "missing.toml")
    nameless = tmp_path / "nameless.toml"
    nameless.write_text("[[site]]\ncontent = '#c'\n", encoding="utf-8")
    with pytest.raises(RulesError, match="neither a name nor start_urls"):
        load_rules_file(nameless)


def test_urls_take_the_rules_of_their_known_site():
    known = make_rules({"name": "biquge", "start_urls": ["https://www.biquge.test/"], "content": "#content"})
    sites = rules_for_urls(["https://biquge.test/book/9/", "https://other.test/a", "https://other.test/b"], [known])
    by_name = {s.name: s for s in sites}
    assert by_name["biquge"].content == "#content"
    assert by_name["biquge"].start_urls == ("https://biquge.test/book/9/",)
    assert by_name["other.test"].start_urls == ("https://other.test/a", "https://other.test/b")


def test_round_trip_through_a_dict():
    r = make_rules({"name": "n", "start_urls": ["https://a.test/"], "follow": ["/b/"], "delay": 2.0})
    again = make_rules(r.to_dict())
    assert again == r and again.allows("https://a.test/b/1")


def test_host_and_site_names():
    assert host_of("HTTP://WWW.A.test:81/x") == "a.test"
    assert site_name("http://127.0.0.1:8765/x") == "127.0.0.1:8765"
    assert site_name("https://www.a.test/x") == "a.test"


def test_the_shipped_example_rules_load():
    from ..conftest import ROOT

    sites = {s.name: s for s in load_rules_file(ROOT / "samples" / "sites.toml")}
    assert set(sites) == {"biquge-example", "wap-example"}
    b = sites["biquge-example"]
    assert b.allows("https://www.biquge.example/book/12/34.html") and not b.allows("https://www.biquge.example/search?q=1")
    assert not sites["wap-example"].recrawl


def test_urls_take_the_rules_of_the_site_whose_start_urls_cover_them_only():
    book = make_rules({"name": "book1", "start_urls": ["https://b.test/book/1/"], "content": "#c"})
    port = make_rules({"name": "local", "start_urls": ["http://127.0.0.1:8080/"], "content": "#c"})
    for url in ("https://b.test/book/12/", "https://b.test/", "http://127.0.0.1:1/", "http://127.0.0.1/"):
        (site,) = rules_for_urls([url], [book, port])
        assert site.name == site_name(url) and site.content == "", url
    for url, name in (("http://www.b.test/book/1/2.html", "book1"), ("https://b.test/book/1/", "book1"),
                      ("http://127.0.0.1:8080/x/y", "local")):
        (site,) = rules_for_urls([url], [book, port])
        assert site.name == name and site.start_urls == (url,), url


def test_discovery_attributes_a_url_to_the_site_the_crawler_takes_the_rules_of():
    from tracker.discovery.discover import site_of
    from tracker.store import Site

    tracked = [Site(name="book1", start_urls=["https://b.test/book/1/"]),
               Site(name="local", start_urls=["http://127.0.0.1:8080/"])]
    known = [make_rules({"name": s.name, "start_urls": s.start_urls}) for s in tracked]
    for url in ("https://b.test/book/12/", "http://www.b.test/book/1/2.html", "http://127.0.0.1:1/",
                "http://127.0.0.1:8080/x", "https://other.test/"):
        (site,) = rules_for_urls([url], known)
        assert site_of(url, tracked) == site.name, url
