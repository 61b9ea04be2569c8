"""The evidence package downloaded from the admin in a real headless Chromium: sign in, open
a match's evidence, click "Download evidence package", and check the zip that arrives. The
screenshot goes to tests/e2e/artifacts/evidence/."""
from __future__ import annotations

import zipfile
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tracker.evidence.package import verify_package
from tracker.evidence.warc import Exchange, exchange_warc, read_warc
from tracker.store.evidence import Evidence
from tracker.store.open import store_at

from .conftest import ADMIN, ARTIFACTS, PASSWORD
from .test_admin_browser import WAIT, check_png, finished_download, page_left

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """tests/e2e/artifacts/evidence, emptied of the last run's screenshot; a folder of its own, so the
    admin's walk-through, which counts the screenshots in tests/e2e/artifacts, never sees this one."""
    folder = ARTIFACTS / "evidence"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    return folder


def test_download_the_evidence_package_of_a_match(driver, live, artifacts, downloads):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    store = store_at(None, live.home)
    try:
        match = store.matches(sort="-containment", limit=1)[0]
        served = "<html><body>山城的雨下了整整一夜</body></html>".encode()
        warc = exchange_warc(Exchange(url=live.page_urls.get(match.page, match.page), body=served,
                                      headers=[("Content-Type", "text/html; charset=utf-8")])).data
        store.put_evidence(Evidence(page=match.page, kind="warc", data=warc, url=match.page))
    finally:
        store.close()

    wait = WebDriverWait(driver, WAIT)
    # Anonymous: the download is behind the sign-in like every page.
    driver.get(live.url + "/evidence/package?" + urlencode({"page_key": match.page}))
    wait.until(EC.url_contains("/login"))
    driver.get(live.url + "/login")  # signed in from here, not sent on to the download
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    button = driver.find_element(By.CSS_SELECTOR, ".login button")
    button.click()
    wait.until(page_left(button))

    driver.get(live.url + "/matches/view?" + urlencode({"page_key": match.page, "chapter": match.chapter}))
    link = wait.until(EC.element_to_be_clickable((By.ID, "evidence-package")))
    assert "Download evidence package" in link.text
    driver.execute_script("arguments[0].scrollIntoView()", link)
    path = artifacts / "evidence-package-link.png"
    assert driver.save_screenshot(str(path))
    check_png(path)
    for old in downloads.iterdir():
        old.unlink()
    link.click()
    done = WebDriverWait(driver, 60).until(lambda _: finished_download(downloads))
    assert done.suffix == ".zip" and done.name.startswith("evidence-")
    result = verify_package(str(done))
    assert result.ok, result.problems
    with zipfile.ZipFile(done) as z:
        names = z.namelist()
        (name,) = [n for n in names if n.endswith(".warc.gz")]
        assert z.read(name) == warc and read_warc(z.read(name))[1].payload == served
        assert {"report.html", "notice.txt", "manifest.json"} <= set(names)
        assert "report.pdf" in names and z.read("report.pdf").startswith(b"%PDF-")
