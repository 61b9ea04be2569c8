"""Uploads attacked through the real server (`fptrack web`, waitress, in its own process):

- the server is killed with SIGKILL part-way through registering an upload: started again, it
  shows no part of that work (not listed, no chapters, not found by a search or the check of a
  chapter's text), and the same upload then succeeds whole;
- an organisation uploads a title another organisation already has: a 201 for both, each
  seeing its own work only."""
from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tracker.context import Context
from tracker.settings import Settings
from tracker.store.tenancy import Organisation
from tracker.tenancy.tokens import create_token

from .test_uploads_whole import PASSWORD, PY, _free_port, _multipart, book

pytestmark = pytest.mark.slow
FPTRACK = str(Path(PY).parent / "fptrack")
TITLE = "长夜"


def start(home: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "FPT_HOME": str(home), "FPT_REDIS_URL": "", "FPT_BROKER_URL": "", "FPT_MONGO_URL": ""}
    port = _free_port()
    proc = subprocess.Popen([FPTRACK, "web", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode()[-2000:]) from None
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the server did not start")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def call(url: str, path: str, auth: dict, *, data: bytes | None = None, ctype: str = "application/json",
         timeout: float = 600) -> tuple[int, str]:
    req = urllib.request.Request(url + path, data=data, method="POST" if data is not None else "GET",
                                 headers={**auth, **({"Content-Type": ctype} if data is not None else {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def basic(name: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()}


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    env = {**os.environ, "FPT_HOME": str(home), "FPT_REDIS_URL": "", "FPT_BROKER_URL": "", "FPT_MONGO_URL": ""}
    subprocess.run([FPTRACK, "user", "add", "admin", "--role", "admin", "--password-stdin"], input=PASSWORD + "\n",
                   env=env, check=True, capture_output=True, text=True, cwd=ROOT)
    return home


def chapters_in_store(home: Path, work: str) -> int:
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    try:
        return ctx.store.count_chapters(work)
    finally:
        ctx.close()


def test_a_server_killed_mid_upload_shows_none_of_it_and_the_same_upload_then_succeeds(home):
    data = book(1500, 1500)
    body, ctype = _multipart(TITLE, "book.txt", data)
    proc, url = start(home)
    import threading

    answered: list = []

    def send() -> None:
        try:
            answered.append(call(url, "/api/works", basic("admin"), data=body, ctype=ctype, timeout=120))
        except OSError as e:  # the server killed under it: no answer
            answered.append((0, str(e)))

    sender = threading.Thread(target=send, daemon=True)
    try:
        sender.start()
        deadline = time.monotonic() + 120
        while chapters_in_store(home, TITLE) < 20:  # part-way through its chapters
            assert time.monotonic() < deadline and proc.poll() is None, "the upload never began"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        sender.join(30)
    finally:
        stop(proc)
    assert proc.returncode == -signal.SIGKILL
    assert not answered or answered[0][0] != 201  # the client never heard it was done
    written = chapters_in_store(home, TITLE)
    assert 20 <= written < 1500
    proc, url = start(home)
    try:
        status, text = call(url, "/api/works", basic("admin"))
        assert status == 200 and TITLE not in text, text[:400]
        status, _ = call(url, f"/api/works/{urllib.parse.quote(TITLE)}/chapters", basic("admin"))
        assert status == 404
        status, text = call(url, f"/api/search?q={urllib.parse.quote(TITLE)}", basic("admin"))
        assert status == 200 and json.loads(text)["works"] == [], text[:400]
        chapter = data.decode().split("第2章", 1)[0]  # the first chapter's text, as a pirate copies it
        status, text = call(url, "/api/check", basic("admin"), data=json.dumps({"text": chapter}).encode())
        assert status == 200 and TITLE not in text, text[:400]
        status, text = call(url, "/api/works", basic("admin"), data=body, ctype=ctype)
        assert status == 201, text[:400]
        status, text = call(url, f"/api/works/{urllib.parse.quote(TITLE)}/chapters", basic("admin"))
        assert status == 200 and len(json.loads(text)["chapters"]) == 1500
    finally:
        stop(proc)
    assert chapters_in_store(home, TITLE) == 1500


def test_a_title_another_organisation_has_is_a_201_for_each(home):
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    ctx.store.upsert_org(Organisation("east"))
    _, token = create_token(ctx.store, "east", "write", "east's writer")
    ctx.close()
    east = {"Authorization": f"Bearer {token}"}
    body, ctype = _multipart(TITLE, "book.txt", book(3))
    proc, url = start(home)
    try:
        assert call(url, "/api/works", basic("admin"), data=body, ctype=ctype)[0] == 201
        status, text = call(url, "/api/works", east, data=body, ctype=ctype)
        assert status == 201, text[:400]
        status, again = call(url, "/api/works", east, data=body, ctype=ctype)  # its own again: a 4xx that says so
        assert 400 <= status < 500, again[:400]
        for auth in (basic("admin"), east):
            status, text = call(url, "/api/works", auth)
            assert status == 200 and text.count(TITLE) >= 1
            works = json.loads(text)["works"]
            assert [w["title"] for w in works] == [TITLE], works
    finally:
        stop(proc)


def test_a_crawled_page_is_not_matched_to_the_chapters_of_an_unfinished_upload(tmp_path):
    """What the killed server left in the index matches no crawled page until the work is whole."""
    from tracker.pipeline import process_page
    from tracker.registry import register_chapter
    from tracker.store import Chapter, Page, Work

    text = book(2, 1500).decode().split("第2章", 1)[0]
    ctx = Context(Settings.load({"FPT_HOME": str(tmp_path / "home")}))
    try:
        register_chapter(ctx, Chapter(key=f"{TITLE}/1", work=TITLE, title="第1章", text=text, number=1))
        ctx.store.upsert_page(Page(key="https://pirate.example/1.html", url="https://pirate.example/1.html",
                                   site="pirate", text=text))
        assert process_page(ctx, "https://pirate.example/1.html").matches == []
        assert ctx.store.matches(page="https://pirate.example/1.html") == []
        ctx.store.upsert_work(Work(id=TITLE, title=TITLE))  # the upload's last step: now it is whole
        done = process_page(ctx, "https://pirate.example/1.html")
        assert [m.chapter for m in ctx.store.matches(page="https://pirate.example/1.html")] == [f"{TITLE}/1"], done
    finally:
        ctx.close()
