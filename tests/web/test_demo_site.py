"""web.demo: the pirate site crawler tests run against, over real HTTP on 127.0.0.1."""
from __future__ import annotations

import re
import socket
import urllib.error
import urllib.request

import pytest

from tests.conftest import ROOT
from web.demo.build import build_site
from web.demo.chapters import chapters_from_folder
from web.demo.pages import BOOK_PATH, VARIANTS
from web.demo.server import SampleSite
from web.demo.traps import respond

ORIGINALS = ROOT / "samples" / "originals"
HUGE = 200_000
ALL_KINDS = {"home", "catalogue", "chapter", "part", "unrelated", "trap", "duplicate", "404", "redirect", "slow",
             "huge", "binary", "robots", "robots.txt"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def fetch(site: SampleSite, target: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one request, without following redirects or raising on 4xx."""
    try:
        with _opener.open(site.url + target, timeout=10) as r:
            return r.status, dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


@pytest.fixture(scope="module")
def chapters() -> list[tuple[str, str]]:
    return chapters_from_folder(ORIGINALS)


@pytest.fixture(scope="module")
def site(chapters):
    with SampleSite(chapters, slow_delay=0.2, huge_bytes=HUGE) as s:
        yield s


def test_chapters_from_folder_orders_by_the_number_in_the_name(chapters):
    # File names sort 一, 三, 二; the chapters come back 一, 二, 三.
    assert [t for t, _ in chapters] == ["第一章 雨夜来客", "第二章 旧宅疑云", "第三章 井下密室"]
    assert all(not text.startswith(title) and len(text) > 500 for title, text in chapters)


def test_chapters_from_folder_errors(tmp_path):
    with pytest.raises(ValueError, match="no .txt"):
        chapters_from_folder(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        chapters_from_folder(tmp_path / "missing")


@pytest.mark.parametrize("n", [1, 3, 7])
def test_every_feature_exists_whatever_the_number_of_chapters(n, chapters):
    chs = (chapters * 3)[:n]
    pages = build_site(chs, huge_bytes=1000)
    kinds = {r.kind for r in pages.values()}
    assert kinds == ALL_KINDS
    variants = {r.variant for r in pages.values() if r.kind == "chapter"}
    assert variants == set(VARIANTS)
    copied = {r.copies for r in pages.values() if r.kind in ("chapter", "part")}
    assert copied == set(range(n))
    assert sum(r.kind == "part" for r in pages.values()) == 1
    assert build_site(chs, huge_bytes=1000) == pages  # pure: the same chapters give the same site


def test_build_site_needs_a_chapter():
    with pytest.raises(ValueError, match="at least one"):
        build_site([])


def test_manifest(site):
    e = site.expected
    assert e["/robots.txt"] == "robots.txt" and e["/"] == "home" and e[BOOK_PATH] == "catalogue"
    assert e["/book/1/1.html"] == "chapter" and e["/book/1/2_2.html"] == "part"
    assert e["/book/1/4.html"] == "404" and e["/html/1/1.html"] == "redirect"
    assert e["/vip/1.html"] == "robots" and e["/download/book.bin"] == "binary"
    assert e["/calendar?d=2026-11-01"] == "trap"
    assert site.copies["/book/1/2.html"] == site.copies["/book/1/2_2.html"] == 1
    assert site.copies["/vip/1.html"] == 0 and site.copies["/big5/book/1/1.html"] == 0
    assert sum(k == "duplicate" for k in e.values()) == 2
    assert not any("sid=" in p for p in site.copies)


def test_robots_txt(site):
    status, headers, body = fetch(site, "/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert body.decode() == "User-agent: *\nDisallow: /vip/\n"


def test_home_links_to_catalogue_news_and_traps(site):
    status, _, body = fetch(site, "/")
    html = body.decode("utf-8")
    assert status == 200
    for href in (BOOK_PATH, "/news/1.html", "/calendar?d=2026-11-01"):
        assert f'href="{href}"' in html
    assert len(re.findall(r'href="[^"]*\?sid=[0-9a-f]{16}"', html)) == 2


def test_catalogue_links_every_special_page(site):
    html = fetch(site, BOOK_PATH)[2].decode("utf-8")
    for path in ("/book/1/1.html", "/book/1/2.html", "/book/1/3.html", "/book/1/4.html", "/html/1/1.html",
                 "/book/1/slow.html", "/book/1/huge.html", "/vip/1.html", "/download/book.bin", "/img/cover",
                 "/big5/book/1/1.html", "/nocharset/book/1/2.html"):
        assert f'href="{path}"' in html, path


def test_gbk_page_declares_gbk_in_meta(site, chapters):
    status, headers, body = fetch(site, "/book/1/1.html")
    assert status == 200 and "charset" not in headers["Content-Type"]
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    html = body.decode("gbk")
    assert '<meta charset="gbk">' in html
    assert chapters[0][0] in html and chapters[0][1].split("\n")[0] in html
    assert "天才一秒记住本站地址：www.xbiquge-fake.com" in html and '<div class="ad">' in html and "<script>" in html


def test_utf8_page(site, chapters):
    status, headers, body = fetch(site, "/book/1/2.html")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    html = body.decode("utf-8")
    assert f"<h1>{chapters[1][0]}(1/2)</h1>" in html
    assert 'href="/book/1/2_2.html">下一页</a>' in html and "本章未完，请点击下一页继续阅读" in html
    part2 = fetch(site, "/book/1/2_2.html")[2].decode("utf-8")
    assert f"<h1>{chapters[1][0]}(2/2)</h1>" in part2 and "下一页" not in part2


def test_wrong_label_page_is_gbk_under_a_utf8_header(site, chapters):
    status, headers, body = fetch(site, "/book/1/3.html")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    assert chapters[2][1].split("\n")[0] in body.decode("gbk")


def test_broken_page_has_no_document_tags(site):
    html = fetch(site, "/book/1/3.html")[2].decode("gbk")
    assert "<html>" not in html and "<body>" not in html and "</html>" not in html
    assert "</span>" in html and "<font" in html


def test_big5_page_is_traditional(site):
    status, headers, body = fetch(site, "/big5/book/1/1.html")
    assert "big5" in headers["Content-Type"]
    html = body.decode("big5")
    assert "雨夜來客" in html and "雨夜来客" not in html


def test_no_charset_page_says_nothing_about_its_encoding(site, chapters):
    status, headers, body = fetch(site, "/nocharset/book/1/2.html")
    assert "charset" not in headers["Content-Type"] and b"charset" not in body.lower()
    assert chapters[1][1].split("\n")[0] in body.decode("gbk")


def test_missing_chapter_is_404_and_old_url_redirects(site):
    assert fetch(site, "/book/1/4.html")[0] == 404
    assert fetch(site, "/no/such/page.html")[0] == 404
    status, headers, _ = fetch(site, "/html/1/1.html")
    assert status == 301 and headers["Location"] == "/book/1/1.html"


def test_calendar_links_to_the_next_day_forever(site):
    html = fetch(site, "/calendar?d=2026-11-01")[2].decode("utf-8")
    assert 'href="/calendar?d=2026-11-02"' in html and 'href="/calendar?d=2026-10-31"' in html
    html = fetch(site, "/calendar?d=2026-11-02")[2].decode("utf-8")
    assert 'href="/calendar?d=2026-11-03"' in html
    assert fetch(site, "/calendar?d=3000-01-01")[0] == 200
    assert fetch(site, "/calendar?d=not-a-date")[0] == 404


def test_session_ids_are_fresh_on_every_answer(site):
    first = fetch(site, f"{BOOK_PATH}?sid=0123456789abcdef")[2].decode("utf-8")
    second = fetch(site, f"{BOOK_PATH}?sid=0123456789abcdef")[2].decode("utf-8")
    sids = [set(re.findall(r"sid=([0-9a-f]{16})", page)) for page in (first, second)]
    assert sids[0] and sids[1] and not sids[0] & sids[1]
    assert "第一章 雨夜来客" in first  # the catalogue itself


def test_huge_slow_and_binary_pages(site):
    status, headers, body = fetch(site, "/book/1/huge.html")
    assert status == 200 and len(body) >= HUGE and int(headers["Content-Length"]) == len(body)
    status, _, body = fetch(site, "/book/1/slow.html")
    assert status == 200 and "精彩番外" in body.decode("utf-8")
    status, headers, body = fetch(site, "/download/book.bin")
    assert headers["Content-Type"] == "application/octet-stream" and b"\x00" in body
    status, headers, body = fetch(site, "/img/cover")
    assert headers["Content-Type"] == "image/png" and body.startswith(b"\x89PNG")


def test_hits_count_requests_per_target(chapters):
    with SampleSite(chapters, slow_delay=0, huge_bytes=1000) as s:
        assert s.hits == {}
        fetch(s, "/robots.txt")
        fetch(s, "/robots.txt")
        fetch(s, "/calendar?d=2026-11-05")
        assert s.hits["/robots.txt"] == 2 and s.hits["/calendar?d=2026-11-05"] == 1
        assert "/vip/1.html" not in s.hits
        assert s.requests_under("/calendar") == 1


def test_server_is_quiet_and_shuts_down(chapters, capfd):
    with SampleSite(chapters, slow_delay=5.0, huge_bytes=1000) as s:
        url = s.url
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        fetch(s, "/book/1/4.html")
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as sock:
            sock.sendall(b"GET /book/1/slow.html HTTP/1.0\r\n\r\n")  # left waiting: stopping must not hang on it
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/", timeout=2)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    with pytest.raises(RuntimeError, match="not running"):
        _ = s.url


def test_respond_makes_up_calendar_days_and_strips_session_ids(chapters):
    pages = build_site(chapters, huge_bytes=1000)
    assert respond(pages, "/calendar?d=2030-01-01").kind == "trap"
    r = respond(pages, "/book/1/1.html?sid=ffff", lambda: "0000000000000000")
    assert r.kind == "duplicate" and r.copies == 0 and b"sid=0000000000000000" in r.body
    assert respond(pages, "/robots.txt?sid=1").body == pages["/robots.txt"].body
    assert respond(pages, "/nothing").status == 404
