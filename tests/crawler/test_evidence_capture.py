"""Evidence end to end: `fptrack crawl` of a site on 127.0.0.1 keeps each stored page's HTTP
exchange as a WARC file, and `fptrack evidence` packs it with the report and the notice.

The site records the exact bytes it sent for each path, so the test can check that warcio
reads back, byte for byte, what the server sent (a gzip-encoded body stays gzip-encoded:
the WARC holds the response as served, before the crawler decoded it)."""
from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from tracker.context import Context
from tracker.evidence.package import verify_package
from tracker.evidence.pdf import chromium
from tracker.evidence.warc import read_warc, sha256_digest
from tracker.registry import register_work
from web.demo.chapters import chapters_from_folder

from ..conftest import ROOT, need
from .render_site import RenderSite

ORIGINALS = ROOT / "samples" / "originals"
FAST = ["--timeout", "5", "--retries", "0", "--delay", "0", "--depth", "2", "--format", "jsonl", "-q"]

pytestmark = pytest.mark.slow


def _chapter_page(title: str, text: str) -> bytes:
    paragraphs = "".join(f"<p>{line}</p>" for line in text.splitlines() if line.strip())
    return (f"<html><head><meta charset='utf-8'><title>{title}</title></head><body><h1>{title}</h1>"
            f"<div id='content'>{paragraphs}</div></body></html>").encode()


class EvidenceSite:
    """/ links to /book/1.html (served gzip-encoded) and /book/2.html (plain); `sent` keeps the
    body bytes of each response as they went out."""

    def __init__(self, chapters):
        self.chapters = chapters
        self.sent: dict[str, bytes] = {}

    def __enter__(self) -> EvidenceSite:
        site = self
        pages = {"/book/1.html": _chapter_page(*self.chapters[0]), "/book/2.html": _chapter_page(*self.chapters[1])}
        index = ("<html><head><meta charset='utf-8'><title>目录</title></head><body>"
                 "<a href='/book/1.html'>第一章</a> <a href='/book/2.html'>第二章</a></body></html>").encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                headers = {"Content-Type": "text/html; charset=utf-8", "X-Fixture": "evidence"}
                if path == "/":
                    body = index
                elif path == "/book/1.html" and "gzip" in self.headers.get("Accept-Encoding", ""):
                    body = gzip.compress(pages[path], mtime=0)
                    headers["Content-Encoding"] = "gzip"
                elif path in pages:
                    body = pages[path]
                else:
                    self.send_error(404)
                    return
                site.sent[path] = body
                self.send_response(200)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def site():
    with EvidenceSite(chapters_from_folder(ORIGINALS)) as s:
        yield s


@pytest.fixture
def registered(settings):
    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    return settings


