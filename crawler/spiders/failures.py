"""Why a request of the spider failed: classify() names the outcome ("skipped" or "failed") and
the reason it is counted under, from the failure Scrapy or Twisted raised.

RECEIVED is the request meta the spider keeps the bytes received in (crawler.spiders.novel's
signal handlers), which tells a download cancelled for its size from a lost connection.
"""
from __future__ import annotations

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import (
    ConnectError,
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)

from ..meta import RECEIVED
from ..middlewares.egress import RefusedRequest
from ..middlewares.truncated import REASON as TRUNCATED
from ..middlewares.truncated import TruncatedResponse
from ..render import NEEDS_BROWSER, NeedsBrowser


def _tls_error(exc: BaseException) -> str | None:
    """What OpenSSL said when an HTTPS connection could not be set up ("wrong version number"), ""
    when it said nothing readable; None when `exc` is not a TLS failure. Twisted wraps it in a
    ResponseNeverReceived (or ResponseFailed) that Scrapy wraps again."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if type(e).__module__.startswith("OpenSSL") or "SSL" in type(e).__name__:
            detail = [part[-1] for part in (e.args[0] if e.args and isinstance(e.args[0], list) else [])
                      if isinstance(part, tuple) and part and isinstance(part[-1], str)]
            return "; ".join(d for d in detail if d)[:80]
        todo.extend(r.value for r in getattr(e, "reasons", ()) or () if getattr(r, "value", None) is not None)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None


def classify(failure, settings) -> tuple[str, str]:
    """("skipped" | "failed", reason) for a request that failed."""
    exc = failure.value
    request = getattr(failure, "request", None)
    maxsize = (request.meta.get("download_maxsize") if request is not None else None) or \
        settings.getint("DOWNLOAD_MAXSIZE")
    if failure.check(TruncatedResponse):
        return "failed", TRUNCATED
    if failure.check(NeedsBrowser):  # a page only a browser shows, and none is installed
        return "failed", NEEDS_BROWSER
    text = str(exc)
    # Too large, said three ways: a Content-Length over the limit ("max size"), a body that grew
    # past it (a bare cancel, but the bytes were counted), a body that decompressed past it.
    received = request.meta.get(RECEIVED, 0) if request is not None else 0
    if ("max size" in text or "maxsize" in text.lower() or "larger than download" in text
            or (failure.check(DownloadCancelledError) and maxsize and received > maxsize)):
        return "skipped", f"larger than {maxsize} bytes"
    if failure.check(HttpError):
        status = exc.response.status
        kind = "skipped" if 400 <= status < 500 and status not in (408, 429) else "failed"
        return kind, f"HTTP {status}"
    if failure.check(RefusedRequest):  # the egress policy (crawler.middlewares.egress): the address and the fix
        return "failed", exc.reason
    if failure.check(IgnoreRequest):
        if "robots.txt" in text:
            return "skipped", "robots.txt forbids it"
        if "offsite" in text.lower() or "allowed_domains" in text:
            return "skipped", "outside the allowed domains"
        return "skipped", f"ignored: {text[:80]}"
    if failure.check(DownloadTimeoutError, TimeoutError, TCPTimedOutError):
        return "failed", f"timed out after {settings.getfloat('DOWNLOAD_TIMEOUT'):g} s"
    if failure.check(CannotResolveHostError, DNSLookupError):
        return "failed", "host name not found"
    if failure.check(DownloadConnectionRefusedError, ConnectionRefusedError):
        return "failed", "connection refused"
    tls = _tls_error(exc)
    if tls is not None:
        return "failed", f"TLS error ({tls})" if tls else "TLS error"
    if failure.check(ResponseDataLossError, DownloadCancelledError, DownloadFailedError, ConnectError,
                     ConnectionLost):
        return "failed", "connection lost"
    return "failed", f"{type(exc).__name__}: {text[:80]}"
