"""One small HTTP client for the parts that fetch outside Scrapy (previews, re-checks, webhooks,
search providers), kept to the egress policy:

    resolve the host once ─▶ check every address ─▶ connect to the checked address (Host header,
    TLS SNI and certificate for the real name) ─▶ status, headers, body within one total deadline
    ─▶ a redirect is a new URL: checked again, resolved again

Every failure is a FetchError with a short reason ("timed out", "connection refused",
"incomplete answer", "refused: loopback address"...), never another exception: a caller counts
it and goes on with the next item.
"""
from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import urljoin, urlsplit

from .addresses import parse_ip
from .policy import EgressPolicy, Refused

REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_BYTES = 4 * 1024 * 1024
CHUNK = 65536

Resolver = Callable[[str, int], list[str]]


class FetchError(Exception):
    """No usable answer; `reason` is short and says which ("timed out", "incomplete answer")."""

    def __init__(self, url: str, reason: str, message: str = ""):
        super().__init__(message or f"could not fetch {url}: {reason}")
        self.url, self.reason = url, reason


@dataclass
class Response:
    url: str  # after redirects
    status: int
    reason: str = ""
    headers: Message = field(default_factory=Message)
    body: bytes = b""
    truncated: bool = False  # the body was longer than max_bytes and is cut there

    @property
    def content_type(self) -> str:
        return self.headers.get_content_type() if self.headers.get("Content-Type") else ""

    @property
    def charset(self) -> str | None:
        return self.headers.get_content_charset()


class Deadline:
    """Seconds left of one request's total time."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds, self._clock = seconds, clock
        self.end = clock() + seconds

    def left(self) -> float:
        return self.end - self._clock()

    def timeout(self) -> float:
        """A socket timeout for the next step: what is left (a little, never 0: 0 means non-blocking)."""
        return max(0.001, self.left())


def getaddrinfo_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def _resolve(resolver: Resolver, host: str, port: int, deadline: Deadline, url: str) -> list[str]:
    """The resolver's answer within the deadline (getaddrinfo has no timeout of its own)."""
    out: list = []

    def run() -> None:
        try:
            out.append(resolver(host, port))
        except BaseException as e:  # handed to the caller's thread
            out.append(e)

    t = threading.Thread(target=run, name="egress-dns", daemon=True)
    t.start()
    t.join(max(0.0, deadline.left()))
    if not out:
        raise FetchError(url, "timed out", f"could not fetch {url}: DNS lookup of {host} timed out")
    if isinstance(out[0], BaseException):
        raise FetchError(url, "DNS lookup failed", f"could not fetch {url}: DNS lookup of {host} failed")
    if not out[0]:
        raise FetchError(url, "DNS lookup failed", f"could not fetch {url}: {host} has no address")
    return out[0]


class _Connection(http.client.HTTPConnection):
    """An HTTP(S) connection to an address already checked, for the host name in the URL."""

    def __init__(self, ip: str, port: int, host: str, tls: bool, timeout: float, context: ssl.SSLContext | None):
        super().__init__(ip, port, timeout=timeout)
        self._name, self._tls, self._context = host, tls, context
        self.raw: socket.socket | None = None

    def connect(self) -> None:
        self.raw = socket.create_connection((self.host, self.port), self.timeout)
        self.raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self.raw
        if self._tls:
            context = self._context or ssl.create_default_context()
            self.sock = context.wrap_socket(self.raw, server_hostname=self._name)


def _reason(e: BaseException) -> str:
    if isinstance(e, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, ConnectionResetError):
        return "connection reset"
    if isinstance(e, (ssl.SSLError, ssl.CertificateError)):
        return f"TLS error: {getattr(e, 'reason', None) or e}"
    if isinstance(e, http.client.IncompleteRead):
        return "incomplete answer"
    if isinstance(e, http.client.RemoteDisconnected):
        return "closed without an answer"
    if isinstance(e, http.client.LineTooLong):
        return "bad answer: a header line too long"
    if isinstance(e, http.client.HTTPException):
        return f"bad answer: {type(e).__name__}"
    if isinstance(e, OSError):
        return f"network error: {e.strerror or type(e).__name__}"
    return f"bad answer: {type(e).__name__}"


