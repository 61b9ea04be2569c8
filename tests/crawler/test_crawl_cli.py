"""`fptrack crawl` as people run it: in a terminal (a real pseudo-terminal) and piped, against
sites served on 127.0.0.1; what it says when pages cannot be fetched, its exit status, where a
crawl of given URLs is recorded and which job it resumes."""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from tracker.context import Context

from ..conftest import ROOT
from ..tracker.fixture_site import serve

FAST = ["--timeout", "1", "--retries", "0", "--delay", "0", "--depth", "3"]
CHAPTER = "<html><head><title>第{n}章</title></head><body><div id='content'>{text}</div>{links}</body></html>"


@dataclass
class Book:
    """Books at /<book>/ whose index links to chapters /<book>/<n>.html; `slow` paths answer after 3 s."""
    url: str = ""
    books: dict[str, int] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)


@contextmanager
def book_site(books: dict[str, int], slow: set[str] = frozenset()) -> Iterator[Book]:
    site = Book(books=dict(books), slow=set(slow))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            with lock:
                site.requests.append(self.path)
            if self.path in site.slow:
                time.sleep(3)
            book, _, rest = self.path.strip("/").partition("/")
            body, status = b"<h1>404</h1>", 404
            if book in site.books and not rest:
                links = "".join(f"<a href='/{book}/{i}.html'>第{i}章</a>" for i in range(1, site.books[book] + 1))
                body, status = CHAPTER.format(n=0, text="目录", links=links).encode(), 200
            elif book in site.books and rest.endswith(".html"):
                text = f"{book}的第{rest}章，" * 80
                body, status = CHAPTER.format(n=rest, text=text, links="").encode(), 200
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the crawler gave up on a slow page
                pass

    with serve(Handler) as server:
        site.url = f"http://127.0.0.1:{server.server_port}"
        yield site


def env_of(settings) -> dict[str, str]:
    return {**os.environ, **settings.to_env(), "COLUMNS": "160"}


