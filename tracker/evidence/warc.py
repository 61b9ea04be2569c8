"""WARC records of an HTTP exchange, written and read back with warcio.

One fetch becomes a gzip-compressed WARC file of two records: the request (its line and
headers as sent) and the response (status line, headers and body as received, before any
Content-Encoding is undone). WARC-Date is the fetch time; WARC-Payload-Digest and
WARC-Block-Digest are SHA-256 (warcio checks them when it reads the file back). A body
longer than the limit is kept cut at it, with `WARC-Truncated: length` (the WARC field for
it) and the SHA-256 and length of the whole body in FPT-Body-SHA256 / FPT-Body-Length.

Each record is its own gzip member, so the files of a chapter's parts, each a fetch, are
joined into one WARC file by concatenation.

    >>> data = exchange_warc(Exchange(url="http://127.0.0.1/1.html", body=b"<p>hi</p>")).data
    >>> [r.type for r in read_warc(data)]
    ['request', 'response']
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import io
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

from tracker.store import now

__all__ = ["Exchange", "Captured", "WarcRecord", "WarcError", "exchange_warc", "rendered_warc", "read_warc",
           "sha256_digest"]

# Hop-by-hop framing the fetcher already undid: kept under another name, so a reader does not
# try to undo it again (the body is stored de-chunked).
_RENAMED = {"transfer-encoding": "X-Archive-Orig-Transfer-Encoding"}


class WarcError(ValueError):
    """A WARC file that cannot be read back, or whose digests do not match its bytes."""


@dataclass
class Exchange:
    """One fetch as it happened on the wire (the body as received, still content-encoded)."""
    url: str
    method: str = "GET"
    request_headers: list[tuple[str, str]] = field(default_factory=list)
    status: int = 200
    reason: str = ""
    protocol: str = "HTTP/1.1"
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    fetched_at: datetime = field(default_factory=now)
    ip: str = ""
    # When `body` was cut before it came here: the whole body's length and SHA-256 (hex).
    body_length: int = -1
    body_sha256: str = ""


@dataclass
class Captured:
    """A WARC file (gzip members) and what it says about the body it holds."""
    data: bytes
    url: str
    fetched_at: datetime
    truncated: bool = False
    body_sha256: str = ""  # of the whole body as received (hex)
    body_length: int = 0


@dataclass
class WarcRecord:
    """A record read back: its type, target, date, headers and payload (as stored)."""
    type: str
    url: str
    date: str
    headers: dict[str, str]
    http_status: str  # the HTTP first line: "GET /1.html HTTP/1.1", "HTTP/1.1 200 OK"
    http_headers: list[tuple[str, str]]
    payload: bytes


def sha256_digest(data: bytes) -> str:
    """The WARC form of a SHA-256 digest: "sha256:" and base32."""
    return "sha256:" + base64.b32encode(hashlib.sha256(data).digest()).decode("ascii")


def _date(t: datetime) -> str:
    return datetime_to_iso_date(t.astimezone(UTC).replace(tzinfo=None), use_micros=False)


def _record(writer: WARCWriter, url: str, kind: str, http: StatusAndHeaders | None, payload: bytes,
            headers: dict[str, str], content_type: str = "") -> object:
    """A record whose digests are SHA-256 (warcio's own default is SHA-1)."""
    block = payload
    if http is not None:
        http.compute_headers_buffer()  # what the writer will write, so the block digest covers it
        block = http.headers_buff + payload
    headers = {**headers, "WARC-Block-Digest": sha256_digest(block)}
    if kind in ("response", "request", "resource", "conversion"):
        headers["WARC-Payload-Digest"] = sha256_digest(payload)
    return writer.create_warc_record(url, kind, payload=io.BytesIO(payload), length=len(payload),
                                     http_headers=http, warc_headers_dict=headers, warc_content_type=content_type)


def _request_line(ex: Exchange) -> str:
    parts = urlsplit(ex.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{ex.method.upper()} {target} {ex.protocol or 'HTTP/1.1'}"


def exchange_warc(ex: Exchange, max_bytes: int | None = None) -> Captured:
    """The request and response records of one fetch, gzip-compressed; the body cut at max_bytes."""
    body = bytes(ex.body)
    kept = body[:max_bytes] if max_bytes is not None else body
    whole_length = max(ex.body_length, len(body))
    whole_sha256 = ex.body_sha256 if ex.body_length > len(body) and ex.body_sha256 else hashlib.sha256(body).hexdigest()
    truncated = len(kept) < whole_length
    date = _date(ex.fetched_at)
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    request_headers = list(ex.request_headers)
    if not any(k.lower() == "host" for k, _ in request_headers):
        request_headers.insert(0, ("Host", urlsplit(ex.url).netloc))
    request = _record(writer, ex.url, "request",
                      StatusAndHeaders(_request_line(ex), request_headers, is_http_request=True), b"",
                      {"WARC-Date": date})
    status = f"{ex.status} {ex.reason}".strip()
    headers = [(_RENAMED.get(k.lower(), k), v) for k, v in ex.headers]
    warc_headers = {"WARC-Date": date, "WARC-Concurrent-To": request.rec_headers.get_header("WARC-Record-ID")}
    if ex.ip:
        warc_headers["WARC-IP-Address"] = ex.ip
    if truncated:
        warc_headers["WARC-Truncated"] = "length"
        warc_headers["FPT-Body-Length"] = str(whole_length)
        warc_headers["FPT-Body-SHA256"] = whole_sha256
    response = _record(writer, ex.url, "response", StatusAndHeaders(status, headers, protocol=ex.protocol or "HTTP/1.1"),
                       kept, warc_headers)
    writer.write_record(request)
    writer.write_record(response)
    return Captured(out.getvalue(), ex.url, ex.fetched_at, truncated, whole_sha256, whole_length)


def rendered_warc(url: str, html: bytes, fetched_at: datetime, max_bytes: int | None = None,
                  refers_to: str = "") -> Captured:
    """A conversion record: the DOM a browser made of the page, as it read it (a script wrote the text)."""
    truncated = max_bytes is not None and len(html) > max_bytes
    kept = html[:max_bytes] if truncated else html
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    headers = {"WARC-Date": _date(fetched_at)}
    if refers_to:
        headers["WARC-Refers-To"] = refers_to
    if truncated:
        headers["WARC-Truncated"] = "length"
    writer.write_record(_record(writer, url, "conversion", None, kept, headers, "text/html; charset=utf-8"))
    return Captured(out.getvalue(), url, fetched_at, truncated, hashlib.sha256(html).hexdigest(), len(html))


def read_warc(data: bytes | io.IOBase) -> list[WarcRecord]:
    """Every record of a WARC file, its digests checked; WarcError says which record is wrong."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        data = data.read()
    data = bytes(data)
    if data[:2] == b"\x1f\x8b":
        try:  # every gzip member whole, its CRC and length right (warcio reads past a cut-off trailer)
            gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise WarcError(f"the WARC file's gzip stream is damaged: {type(e).__name__}: {str(e)[:200]}") from e
    stream = io.BytesIO(data)
    records: list[WarcRecord] = []
    try:
        for n, record in enumerate(ArchiveIterator(stream, check_digests=True, arc2warc=False), 1):
            payload = record.raw_stream.read()
            checker = record.digest_checker
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            if checker.passed is False or checker.problems:
                raise WarcError(f"record {n} ({record.rec_type} {url}): {'; '.join(checker.problems) or 'bad digest'}")
            if not record.rec_type or not record.rec_headers.get_header("WARC-Record-ID") \
                    or not record.rec_headers.get_header("WARC-Date"):
                raise WarcError(f"record {n}: not a WARC record (no WARC-Type, WARC-Record-ID or WARC-Date)")
            # Every record fptrack writes carries its digests: one without them cannot be checked.
            if not record.rec_headers.get_header("WARC-Block-Digest") or (
                    record.rec_type in ("response", "request", "conversion", "resource")
                    and not record.rec_headers.get_header("WARC-Payload-Digest")):
                raise WarcError(f"record {n} ({record.rec_type} {url}): no digest to check it by")
            http = record.http_headers
            records.append(WarcRecord(
                type=record.rec_type, url=url, date=record.rec_headers.get_header("WARC-Date") or "",
                headers=dict(record.rec_headers.headers), payload=payload,
                http_status=f"{http.protocol} {http.statusline}".strip() if http is not None else "",
                http_headers=list(http.headers) if http is not None else []))
    except WarcError:
        raise
    except (ArchiveLoadFailed, OSError, EOFError, ValueError, IndexError, KeyError, TypeError, AttributeError,
            UnicodeDecodeError) as e:
        raise WarcError(f"not a readable WARC file: {type(e).__name__}: {str(e)[:200]}") from e
    except Exception as e:  # zlib.error and whatever else a damaged gzip member raises inside warcio
        raise WarcError(f"not a readable WARC file: {type(e).__name__}: {str(e)[:200]}") from e
    if not records:
        raise WarcError("no WARC record in the file")
    return records
