"""`SampleSite`: the built pages of the sample pirate site served over HTTP on 127.0.0.1 from a
daemon thread, with the request counts crawler tests check.
"""
from __future__ import annotations

import hashlib
import itertools
import threading
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from web.demo.build import build_site
from web.demo.pages import Resource
from web.demo.traps import respond


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a crawler that hangs up on the slow or huge page is expected, not an error


class SampleSite:
    """Serve `build_site(chapters, ...)` on 127.0.0.1 from a daemon thread; use as a context manager.

    `url` is the base URL without a trailing slash; `expected` maps each path to its kind;
    `copies` maps each chapter, part and /vip/ page to the index of the chapter it copies;
    `hits` counts the requests per path (with query), safely across threads.
    """

    def __init__(self, chapters: Sequence[tuple[str, str]], *, port: int = 0, host: str = "127.0.0.1", **options):
        self.chapters = [(t, x) for t, x in chapters]
        self.pages = build_site(self.chapters, **options)
        self.expected = {p: r.kind for p, r in self.pages.items()}
        # Session-id variants copy a chapter too, but a correct crawler never keeps them apart from it.
        self.copies = {p: r.copies for p, r in self.pages.items() if r.copies is not None and r.kind != "duplicate"}
        self._host, self._port = host, port
        self._hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._sids = itertools.count(10_000)
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the sample site is not running: use `with SampleSite(...) as site:`")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def hits(self) -> Counter[str]:
        """A snapshot of the requests so far, per path with query."""
        with self._lock:
            return Counter(self._hits)

    def requests_under(self, prefix: str) -> int:
        """How many requests asked for a path starting with `prefix`."""
        return sum(n for p, n in self.hits.items() if p.startswith(prefix))

    def _new_sid(self) -> str:
        with self._lock:
            k = next(self._sids)
        return hashlib.md5(f"live:{k}".encode()).hexdigest()[:16]

    def _answer(self, target: str) -> Resource:
        with self._lock:
            self._hits[target] += 1
        return respond(self.pages, target, self._new_sid)

    def start(self) -> SampleSite:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _QuietServer((self._host, self._port), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="sample-site", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes a slow answer that is still waiting
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None

    def __enter__(self) -> SampleSite:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _handler(site: SampleSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "nginx"
        sys_version = ""

        def do_GET(self) -> None:
            r = site._answer(self.path)
            if r.delay and site._stopping.wait(r.delay):
                return  # shutting down: the client gets a closed connection
            try:
                self.send_response(r.status)
                for name, value in r.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(r.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(r.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a download cap on the huge page)

        do_HEAD = do_GET

        def log_message(self, format: str, *args) -> None:
            pass  # quiet: tests and the demo own the terminal

    return Handler
