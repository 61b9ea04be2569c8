"""Small admin form fixes: times shown as on the other pages (with the ISO time kept in a
<time datetime>), and a webhook form whose label and checks agree on http(s)."""
import re

import pytest

from crawler import site_runs as site_crawls

from .conftest import csrf_token, post

HOOK = {"channel": "webhook", "site": "biquge", "secret": "s3cret", "kinds": ["removed"]}
STARTED, ENDED = "2026-11-20T06:10:00+00:00", "2026-11-20T06:15:30+00:00"


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no tags, no attributes."""
    return re.sub(r"<[^>]*>", " ", html)


def test_a_sites_crawl_times_read_like_the_other_pages_with_the_iso_time_kept(admin, settings):
    path = site_crawls.state_file(settings, "biquge")
    path.parent.mkdir(parents=True, exist_ok=True)
    site_crawls.write_state(path, {"state": "finished", "site": "biquge", "started_at": STARTED, "finished_at": ENDED,
                                   "outcome": "finished", "fetched": 10})
    html = admin.get("/sites/manage", query_string={"name": "biquge"}).get_data(as_text=True)
    crawl = html[html.index('<section id="crawl">'):]
    crawl = crawl[:crawl.index("</section>")]
    assert f'<time datetime="{STARTED}">2026-11-20 06:10</time> UTC' in crawl
    assert f'<time datetime="{ENDED}">2026-11-20 06:15</time> UTC (finished)' in crawl
    text = visible_text(crawl)
    assert "T06:" not in text and "+00:00" not in text, text


def test_the_webhook_label_names_both_schemes_the_form_takes(admin):
    html = admin.get("/followup/").get_data(as_text=True)
    label = re.search(r"<label>To \((.*?)\) <input name=\"target\"", html)
    assert label, "the target field has its label"
    assert "http(s)://" in label.group(1) and "https:// recommended" in label.group(1), label.group(1)


@pytest.mark.parametrize("url", ["http://hooks.example.net/fptrack", "https://hooks.example.net/fptrack"])
def test_the_webhook_form_takes_http_and_https(admin, store, url):
    r = post(admin, "/followup/subscriptions", {**HOOK, "target": url}, token_from="/followup/")
    assert r.status_code == 302, r.get_data(as_text=True)[:500]
    assert [s.target for s in store.subscriptions()] == [url]


@pytest.mark.parametrize("url, named", [
    ("ftp://hooks.example.net/T0/xoxb-key", "ftp://"),
    ("file:///etc/passwd#xoxb-key", "file://"),
    ("gopher://hooks.example.net/xoxb-key", "gopher://"),
    ("hooks.example.net/T0/xoxb-key", None),
    ("mailto:xoxb-key@example.net", None),
])
def test_another_scheme_is_refused_with_the_schemes_to_use(admin, store, url, named):
    r = post(admin, "/followup/subscriptions", {**HOOK, "target": url}, token_from="/followup/")
    html = r.get_data(as_text=True)
    errors = re.findall(r'<p class="flash error" role="alert">(.*?)</p>', html)
    assert r.status_code == 400 and len(errors) == 1, (r.status_code, errors)
    [error] = errors
    assert "https:// (recommended) or http://" in error, error
    if named:
        assert f"not {named}" in error, error
    assert "xoxb-key" not in error  # the message never repeats the URL: it may hold the hook's key
    assert store.subscriptions() == []
    api = admin.post("/api/subscriptions", json={**HOOK, "target": url},
                     headers={"X-CSRFToken": csrf_token(admin, "/")})
    message = api.get_json()["message"]
    assert api.status_code == 400 and "https:// (recommended) or http://" in message and "xoxb-key" not in message
    assert "Traceback" not in api.get_data(as_text=True) and store.subscriptions() == []