def fptrack(settings, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """fptrack with its output piped, as a script runs it."""
    return subprocess.run([sys.executable, "-m", "fptrack", *args], env=env_of(settings), capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def fptrack_in_terminal(settings, *args: str, timeout: float = 120) -> tuple[int, str]:
    """fptrack with standard input, output and error on a pseudo-terminal, as a person runs it;
    returns its exit status and everything it wrote to the terminal."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # 40 rows, 160 columns
    proc = subprocess.Popen([sys.executable, "-m", "fptrack", *args], stdin=slave, stdout=slave, stderr=slave,
                            env={**env_of(settings), "TERM": "xterm"}, cwd=ROOT, close_fds=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            pytest.fail(f"fptrack {' '.join(args)} still running after {timeout} s:\n{out.decode(errors='replace')}")
        return proc.wait(30), out.decode("utf-8", errors="replace")
    finally:
        os.close(master)


def closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def silent_server() -> Iterator[str]:
    """A TCP server that accepts connections and never answers: every request times out."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"
    finally:
        server.close()


# ---- progress in a terminal -------------------------------------------------------------------

def test_crawl_in_a_terminal_shows_progress_and_succeeds(settings):
    with book_site({"a": 3}) as site:
        rc, shown = fptrack_in_terminal(settings, "crawl", site.url + "/a/", *FAST, "--no-process")
    assert rc == 0, shown
    assert "crawling" in shown and "page" in shown  # the progress bar, on the terminal
    assert "Traceback" not in shown and "TypeError" not in shown
    assert "127.0.0.1" in shown and "fetched" in shown  # the summary table
    assert {"/a/", "/a/1.html", "/a/3.html"} <= set(site.requests)


def test_crawl_piped_shows_no_progress(settings):
    with book_site({"a": 2}) as site:
        r = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--no-process")
    assert r.returncode == 0, r.stderr
    assert "crawling" not in r.stderr and "\r" not in r.stderr
    assert r.stdout.splitlines()[0].split()[:2] == ["site", "fetched"]


# ---- pages that cannot be fetched ---------------------------------------------------------------

def _one_line_failure(shown: str, url: str, reason: str) -> None:
    assert f"could not crawl {url}: {reason}" in shown, shown
    assert "Traceback" not in shown and "scrapy" not in shown.lower(), shown


@pytest.mark.parametrize("where", ["terminal", "pipe"])
def test_a_refused_connection_is_one_line_and_exit_1(settings, where):
    url = f"http://127.0.0.1:{closed_port()}/"
    if where == "terminal":
        rc, shown = fptrack_in_terminal(settings, "crawl", url, *FAST)
    else:
        r = fptrack(settings, "crawl", url, *FAST)
        rc, shown = r.returncode, r.stderr
        assert r.stderr.count("could not crawl") == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert rc == 1
    _one_line_failure(shown, url, "connection refused")
    assert "see the matches" not in shown


def test_a_silent_server_times_out_in_one_line(settings):
    with silent_server() as url:
        r = fptrack(settings, "crawl", url, *FAST, "-q")
    assert r.returncode == 1 and r.stderr.count("\n") == 1  # -q: the failure only
    _one_line_failure(r.stderr, url, "timed out after 1 s")


def test_https_to_a_plain_http_server_is_a_tls_error(settings):
    with book_site({"a": 1}) as site:
        url = site.url.replace("http://", "https://") + "/a/"
        r = fptrack(settings, "crawl", url, *FAST, "--format", "jsonl")
    assert r.returncode == 1
    _one_line_failure(r.stderr, url, "TLS error (")
    (record,) = (json.loads(line) for line in r.stdout.splitlines())
    assert record["fetched"] == 0 and list(record["failed_reasons"]) == [r.stderr.split(": ", 1)[1].strip()]


def test_some_pages_failing_while_others_are_fetched_exits_0_and_counts_them(settings):
    with book_site({"a": 3}, slow={"/a/2.html"}) as site:
        r = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--format", "jsonl", "--no-process")
    assert r.returncode == 0, r.stderr
    (record,) = (json.loads(line) for line in r.stdout.splitlines())
    assert record["failed"] == 1 and record["failed_reasons"] == {"timed out after 1 s": 1}
    assert record["fetched"] >= 3
    assert "could not crawl" not in r.stderr and "Traceback" not in r.stderr


# ---- where a crawl of URLs is recorded, and which job it resumes --------------------------------

def test_a_crawl_of_urls_is_recorded_under_its_own_site_not_another_on_the_host(settings):
    with book_site({"a": 1}) as site:
        r = fptrack(settings, "sites", "add", "local-books", site.url + "/a/", "--content", "#content")
        assert r.returncode == 0, r.stderr
        port = closed_port()
        fptrack(settings, "crawl", f"http://127.0.0.1:{port}/", *FAST)
        other = fptrack(settings, "crawl", site.url + "/b/", *FAST, "--format", "jsonl", "--no-process")
    assert json.loads(other.stdout)["site"] == site.url.removeprefix("http://")  # /b/ is not under /a/
    ctx = Context(settings)
    try:
        assert ctx.store.crawl_runs(site="local-books") == []
        (failed,) = ctx.store.crawl_runs(site=f"127.0.0.1:{port}")
        assert failed.counts.get("failed") == 1
        assert len(ctx.store.crawl_runs(site=site.url.removeprefix("http://"))) == 1
    finally:
        ctx.close()
    listed = {row["site"]: row for row in map(json.loads, fptrack(settings, "sites", "list", "--format",
                                                                   "jsonl").stdout.splitlines())}
    assert listed["local-books"]["last_crawl"] in ("never", None)


def test_a_crawl_of_other_urls_on_the_host_does_not_resume_a_paused_one(settings):
    with book_site({"a": 8, "b": 8}) as site:
        first = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--max-pages", "2", "--no-process",
                        "--format", "jsonl", "--concurrency", "1")
        assert json.loads(first.stdout)["outcome"] == "closespider_pagecount", first.stderr
        before = len(site.requests)
        second = fptrack(settings, "crawl", site.url + "/b/", *FAST, "--max-pages", "2", "--no-process",
                         "--format", "jsonl", "--concurrency", "1")
        crawled = site.requests[before:]
        assert "/b/" in crawled and not any(p.startswith("/a/") for p in crawled), crawled
        assert json.loads(second.stdout)["job"] != json.loads(first.stdout)["job"]
        # The same command again resumes its own job: /a/'s index is not fetched a second time.
        before = len(site.requests)
        again = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--no-process", "--format", "jsonl")
        resumed = site.requests[before:]
    assert json.loads(again.stdout)["job"] == json.loads(first.stdout)["job"]
    assert json.loads(again.stdout)["outcome"] == "finished", again.stderr
    assert "/a/" not in resumed and any(p.startswith("/a/") and p.endswith(".html") for p in resumed), resumed
    assert not any(p.startswith("/b/") for p in resumed), resumed


# ---- site names -------------------------------------------------------------------------------------

def test_a_site_name_that_is_not_a_slug_is_refused_everywhere_with_a_valid_one(settings, tmp_path):
    from tracker.safe_names import SITE_FORM

    rules = tmp_path / "sites.toml"
    rules.write_text("[[site]]\nname = 'bad name/../'\nstart_urls = ['http://127.0.0.1:9/']\n", encoding="utf-8")
    for args in (("sites", "add", "bad name/../", "http://127.0.0.1:9/"), ("sites", "import", str(rules)),
                 ("crawl", "--site", "bad name/../"), ("crawl", "--rules", str(rules)),
                 ("sites", "show", "bad name/../")):
        r = fptrack(settings, *args)
        assert r.returncode == 1, (args, r.stderr)
        (line,) = r.stderr.splitlines()
        assert SITE_FORM in line and "e.g. 'bad-name'" in line, (args, line)
    assert "no sites yet" in fptrack(settings, "sites", "list").stderr
    r = fptrack(settings, "sites", "add", "bad-name", "http://127.0.0.1:9/")
    assert r.returncode == 0 and "site bad-name: 1 start URL," in r.stdout


def test_a_job_paused_on_other_urls_is_not_resumed_without_a_word(settings):
    with book_site({"a": 6, "b": 6}) as site:
        first = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--max-pages", "2", "--no-process",
                        "--format", "jsonl", "--concurrency", "1", "--job", "mine")
        assert json.loads(first.stdout)["outcome"] == "closespider_pagecount", first.stderr
        before = len(site.requests)
        r = fptrack(settings, "crawl", site.url + "/b/", *FAST, "--job", "mine")
        assert r.returncode == 1 and len(site.requests) == before  # nothing fetched
        (line,) = r.stderr.splitlines()
        assert f"job 'mine' is a paused crawl of {site.url}/a/, not of {site.url}/b/" in line
        assert "--fresh" in line and "--job" in line
        r = fptrack(settings, "crawl", site.url + "/b/", *FAST, "--job", "mine", "--fresh", "--no-process",
                    "--format", "jsonl")
        assert r.returncode == 0 and json.loads(r.stdout)["outcome"] == "finished", r.stderr
        crawled = site.requests[before:]
        assert "/b/" in crawled and not any(p.startswith("/a/") for p in crawled), crawled
        # Finished: the next crawl of the job, of any URLs, starts afresh without a word.
        r = fptrack(settings, "crawl", site.url + "/a/", *FAST, "--job", "mine", "--no-process", "--format", "jsonl")
        assert r.returncode == 0 and json.loads(r.stdout)["outcome"] == "finished", r.stderr
