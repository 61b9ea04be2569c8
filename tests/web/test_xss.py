"""Crawled data is hostile: script payloads in titles, page text, URLs and site names
never reach any HTML response unescaped, and javascript: URLs never become links."""
import re
from html.parser import HTMLParser

import pytest

from tracker.store import Chapter, MatchRecord, Page, Site, Work

from .conftest import JS_URL, XSS, XSS_ATTR, post

EVIL_WORK = XSS + "作品"
EVIL_CHAPTER = f"{EVIL_WORK}/{XSS_ATTR}"


@pytest.fixture
def hostile(store):
    store.upsert_work(Work(id=EVIL_WORK, title=XSS + XSS_ATTR, author=XSS_ATTR))
    store.upsert_chapter(Chapter(key=EVIL_CHAPTER, work=EVIL_WORK, title=XSS_ATTR + XSS, text=XSS + "正文" * 50,
                                 number=1))
    store.upsert_page(Page(key=XSS_ATTR, url=JS_URL, site=XSS, text=XSS_ATTR + "正文" * 50 + XSS))
    store.set_page_status(XSS_ATTR, "failed", XSS)
    store.upsert_match(MatchRecord(page=XSS_ATTR, chapter=EVIL_CHAPTER, work=EVIL_WORK, site=XSS, similarity=0.9,
                                   containment=0.9, page_share=0.9, verdict=XSS, scores={XSS: 1.0},
                                   spans=[{"page_start": 0, "page_end": 40, "original_start": 0,
                                           "original_end": 40}]))
    store.set_match_status(XSS_ATTR, EVIL_CHAPTER, "confirmed", by=XSS_ATTR)
    store.upsert_site(Site(name=XSS, start_urls=[JS_URL, " javascript:alert(2)", "JaVaScRiPt:alert(3)",
                                                 "data:text/html,<script>alert(4)</script>"],
                           rules={"x": XSS}))
    return store


class Elements(HTMLParser):
    """Every element and attribute as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]


def assert_clean(html: str) -> None:
    assert "<script" not in html.lower() and "<img" not in html.lower()
    parsed = Elements()
    parsed.feed(html)
    assert not {"script", "img", "iframe", "object"} & set(parsed.tags)
    assert not [k for k, _ in parsed.attrs if k.startswith("on")]
    for k, v in parsed.attrs:
        if k in ("href", "src", "action", "formaction"):
            assert not re.match(r"\s*(javascript|data|vbscript):", v, re.I), (k, v)


def pages(q: dict) -> list[str]:
    return [
        "/", "/works/", "/works/" + EVIL_WORK, "/sites/", "/sites/view?name=" + q["site"],
        "/matches/", "/matches/?status=confirmed", "/matches/?work=" + q["work"], "/matches/view?" + q["match"],
        "/takedown", "/takedown?site=" + q["site"], "/search?q=" + q["site"], "/search?q=" + q["xss"],
        "/search?q=javascript", "/check", "/no-such-page-" + q["xss"], "/works/" + q["xss"],
        "/matches/?sort=" + q["xss"], "/sites/view?name=" + q["xss"] + "nope",
    ]


def test_no_page_renders_a_payload(admin, hostile):
    from urllib.parse import quote, urlencode

    q = {"site": quote(XSS), "work": quote(EVIL_WORK), "xss": quote(XSS_ATTR),
         "match": urlencode({"page_key": XSS_ATTR, "chapter": EVIL_CHAPTER})}
    for path in pages(q):
        r = admin.get(path)
        assert r.status_code in (200, 400, 404), (path, r.status_code)
        assert r.mimetype == "text/html"
        assert_clean(r.get_data(as_text=True))


def test_the_evidence_view_escapes_text_and_shows_js_urls_as_text(admin, hostile):
    html = admin.get("/matches/view", query_string={"page_key": XSS_ATTR, "chapter": EVIL_CHAPTER}).get_data(
        as_text=True)
    assert "<mark>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<mark>&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f"<dd class=\"url\">{JS_URL}</dd>" in html


def test_hostile_site_config_urls_are_text(admin, hostile):
    from urllib.parse import quote

    html = admin.get("/sites/view?name=" + quote(XSS)).get_data(as_text=True)
    assert_clean(html)
    assert "JaVaScRiPt:alert(3)" in html and "data:text/html,&lt;script&gt;" in html


def test_check_text_echoes_the_pasted_payload_escaped(admin, hostile):
    r = post(admin, "/check", {"text": XSS + XSS_ATTR + "</textarea>" + XSS})
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert_clean(html)
    assert "&lt;/textarea&gt;" in html


def test_login_page_escapes_name_and_next(client):
    from .conftest import csrf_token

    token = csrf_token(client)
    r = client.post("/login", data={"name": XSS_ATTR, "password": "x", "next": XSS_ATTR, "csrf_token": token})
    assert_clean(r.get_data(as_text=True))
    r = client.get("/login", query_string={"next": XSS_ATTR})
    assert_clean(r.get_data(as_text=True))


def test_json_answers_are_json(admin, hostile):
    r = admin.get("/api/works")
    assert r.mimetype == "application/json" and r.headers["X-Content-Type-Options"] == "nosniff"
    assert any(w["title"] == XSS + XSS_ATTR for w in r.json["works"])


def test_query_params_cannot_steer_built_links(admin):
    html = admin.get("/matches/?per_page=1&_scheme=javascript&_external=1&_anchor=x").get_data(as_text=True)
    assert "javascript://" not in html
    assert 'href="/matches/?per_page=1&amp;_scheme=javascript&amp;_external=1&amp;_anchor=x&amp;page=2"' in html
