"""The admin's image copies: listed with both images, shown side by side with their hashes and
files, reviewed like text matches; the images themselves served only as PNGs drawn anew."""
from __future__ import annotations

import hashlib
import io

from lxml import html as lxml_html

from tracker.store import ImageMatch, PageImage

from .conftest import COPY, COVER, T0, XSS, XSS_ATTR, csrf_token, picture, post


def page(client, path, **params):
    r = client.get(path, query_string=params)
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    return r.get_data(as_text=True)


def test_the_list_shows_the_copy_beside_the_registered_image(admin):
    doc = lxml_html.fromstring(page(admin, "/images/"))
    row = doc.xpath("//table[contains(@class, 'images')]/tbody/tr")
    assert len(row) == 1
    sources = row[0].xpath(".//img/@src")
    assert any("/images/file/found?" in s for s in sources) and any("/images/file/registered?" in s for s in sources)
    assert "biquge" in row[0].text_content() and COVER in row[0].text_content()
    assert "No copied images" in page(admin, "/images/", site="elsewhere")
    assert "No copied images" in page(admin, "/images/", status="dismissed")


def test_the_detail_shows_both_files_with_their_hashes_and_reviews(app, admin, store):
    text = page(admin, "/images/view", image=COPY, original=COVER)
    copy, cover = store.get_page_image(COPY), store.get_work_image(COVER)
    assert copy.sha256 in text and cover.sha256 in text and "2 of 64 bits" in text
    r = post(admin, "/images/status", {"image": COPY, "original": COVER, "status": "takedown-sent"})
    assert r.status_code == 302
    m = store.get_image_match(COPY, COVER)
    assert m.status == "takedown-sent" and m.history[-1]["by"] == "admin"
    assert "takedown-sent" in page(admin, "/images/view", image=COPY, original=COVER)
    assert admin.get("/images/view", query_string={"image": COPY}).status_code == 400
    assert admin.get("/images/view", query_string={"image": "x", "original": COVER}).status_code == 404


def test_images_are_served_as_pngs_drawn_anew(admin, store):
    from PIL import Image

    r = admin.get("/images/file/found", query_string={"key": COPY})
    assert r.status_code == 200 and r.mimetype == "image/png"
    assert r.headers["X-Content-Type-Options"] == "nosniff" and "default-src 'none'" in r.headers[
        "Content-Security-Policy"]
    assert r.data != store.get_page_image(COPY).data and Image.open(io.BytesIO(r.data)).size == (90, 120)
    again = admin.get("/images/file/found", query_string={"key": COPY}, headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304
    assert admin.get("/images/file/registered", query_string={"key": COVER}).mimetype == "image/png"
    assert admin.get("/images/file/other", query_string={"key": COPY}).status_code == 404
    assert admin.get("/images/file/found", query_string={"key": "nothing"}).status_code == 404
    # Bytes that are not an image (a page that served HTML as a .jpg) are never passed on.
    store.upsert_page_image(PageImage(key="https://x/evil.jpg", url="https://x/evil.jpg", site="x", found_on="",
                                      data=b"<html>" + XSS.encode() + b"</html>"))
    bad = admin.get("/images/file/found", query_string={"key": "https://x/evil.jpg"})
    assert bad.status_code == 422 and b"<script>" not in bad.data and bad.mimetype != "image/png"


def test_hostile_keys_and_site_names_are_escaped(admin, store):
    key = f"https://x.example/{XSS}.jpg"
    store.upsert_page_image(PageImage(key=key, url=key, site=XSS_ATTR, found_on="javascript:alert(1)",
                                      data=picture((200, 10, 10))))
    store.upsert_image_match(ImageMatch(image=key, work_image=COVER, work="山城旧事", site=XSS_ATTR,
                                        found_on="javascript:alert(1)", distance=5, colour_agreement=0.7,
                                        first_seen=T0, last_seen=T0))
    for text in (page(admin, "/images/"), page(admin, "/images/view", image=key, original=COVER)):
        doc = lxml_html.fromstring(text)
        assert not doc.xpath("//script") and not doc.xpath("//*[@onerror]")
        assert not doc.xpath("//a[starts-with(@href, 'javascript:')]")


def test_the_work_report_counts_image_copies(admin):
    doc = lxml_html.fromstring(page(admin, "/works/山城旧事"))
    card = [c for c in doc.xpath("//div[@class='card']") if "image copies" in c.text_content()]
    assert card and card[0].xpath(".//b")[0].text == "1" and "1 registered image" in card[0].text_content()


def test_the_api_lists_shows_and_reviews_image_copies(admin):
    rows = admin.get("/api/images").get_json()["matches"]
    assert [(r["image"], r["original"], r["distance"]) for r in rows] == [(COPY, COVER, 2)]
    detail = admin.get("/api/images/view", query_string={"image": COPY, "original": COVER}).get_json()
    assert detail["registered"]["sha256"] == hashlib.sha256(picture((30, 60, 200))).hexdigest()
    token = csrf_token(admin, "/")
    r = admin.post("/api/images/status", json={"image": COPY, "original": COVER, "status": "confirmed"},
                   headers={"X-CSRFToken": token})
    assert r.status_code == 200 and r.get_json()["status"] == "confirmed"
    r = admin.post("/api/images/status", json={"image": COPY, "status": "confirmed"}, headers={"X-CSRFToken": token})
    assert r.status_code == 400
    r = admin.post("/api/images/status", json={"image": COPY, "original": COVER, "status": "gone"},
                   headers={"X-CSRFToken": token})
    assert r.status_code == 400
