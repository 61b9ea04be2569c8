"""crawler.capture on its own: which responses are held, the byte budget, and one WARC of a
chapter's parts, offline on Scrapy responses."""
from __future__ import annotations

from scrapy import Request
from scrapy.http import HtmlResponse

from crawler.capture import Captures
from tracker.evidence.warc import read_warc


def exchange(url: str, body: bytes, callback=None, **meta):
    request = Request(url, callback=callback, meta=meta, headers={"User-Agent": "fptrack-test"})
    response = HtmlResponse(url, body=body, request=request, headers={"Content-Type": "text/html"},
                            protocol="h2")
    return response, request


def parse_image(response):  # named like the spider's callback for images
    return []


def test_the_parts_of_a_chapter_make_one_warc_in_order():
    c = Captures(max_bytes=10_000)
    for n in (1, 2):
        c.on_response(*exchange(f"http://127.0.0.1/c/1_{n}.html", f"<p>part {n}</p>".encode()))
    warc, shots, missing = c.files(["http://127.0.0.1/c/1_1.html", "http://127.0.0.1/c/1_2.html",
                                    "http://127.0.0.1/c/1_3.html"])
    assert missing == ["http://127.0.0.1/c/1_3.html"] and shots == []
    records = read_warc(warc.data)
    assert [(r.type, r.url.rsplit("/", 1)[1]) for r in records] == [
        ("request", "1_1.html"), ("response", "1_1.html"), ("request", "1_2.html"), ("response", "1_2.html")]
    assert records[1].payload == b"<p>part 1</p>" and records[1].http_status == "HTTP/2 200 OK"
    assert ("User-Agent", "fptrack-test") in records[0].http_headers
    # A second page cut from the same response (a whole work's chapters) gets the same bytes.
    again, _, _ = c.files(["http://127.0.0.1/c/1_1.html"])
    assert again.data == c.files(["http://127.0.0.1/c/1_1.html"])[0].data


def test_not_modified_responses_are_not_held_an_image_until_taken():
    c = Captures(max_bytes=10_000)
    response, request = exchange("http://127.0.0.1/c/1.html", b"")
    c.on_response(response.replace(status=304), request)
    assert not c.held
    # An image is held until the store pipeline takes it (its WARC kept when it holds text).
    c.on_response(*exchange("http://127.0.0.1/img/1.png", b"\x89PNG", callback=parse_image))
    warc = c.take("http://127.0.0.1/img/1.png")
    assert [r.type for r in read_warc(warc.data)] == ["request", "response"]
    assert not c.held and c.size == 0 and c.take("http://127.0.0.1/img/1.png") is None


def test_the_oldest_responses_go_when_the_budget_is_spent():
    c = Captures(max_bytes=1024, keep_bytes=4096)
    for n in range(10):
        c.on_response(*exchange(f"http://127.0.0.1/c/{n}.html", bytes(1000)))
    assert c.size <= 4096
    assert list(c.held) == [f"http://127.0.0.1/c/{n}.html" for n in range(6, 10)]


def test_a_long_body_is_held_cut_and_its_warc_says_so():
    c = Captures(max_bytes=1024)
    c.on_response(*exchange("http://127.0.0.1/c/big.html", b"a" * 5000))
    assert len(c.held["http://127.0.0.1/c/big.html"].exchange.body) == 1024
    warc, _, _ = c.files(["http://127.0.0.1/c/big.html"])
    assert warc.truncated and warc.body_length == 5000
    assert read_warc(warc.data)[1].headers["FPT-Body-Length"] == "5000"
