"""Uploading, listing and removing works through the admin's forms and the API."""
from __future__ import annotations

import base64
import io

import pytest

from tests.tracker.test_uploads import CH1, CH2, book_text, epub_book, zipped
from tracker.store import NotFound

from .conftest import PASSWORD, csrf_token

BASIC = {"Authorization": "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()}
KINDS = {
    "text": ("book.txt", book_text("gb18030")),
    "zip": ("chapters.zip", zipped({"第1章.txt": CH1, "第2章.txt": CH2})),
    "epub": ("book.epub", epub_book([("第一章 雨夜", CH1), ("第二章 码头", CH2)])),
}
BAD = {
    "not text": (b"\x00\x01\x02\x03" * 300, "not text"),
    "zip bomb": (zipped({"1.txt": "雨" * 2_000_000}), "zip bomb"),
    "nested archive": (zipped({"inner.zip": zipped({"1.txt": CH1})}), "another archive"),
    "EPUB without chapters": (epub_book([("封面", "")]), "EPUB has no chapters"),
    "empty zip": (zipped({}), "zip is empty"),
    "empty file": (b"", "empty"),
}


def upload_form(client, title: str, name: str, data: bytes, **extra):
    return client.post("/works/", data={"title": title, "file": (io.BytesIO(data), name),
                                        "csrf_token": csrf_token(client, "/works/"), **extra},
                       content_type="multipart/form-data")


def upload_api(client, title: str, name: str, data: bytes, headers=None):
    return client.post("/api/works", data={"title": title, "file": (io.BytesIO(data), name)},
                       content_type="multipart/form-data", headers=headers or BASIC)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_admin_uploads_each_kind_in_the_form_and_sees_its_chapters(admin, store, kind):
    name, data = KINDS[kind]
    r = upload_form(admin, "雨夜", name, data, author="林岚")
    assert r.status_code == 302 and r.headers["Location"].endswith("/works/%E9%9B%A8%E5%A4%9C/chapters")
    page = admin.get(r.headers["Location"]).get_data(as_text=True)
    assert "2 chapters" in page and "Registered 《雨夜》" in page
    assert store.count_chapters("雨夜") == 2 and store.get_work("雨夜").author == "林岚"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_api_takes_each_kind_as_a_multipart_form(client, store, kind):
    name, data = KINDS[kind]
    r = upload_api(client, "雨夜", name, data)
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["kind"] == kind and r.get_json()["chapters"] == 2
    chapters = client.get("/api/works/雨夜/chapters", headers=BASIC).get_json()["chapters"]
    assert [c["number"] for c in chapters] == [1, 2]


def test_an_upload_over_the_app_wide_body_limit_is_taken(client, store, app):
    big = book_text() * 1  # the text, then padding lines past the 2 MiB that other requests may send
    padding = ("\n" + "这是一段很长的正文，用来让文件超过两兆字节。" * 20) * 3000
    data = big + padding.encode("utf-8")
    assert len(data) > app.config["MAX_CONTENT_LENGTH"]
    r = upload_api(client, "长篇", "long.txt", data)
    assert r.status_code == 201, r.get_json()


def test_too_large_is_a_413_and_registers_nothing(client, store, app):
    app.config["UPLOAD_MAX_BYTES"] = 1000
    r = upload_api(client, "雨夜", "book.txt", book_text() * 10)
    assert r.status_code == 413 and "1,000 bytes" in r.get_json()["message"]
    with pytest.raises(NotFound):
        store.get_work("雨夜")


@pytest.mark.parametrize("problem", sorted(BAD))
def test_bad_uploads_are_a_clear_400_in_the_api_and_the_form_and_register_nothing(app, admin, store, problem):
    data, words = BAD[problem]
    before = store.count_chapters()
    r = upload_api(app.test_client(), "雨夜", "upload.bin", data)
    assert r.status_code == 400 and words in r.get_json()["message"]
    r = upload_form(admin, "雨夜", "upload.bin", data)
    html = r.get_data(as_text=True)
    assert r.status_code == 400 and words in html and 'value="雨夜"' in html  # the form again, filled in
    assert store.count_chapters() == before
    with pytest.raises(NotFound):
        store.get_work("雨夜")


def test_a_taken_title_is_a_409_and_the_work_stays(client, store):
    r = upload_api(client, "山城旧事", "book.txt", book_text())
    assert r.status_code == 409 and "remove it first" in r.get_json()["message"]
    assert store.count_chapters("山城旧事") == 3


def test_no_file_or_title_says_what_to_give(client):
    r = client.post("/api/works", data={"title": "雨夜"}, content_type="multipart/form-data", headers=BASIC)
    assert r.status_code == 400 and "choose the file" in r.get_json()["message"]
    r = upload_api(client, "", "book.txt", book_text())
    assert r.status_code == 400 and "title" in r.get_json()["message"]


def test_viewers_cannot_upload_or_remove(viewer, store):
    r = upload_form(viewer, "雨夜", "book.txt", book_text())
    assert r.status_code == 403
    r = viewer.post("/works/山城旧事/remove", data={"confirm": "山城旧事", "csrf_token": csrf_token(viewer, "/works/")})
    assert r.status_code == 403 and store.get_work("山城旧事")
    assert "Upload a novel" not in viewer.get("/works/").get_data(as_text=True)


def test_an_upload_without_sign_in_is_a_401_and_a_form_from_another_site_a_403(client, store):
    r = client.post("/api/works", data={"title": "雨夜", "file": (io.BytesIO(book_text()), "b.txt")},
                    content_type="multipart/form-data")
    assert r.status_code == 401
    r = upload_api(client, "雨夜", "b.txt", book_text(), headers={**BASIC, "Origin": "https://evil.example"})
    assert r.status_code == 403
    with pytest.raises(NotFound):
        store.get_work("雨夜")


def test_an_upload_form_without_the_csrf_token_is_refused(admin, store):
    r = admin.post("/works/", data={"title": "雨夜", "file": (io.BytesIO(book_text()), "b.txt")},
                   content_type="multipart/form-data")
    assert r.status_code == 400
    with pytest.raises(NotFound):
        store.get_work("雨夜")


def test_removing_a_work_asks_for_confirmation_then_takes_chapters_and_matches(admin, store):
    page = admin.get("/works/山城旧事/remove").get_data(as_text=True)
    assert "3 chapters" in page and "3 matches" in page
    r = admin.post("/works/山城旧事/remove", data={"confirm": "wrong", "csrf_token": csrf_token(admin, "/works/")})
    assert r.status_code == 400 and store.get_work("山城旧事")
    r = admin.post("/works/山城旧事/remove", data={"confirm": "山城旧事", "csrf_token": csrf_token(admin, "/works/")})
    assert r.status_code == 302
    with pytest.raises(NotFound):
        store.get_work("山城旧事")
    assert store.count_chapters() == 0 and store.count_matches() == 0 and store.count_image_matches() == 0
    assert "Removed 《山城旧事》" in admin.get("/works/").get_data(as_text=True)
    assert admin.get("/works/山城旧事/chapters").status_code == 404


def test_the_api_removes_a_work_only_with_its_title_as_confirmation(client, store):
    r = client.delete("/api/works/山城旧事", headers=BASIC)
    assert r.status_code == 400 and "confirm=山城旧事" in r.get_json()["message"]
    assert store.count_chapters("山城旧事") == 3
    r = client.delete("/api/works/山城旧事?confirm=山城旧事", headers=BASIC)
    assert r.status_code == 200 and r.get_json() == {"work": "山城旧事", "removed": True, "chapters": 3,
                                                     "matches": 3}
    assert client.delete("/api/works/山城旧事?confirm=山城旧事", headers=BASIC).status_code == 404


def test_an_uploaded_work_is_found_by_check_text_and_gone_after_removal(admin, store):
    token = csrf_token(admin, "/")
    assert upload_api(admin, "雨夜", "b.txt", book_text(), headers={"X-CSRFToken": token}).status_code == 201
    found = admin.post("/api/check", json={"text": CH2}, headers={"X-CSRFToken": token}).get_json()
    assert any(m["work"] == "雨夜" for m in found["matches"])
    assert admin.delete("/api/works/雨夜?confirm=雨夜", headers={"X-CSRFToken": token}).status_code == 200
    found = admin.post("/api/check", json={"text": CH2}, headers={"X-CSRFToken": token}).get_json()
    assert not any(m["work"] == "雨夜" for m in found["matches"])
