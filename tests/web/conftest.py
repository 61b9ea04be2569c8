"""Fixtures for the admin: an SQLite store in tmp_path with a work, its chapters, pages,
matches with evidence spans, a site with crawl runs, and two users (admin, viewer)."""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from werkzeug.security import generate_password_hash

from tracker.settings import Settings
from tracker.store import Chapter, CrawlRun, ImageMatch, MatchRecord, Page, PageImage, Site, User, Work, WorkImage
from tracker.store.sqlite import SQLiteStore
from web import create_app

PASSWORD = "correct horse battery"
XSS = "<script>alert(1)</script>"
XSS_ATTR = '"><img src=x onerror=alert(1)>'
JS_URL = "javascript:alert(1)"

CH1 = "陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。" * 4
CH2 = "雨停了，码头上的人渐渐多起来，挑夫们吆喝着把货物搬上船。" * 4
CH3 = "第三章的内容没有人抄袭，它安静地待在作者的抽屉里。" * 4
T0 = datetime(2026, 11, 20, 6, 10, tzinfo=UTC)
COVER = "山城旧事/cover.png"
COPY = "https://img.biquge.example/c/1.jpg"


def picture(colour: tuple[int, int, int], fmt: str = "PNG") -> bytes:
    import io

    from PIL import Image, ImageDraw

    img = Image.new("RGB", (90, 120), colour)
    ImageDraw.Draw(img).rectangle((10, 10, 50, 70), fill=(250, 250, 250))
    out = io.BytesIO()
    img.save(out, fmt)
    return out.getvalue()


def csrf_token(client, path: str = "/login") -> str:
    """The CSRF token of the client's session, read from a form on `path`."""
    html = client.get(path).get_data(as_text=True)
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, f"no CSRF token on {path}"
    return m.group(1)


def login(client, name: str, password: str = PASSWORD):
    token = csrf_token(client)
    return client.post("/login", data={"name": name, "password": password, "csrf_token": token})


def post(client, path: str, data: dict, token_from: str = "/"):
    """A form POST with the session's CSRF token."""
    return client.post(path, data={**data, "csrf_token": csrf_token(client, token_from)})


