"""Attacks that held before, tried again after the egress, upload, scoped-read and evidence
changes, as the organisation 'east' (its admin 'eve' signed in, its read and write tokens):
XXE and a billion laughs in an uploaded EPUB, a zip-slip upload, XSS in a title shown on the
admin's pages, CSRF on a POST route, another organisation's match and evidence (IDOR), and
token scopes."""
from __future__ import annotations

import io
import re
import time
import zipfile

import pytest

from tests.tracker.test_uploads import CH1, CH2, epub_book, zipped
from tests.web.conftest import csrf_token
from tests.web.test_orgs import east, signed_in  # noqa: F401  (a fixture)
from tracker.store.scoped import ScopedStore
from tracker.tenancy.tokens import create_token

from .conftest import bearer
from .servers import answer

DEFAULT_PAGE = "https://biquge.example/1.html"  # the default organisation's page and match (tests/web/conftest)
DEFAULT_CHAPTER = "山城旧事/第1章"


@pytest.fixture
def east_tokens(east):
    return {scope: bearer(create_token(east, "east", scope, f"east {scope}")[1]) for scope in ("read", "write")}


def upload(client, headers, title: str, name: str, data: bytes):
    return client.post("/api/works", data={"title": title, "file": (io.BytesIO(data), name)},
                       content_type="multipart/form-data", headers=headers)


def hostile_epub(doctype: str, body: str) -> bytes:
    """A real EPUB whose first chapter is XHTML with `doctype` (a DTD with entities) and `body`."""
    src = zipfile.ZipFile(io.BytesIO(epub_book([("第1章", CH1), ("第2章", CH2)])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("c1.xhtml"):
                data = (f"<?xml version='1.0' encoding='utf-8'?>\n{doctype}\n"
                        f"<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>第1章</title></head>"
                        f"<body><h1>第1章</h1><p>{CH1}</p><p>{body}</p></body></html>").encode()
            z.writestr(info, data)
    return out.getvalue()


def stored_text(store, org: str) -> str:
    scoped = ScopedStore(store, org)
    return "\n".join(c.text for w in scoped.works() for c in scoped.chapters(w.id))


def test_xxe_in_an_uploaded_epub_reads_no_file_and_fetches_nothing(client, east, east_tokens, serve):
    listener = serve(answer(b"XXE-FETCHED"))
    doctype = (f'<!DOCTYPE html [<!ENTITY file SYSTEM "file:///etc/passwd">'
               f'<!ENTITY net SYSTEM "{listener.url}/xxe">]>')
    r = upload(client, east_tokens["write"], "雨夜", "book.epub", hostile_epub(doctype, "前&file;中&net;后"))
    assert r.status_code in (201, 400), r.get_data(as_text=True)[:400]
    text = stored_text(east, "east")
    assert r.status_code == 400 or "前" in text  # the hostile chapter was read, its entities not
    assert "root:" not in text and "XXE-FETCHED" not in text and listener.requests == []


def test_a_billion_laughs_in_an_uploaded_epub_is_bounded(client, east, east_tokens):
    lol = '<!ENTITY lol0 "lollollollollollollollollollol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * 10}">' for i in range(1, 10))
    start = time.monotonic()
    r = upload(client, east_tokens["write"], "雨夜", "book.epub", hostile_epub(f"<!DOCTYPE html [{lol}]>", "前&lol9;后"))
    assert r.status_code in (201, 400), r.get_data(as_text=True)[:400]
    assert time.monotonic() - start < 20
    text = stored_text(east, "east")
    assert r.status_code == 400 or "前" in text
    assert text.count("lol") < 1000


def test_a_zip_slip_upload_stays_chapters(client, east, east_tokens, tmp_path):
    r = upload(client, east_tokens["write"], "雨夜", "w.zip",
               zipped({"../../../../tmp/第1章.txt": CH1, "/etc/第2章.txt": CH2}))
    assert r.status_code == 201, r.get_data(as_text=True)[:400]
    keys = [c.key for c in ScopedStore(east, "east").chapters(r.get_json()["work"])]
    assert len(keys) == 2 and not any(".." in k or k.count("/") != 1 for k in keys), keys


def test_a_script_in_a_title_is_text_on_the_admins_pages(app, client, east, east_tokens):
    title = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    r = upload(client, east_tokens["write"], title, "book.txt", f"第一章 雨夜\n{CH1}\n".encode())
    assert r.status_code in (201, 400), r.get_data(as_text=True)[:400]
    eve = signed_in(app, "eve")
    for path in ("/", "/works/", "/api/works"):
        html = eve.get(path).get_data(as_text=True)
        assert "<script>alert(1)" not in html and "<img src=x" not in html, path


def test_csrf_a_signed_in_admins_post_without_the_token_is_refused(app, east):
    eve = signed_in(app, "eve")
    before = ScopedStore(east, "east").subscriptions()
    r = eve.post("/followup/subscriptions", data={"channel": "email", "target": "x@evil.example", "work": "东城"})
    assert r.status_code in (400, 403)
    r = eve.post("/api/subscriptions", json={"channel": "email", "target": "x@evil.example", "work": "东城"})
    assert r.status_code in (400, 403)
    assert ScopedStore(east, "east").subscriptions() == before


def test_another_organisations_match_and_evidence_are_not_found(app, client, east, east_tokens):
    eve = signed_in(app, "eve")
    for who, headers in ((eve, {}), (client, east_tokens["read"])):
        for path in ("/matches/view", "/api/matches/view", "/evidence/package", "/api/evidence/package"):
            if path.startswith("/api") != bool(headers) and who is client:
                continue
            r = who.get(path, query_string={"page_key": DEFAULT_PAGE, "chapter": DEFAULT_CHAPTER}, headers=headers)
            assert r.status_code == 404, (path, r.status_code)
            assert "山城旧事" not in r.get_data(as_text=True) or path.endswith("view")
    r = client.post("/api/matches/status", json={"page": DEFAULT_PAGE, "chapter": DEFAULT_CHAPTER,
                                                "status": "dismissed"}, headers=east_tokens["write"])
    assert r.status_code == 404
    assert east.get_match(DEFAULT_PAGE, DEFAULT_CHAPTER).status != "dismissed"
    r = eve.post("/api/matches/status", json={"page": DEFAULT_PAGE, "chapter": DEFAULT_CHAPTER, "status": "dismissed"},
                 headers={"X-CSRFToken": csrf_token(eve, "/")})
    assert r.status_code == 404


def test_token_scopes_a_read_token_writes_nothing(client, east, east_tokens):
    read = east_tokens["read"]
    assert client.post("/api/works", data={"title": "t", "file": (io.BytesIO(b"x"), "a.txt")},
                       content_type="multipart/form-data", headers=read).status_code == 403
    assert client.post("/api/sites", json={"url": "https://x.example/", "name": "x"}, headers=read).status_code == 403
    assert client.post("/api/check-url", json={"url": "https://x.example/"}, headers=read).status_code == 403
    page_match = {"page": "https://dc.example/1", "chapter": "东城/1", "status": "dismissed"}
    assert client.post("/api/matches/status", json=page_match, headers=read).status_code == 403
    assert east.get_match("https://dc.example/1", "东城/1").status != "dismissed"
    assert client.get("/works/", headers=read).status_code in (302, 401, 403)  # a token is for the API only
    assert re.search(r"东城", client.get("/api/works", headers=read).get_data(as_text=True))
