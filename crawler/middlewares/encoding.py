"""Give every text response the encoding its bytes really have.

Pirate sites serve GBK pages labelled UTF-8, UTF-8 pages with a leftover
`<meta charset=gbk>`, Big5 with no label at all. Scrapy trusts the HTTP header
first, and a wrong guess yields plausible but different characters that no
fingerprint will ever match, so the bytes are checked with the same detector
`simtool` uses on files (pagetext.encoding): a label is trusted only when the
bytes agree with it. A site's rules can force an encoding instead.
"""
from __future__ import annotations

import logging

from scrapy.http import TextResponse

from fingerprint.errors import InputError
from pagetext.encoding import decode

from ..counts import count
from ..meta import FORCE_ENCODING, SITE

log = logging.getLogger(__name__)



class EncodingMiddleware:
    def __init__(self, stats=None):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_response(self, request, response, spider=None):
        if not isinstance(response, TextResponse) or not response.body:
            return response
        forced = request.meta.get(FORCE_ENCODING)
        if forced:
            return response.replace(encoding=forced)
        declared = response.headers.get(b"Content-Type", b"").decode("latin-1")
        label = declared.partition("charset=")[2].split(";")[0].strip(" \"'") or None
        try:
            _, codec, replaced = decode(response.body, declared=label)
        except InputError:
            return response  # binary in a text/* response: the spider skips it with the reason
        if replaced and self.stats is not None and request.meta.get(SITE):
            # Scrapy decodes with errors replaced too; counted here so a damaged site shows in its stats.
            count(self.stats, request.meta[SITE], "bad bytes replaced", n=replaced)
        codec = codec.split(" ")[0]  # "utf-8 (lossy)": decode as UTF-8, bad bytes replaced
        if _same(codec, response.encoding):
            return response
        if self.stats is not None:
            self.stats.inc_value("fpt/encoding_corrected")
        log.debug("%s: declared/assumed %s, bytes are %s", response.url, response.encoding, codec)
        return response.replace(encoding=codec)


def _same(a: str, b: str) -> bool:
    import codecs

    try:
        a, b = codecs.lookup(a).name, codecs.lookup(b).name
    except LookupError:
        return False
    # GB18030 is a superset of GBK and GB2312: either name decodes these bytes alike.
    family = {"gbk": "gb18030", "gb2312": "gb18030", "big5": "big5hkscs", "cp950": "big5hkscs"}
    return family.get(a, a) == family.get(b, b)
