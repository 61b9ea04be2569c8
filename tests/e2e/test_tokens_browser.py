"""API tokens in a real headless Chromium: an admin makes a read token on the Tokens page,
sees it once, and a script uses it as Bearer on /api/works; revoked on the same page, it is
refused at once. Screenshots go to tests/e2e/artifacts/tokens/."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from .conftest import ADMIN, PASSWORD, WORK
from .screen import Screen
from .test_admin_browser import WAIT

pytestmark = pytest.mark.slow


def api_get(url: str, token: str | None) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_a_token_made_in_the_admin_is_shown_once_and_works_as_bearer_until_revoked(driver, live):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select

    screen = Screen(driver, "tokens")
    wait, css, shot = screen.wait, screen.css, screen.shot

    click = screen.click

    assert api_get(live.url + "/api/works", None)[0] == 401

    driver.get(live.url + "/login")
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    click(driver.find_element(By.CSS_SELECTOR, ".login button"))
    click(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, "API tokens"))))
    assert css("h1").text == "API tokens"
    assert "No tokens yet" in css("table").text

    form = css("#new-token-form")
    form.find_element(By.NAME, "name").send_keys("nightly report")
    Select(form.find_element(By.NAME, "scope")).select_by_visible_text("read")
    click(form.find_element(By.CSS_SELECTOR, "button"))
    token = css("#new-token").text.strip()
    assert token.startswith("fpt_") and len(token) > 40
    assert "not shown again" in css(".new-token").text
    row = css("table tbody tr").text
    assert "nightly report" in row and "read" in row and "never" in row
    shot("token-made")

    status, body = api_get(live.url + "/api/works", token)
    assert status == 200 and [w["work"] for w in body["works"]] == [WORK]
    status, body = api_get(live.url + "/api/me", token)
    assert status == 200 and body["role"] == "viewer"  # a read token reads only

    driver.get(live.url + "/tokens/")  # shown once: not on the page again, its use recorded
    assert token not in driver.page_source
    assert "never" not in css("table tbody tr").text
    shot("token-listed")

    click(css("table tbody tr form button"))
    assert "revoked" in css(".flash.ok").text
    assert "No tokens yet" in css("table").text
    assert api_get(live.url + "/api/works", token)[0] == 401
    shot("token-revoked")
