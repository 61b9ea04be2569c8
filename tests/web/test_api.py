"""The JSON API returns the same data the HTML pages show."""
import pytest

from web.params import Paging
from web.reports import queries as reports_module
from web.reports.catalog import ChapterCatalog
from web.reports.queries import Reports

from .conftest import XSS_ATTR

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")


def get(client, path, **params):
    r = client.get(path, query_string=params)
    assert r.status_code == 200 and r.is_json, r.get_data(as_text=True)[:500]
    return r.json


def test_me(admin):
    me = get(admin, "/api/me")
    assert me["name"] == "admin" and me["role"] == "admin" and me["csrf_token"]


def test_dashboard(admin):
    d = get(admin, "/api/dashboard", days=10)
    assert d["counts"]["works"] == 1 and d["counts"]["matches"]["new"] == 3
    assert len(d["per_day"]) == 10 and set(d["per_day"][0]) == {"day", "matches"}
    assert d["top_sites"][0] == {"site": "biquge", "matches": 2, "first_seen": "2026-11-20T06:10:00+00:00",
                                 "last_seen": "2026-11-21T06:10:00+00:00"}
    assert d["failures"][0]["key"] == "https://biquge.example/broken.html"


def test_works_and_work_report(admin, store):
    works = get(admin, "/api/works")
    assert works["scope"] == "active"
    w = works["works"][0]
    assert (w["work"], w["chapters"], w["copied"], w["matches"], w["sites"]) == ("山城旧事", 3, 2, 3, 2)
    rep = get(admin, "/api/works/山城旧事")
    assert [s["site"] for s in rep["sites"]] == ["biquge", XSS_ATTR]
    assert rep["sites"][0]["copied"] == 2 and rep["sites"][0]["coverage"] == pytest.approx(2 / 3)
    chapters = {c["chapter"]: c for c in rep["chapters"]}
    assert chapters["山城旧事/第1章"]["by_site"] == {"biquge": 1, XSS_ATTR: 1}
    assert chapters["山城旧事/第3章"]["matches"] == 0
    assert rep["totals"]["copied"] == 2 and rep["totals"]["first_seen"] == "2026-11-20T06:10:00+00:00"


def test_sites_and_site_report(admin):
    sites = {s["site"]: s for s in get(admin, "/api/sites")["sites"]}
    b = sites["biquge"]
    assert (b["pages"], b["done"], b["failed"], b["works"], b["matches"], b["configured"]) == (3, 2, 1, 1, 2, True)
    assert b["last_outcome"] == "finished"
    rep = get(admin, "/api/sites/view", name="biquge")
    assert rep["pages"] == {"queued": 0, "done": 2, "failed": 1}
    assert rep["crawl_totals"]["skipped"] == {"not a chapter": 5}
    assert rep["crawl_totals"]["counts"]["fetched"] == 10
    assert rep["crawl_totals"]["counts"]["not_modified"] == 0  # 304s of conditional re-crawls, none here
    assert [p["key"] for p in rep["failures"]] == ["https://biquge.example/broken.html"]
    assert rep["works"][0]["copied"] == 2 and rep["works"][0]["chapters"] == 3
    assert rep["paging"] == {"page": 1, "per_page": 50, "total": 1, "pages": 1}


def test_matches_list_pages_and_sorts(admin):
    d = get(admin, "/api/matches", sort="-first_seen", per_page=2)
    assert d["paging"] == {"page": 1, "per_page": 2, "total": 3, "pages": 2}
    assert [m["first_seen"] for m in d["matches"]] == ["2026-11-21T06:10:00+00:00"] * 2
    d = get(admin, "/api/matches", status="new", work="山城旧事", chapter="山城旧事/第1章")
    assert {m["page"] for m in d["matches"]} == {"https://biquge.example/1.html", "evil-1"}
    d = get(admin, "/api/matches", page_key="evil-1")
    assert [m["site"] for m in d["matches"]] == [XSS_ATTR]


def test_match_detail_has_texts_spans_segments_and_history(admin, store):
    store.set_match_status(*M1, "confirmed", by="alice")
    d = get(admin, "/api/matches/view", page_key=M1[0], chapter=M1[1])
    assert d["match"]["status"] == "confirmed" and d["match"]["history"][-1]["by"] == "alice"
    assert d["match"]["scores"]["minhash_jaccard"] == 0.8
    assert d["page"]["url"] == M1[0] and d["page"]["fetched_at"] == "2026-11-20T06:10:00+00:00"
    assert "".join(s["text"] for s in d["page_segments"]) == d["page"]["text"]
    copied = [s["text"] for s in d["page_segments"] if s["copied"]]
    assert copied == [d["chapter"]["text"]]
    assert d["passages"][0]["length"] == len(d["chapter"]["text"])


def test_status_change_of_several_matches(client, store):
    from .test_auth import basic

    body = {"status": "confirmed", "matches": [{"page": M1[0], "chapter": M1[1]},
                                               {"page": "evil-1", "chapter": M1[1]}]}
    r = client.post("/api/matches/status", json=body, headers=basic("admin"))
    assert r.status_code == 200 and [c["status"] for c in r.json["changed"]] == ["confirmed", "confirmed"]
    r = client.post("/api/matches/status", json={"status": "new", "matches": "x"}, headers=basic("admin"))
    assert r.status_code == 400
    r = client.post("/api/matches/status", json={"status": "new", "page": "no", "chapter": "no"},
                    headers=basic("admin"))
    assert r.status_code == 404 and r.is_json


def test_takedown_and_sent(client, store):
    from .test_auth import basic

    store.set_match_status(*M1, "confirmed", by="t")
    d = client.get("/api/takedown?work=山城旧事", headers=basic("viewer")).json
    assert [i["url"] for i in d["items"]] == [M1[0]] and M1[0] in d["text"] and d["more"] is False
    r = client.post("/api/takedown/sent", json={"work": "山城旧事"}, headers=basic("admin"))
    assert r.json == {"changed": 1} and store.get_match(*M1).status == "takedown-sent"


def test_search(admin):
    d = get(admin, "/api/search", q="biquge.example/1")
    assert [p["key"] for p in d["pages"]] == [M1[0]] and d["paging"]["total"] == 1
    assert get(admin, "/api/search")["works"] == []


def test_html_and_api_use_the_same_reports(admin, store):
    """The API answers are the report functions' output, serialised."""
    r = Reports(store, ChapterCatalog())
    from flask import json

    app = admin.application
    with app.app_context():
        same = json.loads(json.dumps(r.work("山城旧事")))
        assert get(admin, "/api/works/山城旧事") == same
        same = json.loads(json.dumps(r.matches({"work": None, "site": "biquge", "status": None, "chapter": None,
                                                "page": None}, "-containment", Paging(1, 50))))
        assert get(admin, "/api/matches", site="biquge") == same
    assert reports_module.EXPORT_BATCH >= 100