def fptrack(settings, *args, env=None):
    env = {**os.environ, **settings.to_env(), **(env or {})}
    return subprocess.run([sys.executable, "-m", "fptrack", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def crawl(settings, url, env=None):
    r = fptrack(settings, "crawl", url, *FAST, env=env)
    assert r.returncode == 0, f"fptrack crawl exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.splitlines()[-1])


def responses(data: bytes) -> list:
    """(WARC-Date, payload digest, raw payload, http headers) of each response record, read by warcio."""
    out = []
    for record in ArchiveIterator(io.BytesIO(data), check_digests=True):
        if record.rec_type == "response":
            payload = record.raw_stream.read()
            assert record.digest_checker.passed is not False, record.digest_checker.problems
            out.append((record.rec_headers.get_header("WARC-Date"),
                        record.rec_headers.get_header("WARC-Payload-Digest"), payload, record.http_headers))
    return out


def test_a_crawl_keeps_the_exchange_as_served_and_the_package_checks_out(registered, site, tmp_path):
    result = crawl(registered, site.url + "/")
    assert result["stored"] == 2, result
    page_url = site.url + "/book/1.html"
    ctx = Context(registered)
    try:
        (ev,) = ctx.store.evidence(page_url)
        assert ev.kind == "warc" and not ev.truncated
        data = ctx.store.evidence_data(page_url, ev.sha256)
        assert ctx.store.matches(page=page_url), "the fixture page copies a registered chapter"
        fetched = ctx.store.get_page(page_url).fetched_at
    finally:
        ctx.close()
    # The WARC file lives under FPT_HOME, named by its hash alone.
    (path,) = (registered.home / "evidence").rglob(f"{ev.sha256}.warc.gz")
    assert path.read_bytes() == data
    (date, digest, payload, http), = responses(data)
    assert payload == site.sent["/book/1.html"]  # byte for byte what the server sent: still gzip-encoded
    assert http.get_header("Content-Encoding") == "gzip" and http.get_header("X-Fixture") == "evidence"
    assert digest == sha256_digest(site.sent["/book/1.html"])
    assert abs((fetched - ev.fetched_at).total_seconds()) < 60 and date.startswith(ev.fetched_at.strftime("%Y-%m-%d"))
    requests = [r for r in read_warc(data) if r.type == "request"]
    assert requests and requests[0].http_status.startswith("GET /book/1.html")

    out = tmp_path / "page.zip"
    browser = chromium() is not None  # the PDF needs one; the rest of the package does not
    r = fptrack(registered, "evidence", page_url, "-o", str(out), *([] if browser else ["--no-pdf"]))
    assert r.returncode == 0, r.stderr
    assert "manifest SHA-256" in r.stdout
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("manifest.json"))
        assert {"report.html", "notice.txt", "manifest.json"} <= names
        (warc_name,) = [n for n in names if n.endswith(".warc.gz")]
        assert z.read(warc_name) == data
        (_, _, payload, _), = responses(z.read(warc_name))
        assert payload == site.sent["/book/1.html"]
        report = z.read("report.html").decode()
        assert not browser or z.read("report.pdf").startswith(b"%PDF-")
        assert page_url in z.read("notice.txt").decode()
    # every file is in the manifest but the manifest and its signature (over the manifest's bytes)
    assert "manifest.sig" in names and {f["name"] for f in manifest["files"]} == names - {"manifest.json",
                                                                                           "manifest.sig"}
    assert "<mark>" in report and manifest["matches"][0]["page"] == page_url
    assert verify_package(str(out)).ok

    ok = fptrack(registered, "evidence", "--verify", str(out))
    assert ok.returncode == 0 and ok.stdout.startswith("ok:"), ok.stderr
    raw = bytearray(out.read_bytes())
    at = raw.index(data[100:140]) + 5  # a byte inside the stored WARC file
    raw[at] ^= 0x40
    bad = tmp_path / "bad.zip"
    bad.write_bytes(bytes(raw))
    failed = fptrack(registered, "evidence", "--verify", str(bad))
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr
    assert any(line.startswith("FAIL: ") and warc_name in line for line in failed.stderr.splitlines()), failed.stderr
    need(browser, "chromium is not installed, so the package had no PDF report (scripts/system-deps test)")


def test_a_body_over_the_limit_is_kept_cut_and_marked(registered, site):
    crawl(registered, site.url + "/", env={"FPT_EVIDENCE_MAX_BYTES": "1024"})
    page_url = site.url + "/book/2.html"
    ctx = Context(registered)
    try:
        (ev,) = ctx.store.evidence(page_url)
        data = ctx.store.evidence_data(page_url, ev.sha256)
    finally:
        ctx.close()
    sent = site.sent["/book/2.html"]
    assert len(sent) > 1024 and ev.truncated
    (record,) = [r for r in read_warc(data) if r.type == "response"]
    assert record.payload == sent[:1024]
    assert record.headers["WARC-Truncated"] == "length"
    assert record.headers["FPT-Body-Length"] == str(len(sent))


def test_a_rendered_page_keeps_its_screenshot_and_the_dom_the_browser_made(registered, tmp_path):
    from crawler.render import chromium_path

    need(chromium_path() is not None, "chromium is not installed (scripts/system-deps test)")
    with RenderSite(chapters_from_folder(ORIGINALS)) as rsite:
        r = fptrack(registered, "crawl", rsite.url + "/script/1.html", "--depth", "0", "--timeout", "10",
                    "--retries", "0", "--delay", "0", "--format", "jsonl", "-q")
        assert r.returncode == 0, r.stderr
        page_url = rsite.url + "/script/1.html"
        ctx = Context(registered)
        try:
            kinds = {e.kind: e for e in ctx.store.evidence(page_url)}
            assert set(kinds) == {"warc", "screenshot"}, kinds
            png = ctx.store.evidence_data(page_url, kinds["screenshot"].sha256)
            data = ctx.store.evidence_data(page_url, kinds["warc"].sha256)
        finally:
            ctx.close()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    records = read_warc(data)
    assert [r.type for r in records] == ["request", "response", "conversion"]
    assert b'<div id="content"></div>' in records[1].payload  # as served: the script has not run
    assert "陈守义" in records[2].payload.decode("utf-8")  # as the browser made it


def test_evidence_files_stay_under_the_home(registered, site):
    crawl(registered, site.url + "/")
    home = Path(registered.home).resolve()
    files = [p for p in home.rglob("*") if p.is_file() and p.suffix in (".gz", ".png")]
    assert files and all(p.resolve().is_relative_to(home / "evidence") for p in files)
    assert all(len(p.name.split(".")[0]) == 64 for p in files)  # named by the hash, never the URL