def _once(method: str, url: str, body: bytes | None, headers: Mapping[str, str], policy: EgressPolicy,
          deadline: Deadline, max_bytes: int, resolver: Resolver, context: ssl.SSLContext | None) -> Response:
    parts = urlsplit(url)
    try:
        policy.check_scheme(parts.scheme, url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError as e:  # Refused, or a port that is not a number
        raise FetchError(url, getattr(e, "reason", "bad URL"), str(e) if isinstance(e, Refused)
                         else f"could not fetch {url}: bad URL ({e})") from None
    if not host:
        raise FetchError(url, "bad URL", f"could not fetch {url}: the URL has no host")
    literal = parse_ip(host)
    addresses = [str(literal)] if literal is not None else _resolve(resolver, host, port, deadline, url)
    try:
        for address in addresses:  # every one: a name that also resolves to a private address is refused
            ip = parse_ip(address)
            if ip is None:
                raise FetchError(url, "DNS lookup failed", f"could not fetch {url}: {host} resolved to {address!r}")
            policy.check(ip, host=host, url=url)
    except Refused as e:
        raise FetchError(url, e.reason, str(e)) from None
    tls = parts.scheme.lower() == "https"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    default_port = 443 if tls else 80
    host_header = (f"[{host}]" if ":" in host else host) + (f":{port}" if port != default_port else "")
    sent = {"Host": host_header, "Accept-Encoding": "identity", "Connection": "close", **headers}
    last: BaseException | None = None
    for address in addresses:
        if deadline.left() <= 0:
            break
        conn = _Connection(address, port, host, tls, deadline.timeout(), context)
        watchdog = threading.Timer(max(0.0, deadline.left()), _cut, (conn,))
        watchdog.daemon = True
        watchdog.start()
        try:
            try:
                conn.connect()
            except OSError as e:
                last = e
                continue  # the next address of the name
            try:
                conn.sock.settimeout(deadline.timeout())
                conn.request(method, target, body=body, headers=sent)
                conn.sock.settimeout(deadline.timeout())
                r = conn.getresponse()
                chunks, size = [], 0
                while size <= max_bytes:
                    if conn.sock is not None:
                        conn.sock.settimeout(deadline.timeout())
                    if deadline.left() <= 0:
                        raise TimeoutError
                    chunk = r.read1(min(CHUNK, max_bytes + 1 - size))
                    if not chunk:
                        if deadline.left() <= 0:  # the watchdog shut the socket
                            raise TimeoutError
                        if r.length:  # Content-Length promised more than came
                            raise http.client.IncompleteRead(b"".join(chunks), r.length)
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                data = b"".join(chunks)
                return Response(url, r.status, r.reason, r.msg, data[:max_bytes], truncated=size > max_bytes)
            except Exception as e:  # every transport error of this one request (noqa: BLE001)
                if deadline.left() <= 0:
                    raise FetchError(url, "timed out", f"could not fetch {url}: timed out after "
                                                       f"{deadline.seconds:g} s") from None
                raise FetchError(url, _reason(e)) from None
        finally:
            watchdog.cancel()
            conn.close()
    if last is None or deadline.left() <= 0:
        raise FetchError(url, "timed out", f"could not fetch {url}: timed out after {deadline.seconds:g} s")
    raise FetchError(url, _reason(last))


def _cut(conn: _Connection) -> None:
    """At the deadline: shut the connection's socket, so that a read blocked on it returns now."""
    raw = conn.raw
    if raw is not None:
        try:
            socket.socket.shutdown(raw, socket.SHUT_RDWR)
        except OSError:
            pass


def fetch(url: str, *, policy: EgressPolicy, method: str = "GET", body: bytes | None = None,
          headers: Mapping[str, str] | None = None, deadline: float = 10.0, max_bytes: int = MAX_BYTES,
          max_redirects: int = 5, resolver: Resolver = getaddrinfo_resolver,
          context: ssl.SSLContext | None = None) -> Response:
    """One request within `deadline` seconds in all (every redirect included). A 3xx is followed
    (checked like the first URL) up to `max_redirects` times; any other status is returned.
    Raises FetchError."""
    clock = Deadline(deadline)
    current, seen = url, 0
    while True:
        r = _once(method, current, body, headers or {}, policy, clock, max_bytes, resolver, context)
        location = r.headers.get("Location")
        if r.status not in REDIRECTS or not location or max_redirects <= 0:
            return r
        seen += 1
        if seen > max_redirects:
            raise FetchError(url, "too many redirects", f"could not fetch {url}: more than {max_redirects} redirects")
        current = urljoin(current, location.strip())
        if r.status == 303 or (r.status in (301, 302) and method == "POST"):
            method, body = "GET", None