def fill(store: SQLiteStore) -> None:
    """One work of three chapters; biquge copies chapters 1 and 2, a hostile site copies chapter 1."""
    store.upsert_work(Work(id="山城旧事", title="山城旧事", author="林岚"))
    for n, text in enumerate((CH1, CH2, CH3), 1):
        store.upsert_chapter(Chapter(key=f"山城旧事/第{n}章", work="山城旧事", title=f"第{n}章", text=text, number=n))
    pages = [
        Page(key="https://biquge.example/1.html", url="https://biquge.example/1.html", site="biquge",
             text="广告" + CH1 + "本章未完", fetched_at=T0),
        Page(key="https://biquge.example/2.html", url="https://biquge.example/2.html", site="biquge",
             text=CH2, fetched_at=T0),
        Page(key="evil-1", url=JS_URL, site=XSS_ATTR, text=XSS + CH1 + XSS_ATTR, fetched_at=T0),
        Page(key="https://biquge.example/broken.html", url="https://biquge.example/broken.html", site="biquge",
             text="", fetched_at=T0),
    ]
    for p in pages:
        store.upsert_page(p)
        if p.text:
            store.set_page_status(p.key, "done")
    store.set_page_status("https://biquge.example/broken.html", "failed", "no text left after removing markup")

    def match(page: str, chapter: str, site: str, containment: float, spans: list[dict[str, int]], day: int):
        seen = T0 + timedelta(days=day)
        store.upsert_match(MatchRecord(
            page=page, chapter=chapter, work="山城旧事", site=site, similarity=containment - 0.05,
            containment=containment, page_share=0.9, verdict="duplicate",
            scores={"simhash_distance": 3.0, "minhash_jaccard": 0.8, "winnow": containment}, spans=spans,
            first_seen=seen, last_seen=seen))

    match("https://biquge.example/1.html", "山城旧事/第1章", "biquge", 1.0,
          [{"page_start": 2, "page_end": 2 + len(CH1), "original_start": 0, "original_end": len(CH1)}], 0)
    match("https://biquge.example/2.html", "山城旧事/第2章", "biquge", 0.9,
          [{"page_start": 0, "page_end": 20, "original_start": 0, "original_end": 20}], 1)
    match("evil-1", "山城旧事/第1章", XSS_ATTR, 0.8,
          [{"page_start": len(XSS), "page_end": len(XSS) + 30, "original_start": 0, "original_end": 30}], 1)
    # A registered cover, a copy of it on biquge, and their match.
    from fingerprint.image import fingerprint_image

    cover, copy = picture((30, 60, 200)), picture((30, 60, 200), "JPEG")
    store.upsert_work_image(WorkImage(key=COVER, work="山城旧事", name="cover.png", data=cover,
                                      fingerprint=fingerprint_image(cover).to_dict(), media_type="image/png"))
    store.upsert_page_image(PageImage(key=COPY, url=COPY, site="biquge", found_on="https://biquge.example/book/",
                                      data=copy, media_type="image/jpeg", fetched_at=T0))
    store.set_page_image_status(COPY, "done", fingerprint=fingerprint_image(copy).to_dict())
    store.upsert_image_match(ImageMatch(image=COPY, work_image=COVER, work="山城旧事", site="biquge",
                                        found_on="https://biquge.example/book/", distance=2, colour_agreement=1.0,
                                        first_seen=T0, last_seen=T0))
    store.upsert_site(Site(name="biquge", start_urls=["https://biquge.example/", JS_URL]))
    store.add_crawl_run(CrawlRun(site="biquge", started_at=T0, finished_at=T0 + timedelta(minutes=5),
                                 outcome="finished", counts={"fetched": 10, "stored": 3, "skipped": 5, "failed": 2},
                                 skipped={"not a chapter": 5}, failed={"http 404": 2}, job="job-1"))
    from tracker.store.discovery import DiscoveryQuery, DiscoveryRun

    # A discovery run (id 1) for the work: its first query found biquge, which it then tracked.
    run = store.add_discovery_run(DiscoveryRun(
        started_at=T0, finished_at=T0 + timedelta(minutes=2), provider="http", work="山城旧事",
        counts={"queries": 2, "failed": 1, "returned": 3, "new": 2, "stored": 2, "matches": 2, "sites_added": 1},
        sites_added=["biquge"]))
    store.put_discovery_query(DiscoveryQuery(run=run.id, n=0, work="山城旧事", kind="sentence", text=f'"{CH1[:20]}"',
                                             returned=3, new=2, stored=2, matches=2, sites=["biquge"]))
    store.put_discovery_query(DiscoveryQuery(run=run.id, n=1, work="山城旧事", kind="title", text='"山城旧事" "林岚"',
                                             error="the search API answered HTTP 429 (3 tries)"))
    from tracker.store.tenancy import ApiToken

    store.add_token(ApiToken(id="t-sample", hash="0" * 64, org="default", scope="read", name="sample"))
    # generate_password_hash's default (scrypt) is slow on purpose; pbkdf2 keeps the tests quick
    for name, role in (("admin", "admin"), ("viewer", "viewer")):
        store.upsert_user(User(name=name, password_hash=generate_password_hash(PASSWORD, "pbkdf2:sha256:1000"),
                               role=role))


@pytest.fixture
def settings(tmp_path, monkeypatch):
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG", "FPT_SECRET_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FPT_HOME", str(tmp_path / "home"))
    return Settings.load()


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    fill(s)
    yield s
    s.close()


@pytest.fixture
def app(store, settings):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": store})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def admin(client):
    assert login(client, "admin").status_code == 302
    return client


@pytest.fixture
def viewer(client):
    assert login(client, "viewer").status_code == 302
    return client
