"""URL normalisation and trap bounds."""
from __future__ import annotations

import pytest

from crawler.urls import PatternBudget, normalize_url, trap_reason, url_pattern


@pytest.mark.parametrize("a, b", [
    ("http://A.test:80/x.html#top", "http://a.test/x.html"),
    ("https://a.test:443/x?b=2&a=1", "https://a.test/x?a=1&b=2"),
    ("http://a.test/x?utm_source=feed&id=3&sid=99f", "http://a.test/x?id=3"),
    ("http://a.test/book/1/;jsessionid=ABC123", "http://a.test/book/1/"),
    ("http://a.test", "http://a.test/"),
])
def test_one_spelling_per_page(a, b):
    assert normalize_url(a) == b
    assert normalize_url(b) == b  # idempotent


def test_different_pages_stay_different():
    assert normalize_url("http://a.test/x?id=3") != normalize_url("http://a.test/x?id=4")
    assert normalize_url("http://a.test:8080/x") == "http://a.test:8080/x"


@pytest.mark.parametrize("url, reason", [
    ("http://a.test/" + "x" * 500, "longer than"),
    ("http://a.test/s?" + "&".join(f"k{i}=1" for i in range(8)), "query parameters"),
    ("http://a.test/a/b/a/b/a/b/c.html", "repeated"),
    ("http://a.test/" + "/".join("abcdefghijklmn"), "deeper than"),
])
def test_trap_shapes(url, reason):
    assert reason in trap_reason(url)


def test_normal_urls_are_not_traps():
    assert trap_reason("https://www.biquge.test/book/123/45678.html") == ""
    assert trap_reason("https://a.test/calendar?d=2026-11-01") == ""  # bounded by the budget instead


def test_pattern_budget_stops_an_unproductive_pattern_only():
    budget = PatternBudget(limit=5)
    for day in range(1, 6):
        budget.seen(f"https://a.test/calendar?d=2026-11-{day:02d}", useful=False)
    assert budget.exhausted("https://a.test/calendar?d=2026-11-30")
    for n in range(1, 50):
        budget.seen(f"https://a.test/book/1/{n}.html", useful=n % 10 == 0)
    assert not budget.exhausted("https://a.test/book/1/999.html")
    assert url_pattern("https://a.test/calendar/2026/11?d=1&v=2") == "a.test/calendar/N/N?d&v"
