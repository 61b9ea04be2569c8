"""Real HTTP servers on 127.0.0.1 for the follow-up and notification tests: a pirate site
whose pages can be taken down and put back, and a webhook receiver that checks signatures."""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Site:
    """Pages by path -> (status, content type, body); anything else is a 404. Every request is noted."""
    url: str = ""
    pages: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def put(self, path: str, body: str | bytes, status: int = 200, content_type: str = "text/html; charset=utf-8"):
        self.pages[path] = (status, content_type, body.encode("utf-8") if isinstance(body, str) else body)

    def take_down(self, path: str) -> None:
        self.pages.pop(path, None)


@dataclass
class Receiver:
    """Webhook POSTs as received (headers, body); the first `fail_first` answer 503."""
    url: str = ""
    fail_first: int = 0
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)


@contextmanager
def serve(handler_class: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    thread = threading.Thread(target=server.serve_forever, name="fixture-http", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def pirate_site() -> Iterator[Site]:
    site = Site()

    class Handler(_Quiet):
        def do_GET(self) -> None:
            site.requests.append(self.path)
            status, kind, body = site.pages.get(self.path, (404, "text/html", b"<h1>404 Not Found</h1>"))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serve(Handler) as server:
        site.url = f"http://127.0.0.1:{server.server_port}"
        yield site


@contextmanager
def webhook_receiver(fail_first: int = 0) -> Iterator[Receiver]:
    receiver = Receiver(fail_first=fail_first)
    lock = threading.Lock()

    class Handler(_Quiet):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = 503 if len(receiver.received) <= receiver.fail_first else 200
                receiver.answers.append(status)
            out = json.dumps({"ok": status == 200}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    with serve(Handler) as server:
        receiver.url = f"http://127.0.0.1:{server.server_port}/hooks/fptrack"
        yield receiver
