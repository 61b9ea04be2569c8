"""`fptrack demo`: the whole system on embedded defaults, checked through the admin it prepares."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest

from tracker.settings import Settings
from web import create_app

from ..conftest import ROOT
from .conftest import login

pytestmark = pytest.mark.slow


def demo(home, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FPT_")}
    env["FPT_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "fptrack", "demo", *args], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


def test_demo_prepares_a_crawled_and_matched_store_and_an_account(tmp_path):
    r = demo(tmp_path, "--no-serve", "--password", "demo-password-1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line[:5] for line in lines] == ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"]
    copied = int(re.search(r"(\d+) copying 山城旧事", lines[2]).group(1))
    assert copied == 5  # every chapter page of the sample site, in every encoding
    assert "robots.txt forbids it" in lines[2] and "HTTP 404" in lines[2]
    home = tmp_path / "demo"  # apart from FPT_HOME's own data
    app = create_app({"SETTINGS": Settings.load({"FPT_HOME": str(home)}), "TESTING": True})
    client = app.test_client()
    assert login(client, "demo", "demo-password-1").status_code == 302
    data = client.get("/api/dashboard").get_json()
    assert data["counts"]["matches"]["new"] == copied and data["counts"]["pages"]["done"] == copied + 1
    sites = client.get("/api/sites").get_data(as_text=True)
    assert "sample-biquge" in sites  # the crawl's statistics are there for the admin
    # The slow page timed out: no page is kept for it, and the dashboard says so all the same.
    assert "failed: 1 timed out after 2 s" in lines[2]
    (failed,) = data["crawl_failures"]
    assert failed["site"] == "sample-biquge" and failed["failed_reasons"] == {"timed out after 2 s": 1}
    page = client.get("/").get_data(as_text=True)
    assert "timed out after 2 s (1)" in page and "No failed pages" not in page


def test_a_second_demo_starts_afresh(tmp_path):
    assert demo(tmp_path, "--no-serve", "--password", "demo-password-1").returncode == 0
    again = demo(tmp_path, "--no-serve", "--password", "demo-password-2")
    assert again.returncode == 0
    assert re.search(r"(\d+) copying", again.stdout.splitlines()[2]).group(1) == "5"
    app = create_app({"SETTINGS": Settings.load({"FPT_HOME": str(tmp_path / "demo")}), "TESTING": True})
    client = app.test_client()
    assert login(client, "demo", "demo-password-1").status_code != 302  # the old account is gone
    assert login(client, "demo", "demo-password-2").status_code == 302


def test_a_busy_port_gets_a_message(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = demo(tmp_path, "--port", str(port))
    assert r.returncode == 1 and f"port {port} on 127.0.0.1 is in use" in r.stderr and "Traceback" not in r.stderr


def test_the_admin_loads_no_scrapy_and_the_crawler_no_flask():
    code = ("import sys, web, web.demo.command, web.cli; web.create_app; "
            "print(sorted(m for m in ('scrapy', 'twisted') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"
    code = ("import sys, crawler.cli, crawler.run, crawler.spiders.novel, crawler.pipelines.store; "
            "print(sorted(m for m in ('flask', 'flask_login', 'flask_wtf') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_a_home_folder_the_demo_did_not_make_is_never_cleared(tmp_path):
    data = tmp_path / "my-data"
    data.mkdir()
    (data / "fptrack.sqlite3").write_text("someone's store", encoding="utf-8")
    r = demo(tmp_path, "--no-serve", "--home", str(data))
    assert r.returncode == 1 and "holds files the demo did not make" in r.stderr and "Traceback" not in r.stderr
    assert (data / "fptrack.sqlite3").read_text(encoding="utf-8") == "someone's store"
    mine = tmp_path / "demo-here"
    assert demo(tmp_path, "--no-serve", "--home", str(mine), "--password", "demo-password-1").returncode == 0
    assert demo(tmp_path, "--no-serve", "--home", str(mine), "--password", "demo-password-2").returncode == 0
