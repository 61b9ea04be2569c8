"""Uploads are whole and bounded: a registration killed part-way leaves no visible work and the
same upload then succeeds; the server's memory stays bounded for a zip of many near-1 MiB
entries and for a large .txt; every archive shape is a 2xx or a 4xx; titles are unique per
organisation, not across them."""
from __future__ import annotations

import base64
import io
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.tracker.test_uploads import CH1, CH2, zipped
from tests.web.test_upload import upload_api
from tracker.context import Context
from tracker.settings import Settings
from tracker.store.scoped import ScopedStore
from tracker.store.tenancy import Organisation
from tracker.uploads.novels import read_upload, register_upload, remove_unfinished

PASSWORD = "a long enough password"
PY = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable


def book(chapters: int, chars: int = 600) -> bytes:
    body = "".join(f"第{i}章 第{i}回\n" + (CH1 * (chars // len(CH1) + 1))[:chars].replace("雨", "雨夜"[i % 2]) + f"{i}\n"
                   for i in range(1, chapters + 1))
    return body.encode("utf-8")


KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import tracker.uploads.registration as registration
    from tracker.context import Context
    from tracker.settings import Settings
    from tracker.uploads.novels import read_upload, register_upload

    ctx = Context(Settings.load({"FPT_HOME": sys.argv[1]}))
    real = registration.register_chapter
    done = 0

    def slowly(c, chapter, **kw):
        global done
        out = real(c, chapter, **kw)
        done += 1
        print(done, flush=True)
        time.sleep(0.02)
        return out

    registration.register_chapter = slowly
    up = read_upload("book.txt", Path(sys.argv[2]).read_bytes())
    register_upload(ctx, "山城旧事", up)
    print("finished", flush=True)
""")


def test_an_upload_killed_part_way_leaves_no_work_and_the_same_upload_then_succeeds(tmp_path):
    data = book(120)
    (tmp_path / "book.txt").write_bytes(data)
    home = tmp_path / "home"
    proc = subprocess.Popen([PY, "-c", KILLED, str(home), str(tmp_path / "book.txt")], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = 0
    try:
        for line in proc.stdout:
            if line.strip().isdigit():
                seen = int(line)
            if seen >= 15:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    try:
        assert ctx.store.count_chapters("山城旧事") >= 15  # what the killed run wrote is there...
        assert ctx.store.works() == []  # ...but no work is: not listed, not counted
        assert ScopedStore(ctx.store, "default").works() == []
        report = register_upload(ctx, "山城旧事", read_upload("book.txt", data))
        assert len(report.added) == 120 and report.work.id == "山城旧事"
        assert ctx.store.count_chapters("山城旧事") == 120
        assert [w.id for w in ctx.store.works()] == ["山城旧事"]
    finally:
        ctx.close()


def test_the_daily_run_removes_what_an_upload_stopped_long_ago_left(tmp_path):
    ctx = Context(Settings.load({"FPT_HOME": str(tmp_path)}))
    try:
        import tracker.uploads.registration as registration

        real = registration.register_chapter
        calls = []

        def dies(c, chapter, **kw):
            calls.append(chapter.key)
            if len(calls) == 3:
                raise SystemExit("killed")
            return real(c, chapter, **kw)

        registration.register_chapter = dies
        try:
            with pytest.raises(SystemExit):
                register_upload(ctx, "雨夜", read_upload("b.txt", book(5)))
        finally:
            registration.register_chapter = real
        # The failing run cleaned up after itself; a crash would not have: leave chapters behind.
        assert ctx.store.count_chapters("雨夜") == 0
        from tracker.registry import register_chapter
        from tracker.store import Chapter

        register_chapter(ctx, Chapter(key="雨夜/第1章", work="雨夜", title="第1章", text=CH1, number=1))
        assert remove_unfinished(ctx) == []  # too recent: an upload may be under way
        from datetime import timedelta

        assert remove_unfinished(ctx, older_than=timedelta(0)) == ["雨夜"]
        assert ctx.store.count_chapters("雨夜") == 0
    finally:
        ctx.close()


def test_a_zip_whose_entries_add_up_to_a_bomb_is_refused_by_the_whole_archive_ratio(tmp_path):
    # 60 entries just under 1 MiB each: every one under the per-entry ratio floor, all of them
    # under the total budget, and the archive still unpacks to hundreds of times its size.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for i in range(60):
            z.writestr(f"{i:03d}.txt", b"\xe9\x9b\xa8" * ((1024 * 1024 - 1) // 3))
    assert len(buf.getvalue()) < 400_000
    from tracker.uploads.novels import UploadError

    with pytest.raises(UploadError, match="times its size"):
        read_upload("bomb.zip", buf.getvalue())


def test_a_zip_with_a_file_and_a_folder_of_the_same_name_is_a_400_not_a_500(client, store):
    for entries in ({"x": CH1, "x/y.txt": CH2}, {"x/y.txt": CH2, "x": CH1}, {"a.txt": CH1, "A.TXT": CH2}):
        r = upload_api(client, "雨夜", "w.zip", zipped(entries))
        assert r.status_code == 400, r.get_data(as_text=True)
        assert "rename one" in r.get_json()["message"]
    assert all(w.id != "雨夜" for w in store.works())


PART = st.one_of(st.text(alphabet=list("ab. _-\x00\x7f章xX\\"), max_size=6), st.sampled_from(["..", ".", "CON", "x"]))
NAMES = st.lists(st.lists(PART, min_size=1, max_size=4).map("/".join), max_size=6)


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=NAMES, dirs=st.lists(st.booleans(), max_size=6), bodies=st.lists(st.binary(max_size=40), max_size=6))
def test_every_zip_shape_is_a_2xx_or_a_4xx(client, names, dirs, bodies):
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as z:
        warnings.simplefilter("ignore")  # duplicate names are one of the shapes tried
        for i, name in enumerate(names):
            if i < len(dirs) and dirs[i]:
                z.writestr(zipfile.ZipInfo(name.rstrip("/") + "/" if name else "d/"), b"")
            else:
                body = bodies[i] if i < len(bodies) else CH1.encode()
                z.writestr(zipfile.ZipInfo(name or "empty"), body + CH1.encode())
    title = f"t{uuid.uuid4().hex[:8]}"
    r = upload_api(client, title, "w.zip", buf.getvalue())
    assert 200 <= r.status_code < 500, r.get_data(as_text=True)[:400]


def test_titles_are_unique_per_organisation_not_across_them(tmp_path):
    ctx = Context(Settings.load({"FPT_HOME": str(tmp_path)}))
    try:
        from tracker.uploads.novels import WorkExists

        ctx.store.upsert_org(Organisation(name="east"))
        ctx.store.upsert_org(Organisation(name="west"))
        up = read_upload("w.zip", zipped({"第1章.txt": CH1, "第2章.txt": CH2}))
        east = Context(ctx.settings, store=ScopedStore(ctx.store, "east"), index=ctx.index)
        west = Context(ctx.settings, store=ScopedStore(ctx.store, "west"), index=ctx.index)
        a = register_upload(east, "山城旧事", up)
        b = register_upload(west, "山城旧事", up)
        assert a.work.title == b.work.title == "山城旧事" and a.work.id != b.work.id
        assert [w.title for w in ScopedStore(ctx.store, "west").works()] == ["山城旧事"]
        with pytest.raises(WorkExists):
            register_upload(Context(ctx.settings, store=ScopedStore(ctx.store, "west"), index=ctx.index),
                            "山城旧事", up)
        # Each replaces its own edition by the title it knows.
        again = register_upload(Context(ctx.settings, store=ScopedStore(ctx.store, "west"), index=ctx.index),
                                "山城旧事", up, replace=True)
        assert again.work.id == b.work.id and again.replaced
    finally:
        ctx.close()


# ---- the server's memory -------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _multipart(title: str, name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n{title}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.fixture
def server(tmp_path):
    env = {**os.environ, "FPT_HOME": str(tmp_path / "home"), "FPT_REDIS_URL": "", "FPT_BROKER_URL": "",
           "FPT_MONGO_URL": ""}
    fptrack = str(Path(PY).parent / "fptrack")
    subprocess.run([fptrack, "user", "add", "admin", "--role", "admin", "--password-stdin"], input=PASSWORD + "\n",
                   env=env, check=True, capture_output=True, text=True, cwd=ROOT)
    port = _free_port()
    proc = subprocess.Popen([fptrack, "web", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode()[-2000:]) from None
            time.sleep(0.1)
    try:
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _upload(url: str, title: str, name: str, data: bytes) -> tuple[int, str]:
    body, ctype = _multipart(title, name, data)
    auth = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    req = urllib.request.Request(url + "/api/works", data=body, method="POST",
                                 headers={"Content-Type": ctype, "Authorization": auth})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_servers_memory_stays_bounded_for_a_many_entry_zip_and_a_large_text(server, capsys):
    url, pid = server
    before = _rss_kib(pid)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for i in range(127):
            z.writestr(f"{i:03d}.txt", b"\xe9\x9b\xa8" * ((1024 * 1024 - 1) // 3))
    status, text = _upload(url, "bomb", "bomb.zip", buf.getvalue())
    assert status == 400 and "zip bomb" in text
    after_zip = _rss_kib(pid)
    big = book(3000, 3400)  # about 31 MB of chapter text, 3,000 chapters
    assert len(big) > 30_000_000
    status, text = _upload(url, "长篇", "book.txt", big)
    assert status == 201, text[:400]
    after_text = _rss_kib(pid)
    with capsys.disabled():
        print(f"\nweb server peak RSS: {before // 1024} MB at start, {after_zip // 1024} MB after the 127-entry zip, "
              f"{after_text // 1024} MB after a {len(big) / 1e6:.0f} MB .txt of 3,000 chapters")
    assert after_zip - before < 64 * 1024  # the refused zip was never unpacked
    # The text itself, its decoded form and its chapters (about 6x the file), never every
    # chapter's prepared fingerprints at once (which took 1.3 GB).
    assert after_text - before < 400 * 1024
