"""Every read is scoped, even where two organisations track the same page: east's work is also
copied on a page of biquge (a site the default organisation crawls), so both have a match on
that one page. East sees that page and its own match there, and nothing else of the default
organisation: not biquge's other pages (in lists, exports, search, counts), not its work, its
chapters, its crawl runs or its images."""
from __future__ import annotations

import io
import zipfile

import pytest

from tests.web.conftest import PASSWORD, login
from tests.web.test_orgs import add_user
from tests.web.test_routes import GET, fill_path
from tracker.store import Chapter, MatchRecord, Work
from tracker.store.scoped import ScopedStore
from tracker.store.tenancy import Organisation

SHARED = "https://biquge.example/1.html"
EAST_TEXT = "东城的风吹了一整夜，码头上的灯一盏一盏熄灭，只剩下守夜人的咳嗽声。" * 4
# What only the default organisation has: its other pages, its work and author, its other
# chapters (and their text), its crawl run, its copied image, its API token.
DEFAULT_ONLY = ("biquge.example/2.html", "broken.html", "山城旧事", "林岚", "第2章", "第3章", "挑夫", "job-1",
                "img.biquge.example", "t-sample")
# East's own reads of what it shares: the page, its own match there, the site its copy is on.
EAST_ROUTES = [
    ("/api/export/pages.csv", {}), ("/api/export/pages.json", {}), ("/export/pages.csv", {}),
    ("/api/search", {"q": "biquge"}), ("/search", {"q": "biquge"}), ("/api/search", {"q": "html"}),
    ("/sites/view", {"name": "biquge"}), ("/api/sites/view", {"name": "biquge"}), ("/sites/", {}),
    ("/api/sites", {}), ("/matches/view", {"page_key": SHARED, "chapter": "东城/1"}),
    ("/api/matches/view", {"page_key": SHARED, "chapter": "东城/1"}), ("/api/dashboard", {}), ("/", {}),
    ("/api/export/sites.csv", {}), ("/api/export/matches.csv", {}), ("/evidence/package", {"page_key": SHARED}),
]


def text_of(r) -> str:
    """A response's text; a zip's files' texts; anything else as UTF-8 with replacements."""
    data = r.get_data()
    if data.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return "\n".join(z.read(n).decode("utf-8", "replace") for n in z.namelist())
    return data.decode("utf-8", "replace")


@pytest.fixture
def shared(store):
    store.upsert_org(Organisation("east"))
    add_user(store, "eve", "admin", "east")
    store.upsert_work(Work(id="东城", title="东城", author="周原"))
    store.set_owner("work", "东城", "east")
    store.upsert_chapter(Chapter(key="东城/1", work="东城", title="一", text=EAST_TEXT, number=1))
    store.upsert_match(MatchRecord(page=SHARED, chapter="东城/1", work="东城", site="biquge", similarity=0.2,
                                   containment=0.3, page_share=0.2, verdict="partial"))
    return store


def test_the_scoped_store_shows_the_shared_page_and_none_of_the_others(shared):
    east = ScopedStore(shared, "east")
    assert [p.key for p in east.find_pages(limit=None)] == [SHARED]
    assert east.count_pages() == 1 and east.count_pages(site="biquge") == 1
    assert east.get_page(SHARED).key == SHARED
    assert [r["pages"] for r in east.page_summary(["site"])] == [1]
    from tracker.store import NotFound

    with pytest.raises(NotFound):
        east.get_page("https://biquge.example/2.html")
    assert [m.work for m in east.matches(page=SHARED)] == ["东城"]
    assert shared.count_pages(site="biquge") == 3  # the store itself still has every page


@pytest.mark.parametrize("rule", sorted(GET))
def test_every_route_sample_shows_east_none_of_the_default_organisations_data(app, shared, rule):
    eve = app.test_client()
    assert login(eve, "eve", PASSWORD).status_code == 302
    path, query = fill_path(rule, GET[rule])
    r = eve.get(path, query_string=query)
    assert r.status_code in (200, 302, 404), (rule, r.status_code)
    body = text_of(r)
    asked = path + repr(query)  # an answer may repeat what was asked (the asker knows it), never more
    leaked = [m for m in DEFAULT_ONLY if m in body and m not in asked]
    assert not leaked, (rule, r.status_code, leaked, body[:600])


@pytest.mark.parametrize("path,query", EAST_ROUTES, ids=[p + str(q) for p, q in EAST_ROUTES])
def test_east_reads_what_it_shares_and_nothing_more(app, shared, path, query):
    eve = app.test_client()
    assert login(eve, "eve", PASSWORD).status_code == 302
    r = eve.get(path, query_string=query)
    assert r.status_code == 200, (path, r.status_code, r.get_data(as_text=True)[:300])
    body = text_of(r)
    leaked = [m for m in DEFAULT_ONLY if m in body]
    assert not leaked, (path, leaked, body[:600])
    if "pages" in path or "search" in path:
        assert "biquge.example/1.html" in body  # its own page is there
