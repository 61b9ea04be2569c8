"""Refuse compressed responses whose stream stops before its end.

A gzip body cut mid-stream (a dropped connection the server framed as complete,
a proxy that gave up) still decompresses: Scrapy's gunzip returns whatever came
through, and a third of a chapter would be stored and matched as if whole. The
compressed stream says where it ends, so this checks that it does, before
HttpCompressionMiddleware (590) decompresses it: a cut response is fetched again
(counted by RETRY_TIMES), then fails with the reason "truncated response".
"""
from __future__ import annotations

import zlib

from scrapy.downloadermiddlewares.retry import get_retry_request

REASON = "truncated response"
_CHUNK = 256 * 1024
# zlib's window bits: gzip wrapper, zlib wrapper, raw deflate (servers send "deflate" both ways).
_WBITS = {b"gzip": (31,), b"x-gzip": (31,), b"deflate": (15, -15)}


class TruncatedResponse(Exception):
    """The response's compressed body ends before its stream does."""


class TruncatedMiddleware:
    def __init__(self, crawler):
        self.crawler = crawler
        self.max_size = crawler.settings.getint("DOWNLOAD_MAXSIZE")

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_response(self, request, response):
        encodings = [e.strip().lower() for v in response.headers.getlist("Content-Encoding") for e in v.split(b",")]
        if request.method == "HEAD" or not response.body or not encodings:
            return response
        wbits = _WBITS.get(encodings[-1])  # the last encoding applied is undone first
        limit = request.meta.get("download_maxsize", self.max_size)
        if wbits is None or any(stream_ends(response.body, w, limit) for w in wbits):
            return response
        retry = get_retry_request(request, spider=self.crawler.spider, reason=REASON)
        if retry is not None:
            return retry
        raise TruncatedResponse(f"{REASON}: the {encodings[-1].decode('latin-1')} stream of {response.url} "
                                f"stops after {len(response.body)} bytes")


def stream_ends(body: bytes, wbits: int, limit: int = 0) -> bool:
    """Whether the compressed `body` reaches the end of its stream (every gzip member, for gzip).

    The output is thrown away a chunk at a time; past `limit` bytes of it the answer is
    True, and HttpCompressionMiddleware refuses the response as too large instead."""
    data, out = body, 0
    while True:
        d = zlib.decompressobj(wbits)
        try:
            while data and not d.eof:
                out += len(d.decompress(data, _CHUNK))
                data = d.unconsumed_tail
                if limit and out > limit:
                    return True
        except zlib.error:
            return False  # corrupt: what comes out of it is not the page either
        if not d.eof:
            return False
        data = d.unused_data
        if wbits != 31 or not data.strip(b"\0"):  # gzip may hold several members; trailing NULs are padding
            return True
