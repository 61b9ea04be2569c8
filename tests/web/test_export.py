"""CSV and JSON exports of every list: content, filters, formula injection."""
import csv
import io

import pytest

from tracker.store import MatchRecord
from web.reports import queries as reports

from .conftest import XSS_ATTR


def read_csv(r) -> list[dict[str, str]]:
    assert r.status_code == 200 and r.mimetype == "text/csv", r.get_data(as_text=True)[:300]
    body = r.get_data(as_text=True)
    r.close()
    return list(csv.DictReader(io.StringIO(body.lstrip("\ufeff"))))


def read_json(r):
    assert r.status_code == 200 and r.mimetype == "application/json"
    data = r.json
    r.close()
    return data


def test_matches_csv_is_filtered_sorted_and_an_attachment(admin):
    r = admin.get("/export/matches.csv?site=biquge&sort=containment")
    assert r.headers["Content-Disposition"].startswith('attachment; filename="fptrack-matches-')
    rows = read_csv(r)
    assert [x["page"] for x in rows] == ["https://biquge.example/2.html", "https://biquge.example/1.html"]
    assert rows[0]["chapter_title"] == "第2章" and rows[0]["containment"] == "0.9" and rows[0]["status"] == "new"


def test_csv_cells_cannot_be_formulas(admin, store):
    store.upsert_match(MatchRecord(page="=HYPERLINK(\"http://evil\")", chapter="山城旧事/第3章", work="山城旧事",
                                   site="@evil", similarity=0.5, containment=0.5, page_share=0.5, verdict="part"))
    rows = read_csv(admin.get("/export/matches.csv?work=山城旧事"))
    evil = [x for x in rows if x["site"].endswith("evil")][0]
    assert evil["page"] == "'=HYPERLINK(\"http://evil\")" and evil["site"] == "'@evil"
    assert any(x["site"] == XSS_ATTR for x in rows)  # other text passes unchanged


def test_matches_json(admin):
    data = read_json(admin.get("/export/matches.json?status=new&sort=-first_seen"))
    assert len(data) == 3 and data[0]["first_seen"] == "2026-11-21T06:10:00+00:00"
    assert set(data[0]) == set(reports.MATCH_COLUMNS)


def test_export_streams_in_batches(admin, store, monkeypatch):
    monkeypatch.setattr(reports, "EXPORT_BATCH", 2)
    for i in range(5):
        store.upsert_match(MatchRecord(page=f"bulk-{i}", chapter="山城旧事/第3章", work="山城旧事", site="bulk",
                                       similarity=0.5, containment=i / 10, page_share=0.5, verdict="part"))
    calls = []
    real = store.matches

    def spy(**kw):
        calls.append(kw)
        return real(**kw)

    monkeypatch.setattr(store, "matches", spy)
    rows = read_csv(admin.get("/export/matches.csv?site=bulk&sort=containment"))
    assert [x["page"] for x in rows] == [f"bulk-{i}" for i in range(5)]
    assert [c["limit"] for c in calls] == [2, 2, 2] and [c["offset"] for c in calls] == [0, 2, 4]


@pytest.mark.parametrize("name,query,first_column", [
    ("works", "", "work"), ("work-sites", "?work=山城旧事", "site"), ("work-chapters", "?work=山城旧事", "chapter"),
    ("sites", "", "site"), ("site-works", "?site=biquge", "work"), ("site-chapters", "?site=biquge", "chapter"),
    ("pages", "?status=failed", "key"), ("crawls", "?site=biquge", "id"), ("days", "", "day"),
])
def test_every_list_exports_as_csv_and_json(admin, name, query, first_column):
    rows = read_csv(admin.get(f"/export/{name}.csv{query}"))
    assert rows and list(rows[0])[0] == first_column
    data = read_json(admin.get(f"/export/{name}.json{query}"))
    assert len(data) == len(rows) and first_column in data[0]


def test_list_exports_hold_the_expected_rows(admin):
    chapters = read_csv(admin.get("/export/work-chapters.csv?work=山城旧事"))
    assert [c["title"] for c in chapters] == ["第1章", "第2章", "第3章"]
    assert chapters[0]["site:biquge"] == "1" and chapters[2]["site:biquge"] == ""
    assert chapters[0][f"site:{XSS_ATTR}"] == "1"
    pages = read_csv(admin.get("/export/pages.csv?status=failed"))
    assert [p["reason"] for p in pages] == ["no text left after removing markup"]
    crawls = read_json(admin.get("/export/crawls.json"))
    assert crawls[0]["skipped_reasons"] == {"not a chapter": 5} and crawls[0]["fetched"] == 10
    days = read_csv(admin.get("/export/days.csv"))
    assert [(d["day"], d["matches"]) for d in days] == [("2026-11-20", "1"), ("2026-11-21", "2")]


def test_export_errors(admin):
    assert admin.get("/export/nope.csv").status_code == 404
    assert admin.get("/export/matches.xml").status_code == 404
    assert admin.get("/export/work-sites.csv").status_code == 400
    assert admin.get("/export/matches.csv?sort=bogus").status_code == 400


def test_api_export_with_basic_auth(client):
    from .test_auth import basic

    r = client.get("/api/export/matches.csv", headers=basic("viewer"))
    assert len(read_csv(r)) == 3


def test_a_site_export_takes_the_name_as_the_pipeline_spells_it(admin):
    spaced = read_csv(admin.get("/export/site-works.csv?site=%20%20biquge%20"))
    assert spaced == read_csv(admin.get("/export/site-works.csv?site=biquge")) and spaced
    r = admin.get("/export/site-works.csv?site=bi%1bquge")
    assert r.status_code == 400 and "control character" in r.get_data(as_text=True)
