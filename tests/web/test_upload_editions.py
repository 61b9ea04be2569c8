"""A new edition of a registered work, uploaded with 'Replace' in the form or replace=true in the
API: the counts of added, changed, unchanged and removed chapters; another organisation's work
and a missing title are 404; a taken title without replace is a 409 that says how to replace."""
from __future__ import annotations

import io

import pytest

from tests.tracker.test_uploads import zipped
from tracker.store import NotFound
from tracker.tenancy.tokens import create_token

from .conftest import CH1, csrf_token
from .test_orgs import east, signed_in  # noqa: F401  (a fixture)
from .test_upload import BASIC, upload_api, upload_form

CH3_NEW = "第三章改过了：作者把抽屉里的手稿重新誊写了一遍，添了几段雨夜的描写。" * 4
CH4 = "第四章是新写的，陈守义在码头上等了一夜，船始终没有来。" * 4
EDITION = zipped({"第1章.txt": CH1, "第3章.txt": CH3_NEW, "第4章.txt": CH4})  # 第2章 is gone


def replace_api(client, title: str, data: bytes = EDITION, headers=None, **extra):
    return client.post("/api/works", data={"title": title, "file": (io.BytesIO(data), "edition.zip"),
                                           "replace": "true", **extra},
                       content_type="multipart/form-data", headers=BASIC if headers is None else headers)


def chapters(store) -> dict[str, str]:
    return {c.key: c.content_hash for c in store.chapter_headers("山城旧事")}


def test_the_api_replaces_a_work_and_answers_the_counts(client, store):
    r = replace_api(client, "山城旧事", author="林岚二版")
    assert r.status_code == 201, r.get_json()
    done = r.get_json()
    assert {k: done[k] for k in ("replaced", "chapters", "added", "changed", "unchanged", "removed")} == {
        "replaced": True, "chapters": 3, "added": 1, "changed": 1, "unchanged": 1, "removed": 1}
    assert done["author"] == "林岚二版" == store.get_work("山城旧事").author
    assert sorted(chapters(store)) == ["山城旧事/第1章", "山城旧事/第3章", "山城旧事/第4章"]
    assert store.get_chapter("山城旧事/第3章").text.startswith(CH3_NEW[:20])
    # the removed chapter's match stays, and the report shows it as a deleted chapter
    assert store.count_matches(work="山城旧事") == 3
    assert store.matches(chapter="山城旧事/第2章")
    report = client.get("/api/works/山城旧事", headers=BASIC).get_json()
    gone = [c for c in report["chapters"] if c["chapter"] == "山城旧事/第2章"]
    assert gone and not gone[0]["registered"]
    listed = client.get("/api/works/山城旧事/chapters", headers=BASIC).get_json()["chapters"]
    assert [c["chapter"] for c in listed] == ["山城旧事/第1章", "山城旧事/第3章", "山城旧事/第4章"]


def test_a_new_work_answers_replaced_false(client, store):
    r = upload_api(client, "雨夜", "w.zip", zipped({"第1章.txt": CH4}))
    assert r.status_code == 201 and r.get_json()["replaced"] is False and r.get_json()["added"] == 1


def test_the_form_replaces_with_the_checkbox_and_flashes_the_counts(admin, store):
    page = admin.get("/works/").get_data(as_text=True)
    assert 'name="replace"' in page and "Replace the registered edition" in page
    r = upload_form(admin, "山城旧事", "edition.zip", EDITION, replace="on")
    assert r.status_code == 302, r.get_data(as_text=True)[:500]
    page = admin.get(r.headers["Location"]).get_data(as_text=True)
    assert ("New edition of 《山城旧事》 from the zip upload: 1 chapters added, 1 changed, 1 unchanged, "
            "1 removed") in page
    assert "山城旧事/第2章" not in chapters(store)
    assert admin.get("/works/山城旧事").status_code == 200


def test_without_replace_a_taken_title_is_a_409_that_says_how_to_replace(app, admin, store):
    before = chapters(store)
    r = upload_api(app.test_client(), "山城旧事", "edition.zip", EDITION)
    assert r.status_code == 409 and "send replace=true" in r.get_json()["message"]
    r = upload_form(admin, "山城旧事", "edition.zip", EDITION)
    html = r.get_data(as_text=True)
    assert r.status_code == 409 and "tick &#39;Replace the registered edition&#39;" in html
    assert "replace=true" not in html
    assert chapters(store) == before


def test_replacing_a_missing_title_is_a_404_that_says_so(app, admin, store):
    r = replace_api(app.test_client(), "晴天")
    assert r.status_code == 404 and "no work titled '晴天' to replace" in r.get_json()["message"]
    r = upload_form(admin, "晴天", "edition.zip", EDITION, replace="on")
    html = r.get_data(as_text=True)
    assert r.status_code == 404 and "晴天" in html and "without replace" in html
    assert 'name="replace" value="on" checked' in html  # the form again, as it was sent
    with pytest.raises(NotFound):
        store.get_work("晴天")


def test_another_organisations_work_is_a_404_like_a_missing_one(app, east):
    before = chapters(east)
    eve = signed_in(app, "eve")
    token = csrf_token(eve, "/works/")
    r = replace_api(eve, "山城旧事", headers={"X-CSRFToken": token})
    missing = replace_api(eve, "没有这本书", headers={"X-CSRFToken": token})
    assert r.status_code == missing.status_code == 404
    assert r.get_json()["message"].replace("山城旧事", "X") == missing.get_json()["message"].replace("没有这本书", "X")
    assert "林岚" not in r.get_data(as_text=True)
    r = upload_form(eve, "山城旧事", "edition.zip", EDITION, replace="on")
    assert r.status_code == 404 and "林岚" not in r.get_data(as_text=True)
    assert chapters(east) == before and east.owner("work", "山城旧事") == "default"


def test_a_read_token_cannot_replace(client, store):
    _, read = create_token(store, "default", "read", "reader")
    before = chapters(store)
    r = replace_api(client, "山城旧事", headers={"Authorization": f"Bearer {read}"})
    assert r.status_code == 403
    assert chapters(store) == before


def test_a_write_token_replaces(client, store):
    _, write = create_token(store, "default", "write", "writer")
    r = replace_api(client, "山城旧事", headers={"Authorization": f"Bearer {write}"})
    assert r.status_code == 201 and r.get_json()["removed"] == 1


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_a_replace_that_is_not_true_or_false_is_a_400(client, store, value):
    before = chapters(store)
    r = replace_api(client, "山城旧事", replace=value)
    assert r.status_code == 400 and "replace must be true or false" in r.get_json()["message"]
    assert chapters(store) == before


def test_a_store_failure_half_way_is_a_503_that_says_what_was_done(client, store, monkeypatch):
    real = store.put_fingerprint

    def failing(record):
        if record.chapter == "山城旧事/第4章":
            from tracker.store import StoreError

            raise StoreError("the disk is full")
        return real(record)

    monkeypatch.setattr(store, "put_fingerprint", failing)
    r = replace_api(client, "山城旧事")
    body = r.get_json()
    assert r.status_code == 503, body
    assert "the disk is full" in body["message"] and "'山城旧事/第4章' was not added" in body["message"]
    assert body["partial"]["changed"] == 1 and body["partial"]["removed"] == 0
    assert sorted(chapters(store)) == ["山城旧事/第1章", "山城旧事/第2章", "山城旧事/第3章"]
    monkeypatch.undo()
    assert replace_api(client, "山城旧事").get_json()["added"] == 1
