"""A live admin in a thread, on a store filled by the real pipeline, and a headless Chromium
driven by Selenium with Debian's chromium-driver (Selenium Manager kept offline)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import ROOT, need

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ADMIN, PASSWORD = "alice", "a long enough password"
WORK = "山城旧事"


@dataclass
class Live:
    url: str  # http://127.0.0.1:PORT, no trailing slash
    home: Path
    page_urls: dict[str, str]  # page key -> the URL it was "crawled" from


def page_url(key: str) -> str:
    """Where a sample page pretends to come from: its site is the file name's first part."""
    site = key.split("-")[0]
    return f"https://www.{site}.example/shancheng/{key}.html"


def fill_home(home: Path) -> dict[str, str]:
    """Register the sample novel, ingest and process the sample pages, add an admin, as the
    `fptrack add-work`, `fptrack ingest` and `fptrack user add` commands do."""
    from tracker.context import Context
    from tracker.pipeline import ingest, process_queued
    from tracker.registry import register_work
    from tracker.settings import Settings
    from web.auth.accounts import new_user

    ctx = Context(Settings.load({"FPT_HOME": str(home)}))
    try:
        register_work(ctx, WORK, ROOT / "samples" / "originals", author="林岚")
        urls = {}
        for f in sorted((ROOT / "samples" / "pages").iterdir()):
            report = ingest(ctx, [str(f)], site=f.stem.split("-")[0])
            for key in report.queued:
                # Same text, so the URL is updated and the page stays queued.
                page = ctx.store.get_page(key)
                page.url = urls[key] = page_url(key)
                ctx.store.upsert_page(page)
        counts = process_queued(ctx)
        assert counts["matches"] >= 8, counts
        # The novel's cover, and a pirate site's smaller, re-compressed copy of it.
        import random

        from bench.images import cover, encode
        from tracker.media.images import register_image
        from tracker.pipeline import process_queued_images

        img, _ = cover(random.Random(5), title="Rain City")
        register_image(ctx, WORK, "cover.png", encode(img))
        copies = home.parent / "images"
        copies.mkdir()
        (copies / "wap-cover.jpg").write_bytes(encode(img.resize((180, 270)), "JPEG", quality=60))
        assert ingest(ctx, [str(copies)], site="wap").images == ["wap-cover.jpg"]
        assert process_queued_images(ctx)["matches"] == 1
        ctx.store.upsert_user(new_user(ADMIN, PASSWORD, "admin"))
    finally:
        ctx.close()
    return urls


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[Live]:
    """The admin as `fptrack web` builds it (settings from FPT_HOME only), on a free port."""
    from werkzeug.serving import make_server

    from tracker.settings import Settings
    from web import create_app

    home = tmp_path_factory.mktemp("e2e") / "home"
    urls = fill_home(home)
    app = create_app({"SETTINGS": Settings.load({"FPT_HOME": str(home)})})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="e2e-admin", daemon=True)
    thread.start()
    try:
        yield Live(f"http://127.0.0.1:{server.server_port}", home, urls)
    finally:
        server.shutdown()
        thread.join(10)
        app.extensions["fptrack"].store.close()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """tests/e2e/artifacts, emptied of the last run's screenshots so none can pass for a new one."""
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return ARTIFACTS


@pytest.fixture(scope="module")
def downloads(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def driver(tmp_path_factory, downloads):
    need(os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK),
         "Debian's chromium and chromium-driver are not installed: scripts/system-deps test installs them "
         "(as root), or sudo apt-get install chromium chromium-driver")
    need(importlib.util.find_spec("selenium") is not None, "selenium is not installed: pip install -e '.[test]'")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tmp_path_factory.mktemp("chromium-profile")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", "--window-size=1280,1000", "--lang=en-US"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SE_OFFLINE", "true")  # the machine may have no internet: never fetch a driver or browser
        drv = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep a screenshot of the browser as it was when a step failed, in tests/e2e/artifacts/failed/
    (apart from the screenshots the admin's walk-through counts, which another worker may be taking)."""
    outcome = yield
    report = outcome.get_result()
    drv = item.funcargs.get("driver") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and drv is not None:
        (ARTIFACTS / "failed").mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(ARTIFACTS / "failed" / f"{item.name}.png"))
