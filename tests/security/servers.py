"""Real HTTP servers on loopback for the egress tests: each answer is a function of the
request, run in its own thread, so a server may trickle, cut an answer short or redirect."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

Handler = Callable[[bytes, socket.socket], None]


class LoopbackServer:
    """A TCP server on 127.0.0.1 that hands each connection's request head to `handler`."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", tls=None):
        self.handler, self.host, self.tls = handler, host, tls  # tls: a server-side ssl.SSLContext
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.requests: list[bytes] = []
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head:
                got = conn.recv(65536)
                if not got:
                    break
                head += got
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
            while len(body) < length:
                got = conn.recv(65536)
                if not got:
                    break
                body += got
            self.requests.append(head.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n" + body)
            self.handler(head, conn)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def close(self) -> None:
        self._stop = True
        self.sock.close()


def answer(body: bytes = b"ok", status: str = "200 OK", headers: str = "Content-Type: text/html; charset=utf-8") -> Handler:
    def handle(_: bytes, conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 {status}\r\n{headers}\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode() + body)
    return handle


def redirect(location: str, status: str = "302 Found") -> Handler:
    return answer(b"", status, f"Location: {location}")


def cut_chunked(first: bytes = b"<html><body>half a page") -> Handler:
    """A chunked answer that announces more than it sends, then closes: IncompleteRead."""
    def handle(_: bytes, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + f"{len(first) + 500:x}\r\n".encode() + first)
    return handle


def trickle(every: float = 2.0, total: int = 60) -> Handler:
    """A 200 whose body comes one byte every `every` seconds (each read is quick to answer)."""
    def handle(_: bytes, conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n".encode())
        for _ in range(total):
            time.sleep(every)
            conn.sendall(b"x")
    return handle


def closed_port() -> int:
    """A loopback port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def routes(by_path: dict[str, Handler], default: Handler | None = None) -> Handler:
    """A handler per request path; others get a 404."""
    missing = default or answer(b"<h1>404</h1>", "404 Not Found")

    def handle(head: bytes, conn: socket.socket) -> None:
        path = head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
        by_path.get(path, missing)(head, conn)
    return handle


class AdminServer:
    """The admin app served by waitress (the server `fptrack web` runs) on a free loopback port, in a
    thread. Stopped from inside its own loop (its sockets closed by a call sent through waitress's
    trigger, after which the loop has nothing left and returns), so the loop never polls a socket
    closed under it."""

    def __init__(self, app, threads: int = 4):
        from waitress.server import create_server

        self.server = create_server(app, host="127.0.0.1", port=0, threads=threads)
        self.port = self.server.effective_port
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()

    def __enter__(self) -> AdminServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        from waitress import wasyncore

        self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        self.thread.join(10)
        self.server.task_dispatcher.shutdown()
        if self.thread.is_alive():
            raise RuntimeError("the admin's waitress loop did not stop within 10 s")
