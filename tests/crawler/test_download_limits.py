"""Responses that end badly: too large without a Content-Length, and gzip cut mid-stream.

Served by a small HTTP/1.1 server on 127.0.0.1 and crawled by `fptrack crawl` in a child
process, as users run it; the classification and the stream check are also tested offline.
"""
from __future__ import annotations

import gzip
import threading
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from crawler.meta import RECEIVED
from crawler.middlewares.truncated import (
    REASON,
    TruncatedMiddleware,
    TruncatedResponse,
    stream_ends,
)
from crawler.spiders.novel import NovelSpider, classify
from tracker.context import Context

from ..conftest import ROOT
from .test_crawl_site import crawl

CHAPTER = (ROOT / "samples" / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
PAGE = ("<html><head><meta charset='utf-8'><title>第一章_山城旧事</title></head><body><h1>第一章</h1>"
        "<div id='content'>" + "<br/>\n".join(x for x in CHAPTER.splitlines() if x.strip()) + "</div></body></html>"
        ).encode("utf-8")
MAX_BYTES = 100_000
HOME = (b"<html><body><a href='/whole.html'>1</a> <a href='/cut.html'>2</a> <a href='/chunked.html'>3</a> "
        b"<a href='/sized.html'>4</a></body></html>")


class Server:
    """/whole.html: a gzipped chapter; /cut.html: the same gzip cut to a third (framed as complete);
    /chunked.html: 50 MB chunked, no Content-Length; /sized.html: a 50 MB Content-Length."""

    def __init__(self):
        self.hits: Counter[str] = Counter()
        handler = _handler(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: Server):
    packed = gzip.compress(PAGE)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            server.hits[self.path] += 1
            try:
                if self.path == "/chunked.html":
                    self._chunked(50 * 1024 * 1024)
                elif self.path == "/sized.html":
                    self._send(b"<html>" + b"x" * 1000, length=50 * 1024 * 1024)
                elif self.path == "/whole.html":
                    self._send(packed, gzip=True)
                elif self.path == "/cut.html":
                    self._send(packed[: len(packed) // 3], gzip=True)
                elif self.path == "/":
                    self._send(HOME)
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the crawler hung up on a body too large

        def _send(self, body: bytes, *, gzip: bool = False, length: int | None = None):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            if gzip:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(length if length is not None else len(body)))
            self.end_headers()
            self.wfile.write(body)
            if length is not None:
                self.close_connection = True

        def _chunked(self, total: int):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"<p>" + b"x" * (64 * 1024 - 7) + b"</p>\n"
            for _ in range(total // len(chunk)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args):
            pass

    return Handler


@pytest.mark.slow
def test_too_large_is_one_reason_with_or_without_a_length_and_a_cut_gzip_is_retried_never_stored(settings):
    with Server() as site:
        result = crawl(settings, site.url + "/", "--max-bytes", str(MAX_BYTES), "--retries", "1")
    assert result["skipped_reasons"].get(f"larger than {MAX_BYTES} bytes") == 2  # chunked and Content-Length
    assert "connection lost" not in result["failed_reasons"]
    assert result["failed_reasons"] == {REASON: 1}
    assert site.hits["/cut.html"] == 2  # fetched again once (--retries 1), then given up
    ctx = Context(settings)
    try:
        stored = {p.key.removeprefix(site.url) for p in ctx.store.pages()}
    finally:
        ctx.close()
    assert stored == {"/whole.html"}  # the whole gzip is stored; nothing of the cut one


def test_stream_ends_tells_whole_from_cut_streams():
    packed = gzip.compress(PAGE)
    assert stream_ends(packed, 31)
    assert stream_ends(packed + gzip.compress(b"more"), 31)  # several gzip members
    assert stream_ends(packed + b"\0\0\0", 31)  # padding after the member
    for cut in (len(packed) // 3, len(packed) - 1, 12):
        assert not stream_ends(packed[:cut], 31), cut
    assert not stream_ends(packed[:1] + b"\xff" * 50, 31)  # corrupt
    assert stream_ends(zlib.compress(PAGE), 15) and not stream_ends(zlib.compress(PAGE)[:-3], 15)
    bomb = gzip.compress(b"\0" * 5_000_000)
    assert stream_ends(bomb[: len(bomb) // 2], 31, limit=1000)  # past the limit: left to "too large"


def _middleware(retries=1):
    crawler = get_crawler(NovelSpider, {"RETRY_TIMES": retries, "LOG_LEVEL": "WARNING"})
    crawler.spider = NovelSpider.from_crawler(crawler, urls="http://a.test/")
    return TruncatedMiddleware.from_crawler(crawler), crawler


def test_the_middleware_retries_a_cut_gzip_then_gives_up_with_the_reason():
    mw, crawler = _middleware(retries=1)
    packed = gzip.compress(PAGE)
    request = Request("http://a.test/1.html")

    def answer(body, req):
        return HtmlResponse(req.url, body=body, headers={"Content-Encoding": "gzip"}, request=req)

    assert mw.process_response(request, answer(packed, request)).body == packed  # whole: untouched
    retry = mw.process_response(request, answer(packed[:100], request))
    assert isinstance(retry, Request) and retry.meta["retry_times"] == 1
    with pytest.raises(TruncatedResponse, match=REASON):
        mw.process_response(retry, answer(packed[:100], retry))
    assert crawler.stats.get_value(f"retry/reason_count/{REASON}") == 1
    plain = HtmlResponse(request.url, body=PAGE[:100], request=request)
    assert mw.process_response(request, plain) is plain  # not compressed: nothing to check


def test_failures_too_large_and_truncated_are_classified():
    settings = get_crawler(NovelSpider, {"DOWNLOAD_MAXSIZE": MAX_BYTES}).settings
    request = Request("http://a.test/big.html")
    request.meta[RECEIVED] = MAX_BYTES + 5000

    def failure(exc, req=request):
        f = Failure(exc)
        f.request = req
        return f

    too_large = ("skipped", f"larger than {MAX_BYTES} bytes")
    assert classify(failure(DownloadCancelledError("")), settings) == too_large  # chunked, grew past it
    assert classify(failure(DownloadCancelledError(
        "Expected to receive 52428800 bytes which is larger than download max size (100000)")), settings) == too_large
    assert classify(failure(IgnoreRequest("... exceeded DOWNLOAD_MAXSIZE (100000 B) during decompression.")),
                    settings) == too_large
    assert classify(failure(DownloadCancelledError(""), Request("http://a.test/x")), settings) == \
        ("failed", "connection lost")  # cancelled with little received: not a size matter
    assert classify(failure(TruncatedResponse("truncated response: ...")), settings) == ("failed", REASON)
