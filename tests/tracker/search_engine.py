"""A search engine for the discovery tests: a real HTTP server on 127.0.0.1 that indexes the
pages of fixture sites (fetched over HTTP, as a search engine's crawler would) and answers
`GET /search?q=...&format=json&pageno=N` in SearXNG's JSON form:

    {"query": "...", "results": [{"url": ..., "title": ..., "content": ...}, ...]}

A page matches when it holds every quoted phrase and every other word of the query,
punctuation and spaces aside. `fail` turns queries holding a text into failures: "500",
"429", "timeout" (answers after `slow_s` seconds), "badjson" or "nolist".
"""
from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from lxml import html as lxml_html

from .fixture_site import _Quiet, serve

_NOT_WORD = re.compile(r"[\W_]+")


def squeeze(text: str) -> str:
    return _NOT_WORD.sub("", text).lower()


@dataclass
class Engine:
    url: str = ""
    per_page: int = 3
    slow_s: float = 2.0
    pages: dict[str, tuple[str, str]] = field(default_factory=dict)  # url -> (title, text)
    fail: dict[str, str] = field(default_factory=dict)  # text in the query -> failure
    queries: list[str] = field(default_factory=list)  # every query asked, in order (pages too)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def search_url(self) -> str:
        return self.url + "/search?q={query}&format=json&pageno={page}"

    def index(self, url: str) -> None:
        """Fetch a page over HTTP and index its title and text."""
        with urllib.request.urlopen(url, timeout=5) as r:
            tree = lxml_html.fromstring(r.read().decode(r.headers.get_content_charset() or "utf-8", "replace"))
        title = (tree.findtext(".//title") or "").strip()
        for bad in tree.xpath("//script|//style"):
            bad.drop_tree()
        self.pages[url] = (title, tree.text_content())

    def matching(self, q: str) -> list[str]:
        """The URLs that match `q`, in the engine's order."""
        phrases = re.findall(r'"([^"]*)"', q)
        words = re.sub(r'"[^"]*"', " ", q).split()
        needles = [squeeze(p) for p in [*phrases, *words] if squeeze(p)]
        return sorted(u for u, (title, text) in self.pages.items()
                      if needles and all(n in squeeze(title + " " + text) for n in needles))

    def answer(self, q: str, page: int) -> tuple[int, str, bytes]:
        with self.lock:
            self.queries.append(q)
        for needle, failure in self.fail.items():
            if needle in q:
                if failure == "timeout":
                    time.sleep(self.slow_s)
                    break
                if failure in ("500", "429"):
                    return int(failure), "text/html", b"<h1>server error</h1>"
                if failure == "badjson":
                    return 200, "text/html", b"<html><body>Rate limited, try again</body></html>"
                if failure == "nolist":
                    return 200, "application/json", b'{"query": "x", "answers": []}'
        urls = self.matching(q)
        chunk = urls[(page - 1) * self.per_page:page * self.per_page]
        results = [{"url": u, "title": self.pages[u][0], "content": self.pages[u][1][:120].strip()} for u in chunk]
        body = json.dumps({"query": q, "number_of_results": len(urls), "results": results}, ensure_ascii=False)
        return 200, "application/json", body.encode("utf-8")


@contextmanager
def search_engine(**options) -> Iterator[Engine]:
    engine = Engine(**options)

    class Handler(_Quiet):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            args = parse_qs(parts.query)
            if parts.path != "/search" or args.get("format") != ["json"]:
                status, kind, body = 404, "text/html", b"<h1>404</h1>"
            else:
                status, kind, body = engine.answer(args.get("q", [""])[0], int(args.get("pageno", ["1"])[0]))
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (timeout tests)
                pass

    with serve(Handler) as server:
        engine.url = f"http://127.0.0.1:{server.server_port}"
        yield engine
