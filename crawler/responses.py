"""What the crawler reads off any response before its text: the content type, the kinds of text
it extracts, and a header kept as a validator."""
from __future__ import annotations

from scrapy.http import Response

TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
#: What extract() reads (no type: sniffed as HTML).
HTML_TYPES = ("", *(t for t in TEXT_TYPES if t != "text/plain"))


def content_type(response: Response) -> str:
    return response.headers.get(b"Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()


def header(response: Response, name: bytes) -> str:
    value = response.headers.get(name) or b""
    return value.decode("latin-1")[:200]  # a validator is sent back as is; a huge one is not kept
