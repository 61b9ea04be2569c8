"""Who is told, changed on the Follow-up page in a real headless Chromium: an admin adds a
webhook for a site (its URL then shown as its scheme and host only), is told what to fix for a
bad e-mail address, adds one for the work, and removes the webhook. Screenshots go to
tests/e2e/artifacts/subscriptions/."""
from __future__ import annotations

import pytest

from .conftest import ADMIN, PASSWORD, WORK
from .screen import Screen

pytestmark = pytest.mark.slow

HOOK = "https://hooks.chat.example/services/T0/B0/xoxb-secret"


def test_an_admin_adds_and_removes_subscriptions_on_the_follow_up_page(driver, live):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select

    screen = Screen(driver, "subscriptions")
    wait, css, shot, click = screen.wait, screen.css, screen.shot, screen.click

    driver.get(live.url + "/login")
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    click(driver.find_element(By.CSS_SELECTOR, ".login button"))
    click(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, "Follow-up"))))
    assert css("#who-is-told").text == "Who is told"

    def fill(channel: str, target: str, *, secret: str = "", work: str = "", site: str = "",
             kinds: tuple[str, ...] = ()) -> None:
        form = css("#new-subscription-form")
        Select(form.find_element(By.NAME, "channel")).select_by_value(channel)
        field = form.find_element(By.NAME, "target")
        field.clear()
        field.send_keys(target)
        if secret:
            form.find_element(By.NAME, "secret").send_keys(secret)
        if work:
            Select(form.find_element(By.NAME, "work")).select_by_value(work)
        if site:
            Select(form.find_element(By.NAME, "site")).select_by_visible_text(site)
        for box in form.find_elements(By.NAME, "kinds"):
            if kinds and (box.get_attribute("value") in kinds) != box.is_selected():
                box.click()
        click(form.find_element(By.CSS_SELECTOR, "button"))

    fill("webhook", HOOK, secret="s3cret", site="biquge", kinds=("new-match", "copy-back"))
    assert "Added: webhook https://hooks.chat.example/… for site biquge (new-match, copy-back)." in css("#who-is-told + .flash.ok").text
    row = css("table.followup-subscriptions tbody tr").text
    assert "https://hooks.chat.example/…" in row and "biquge" in row and "new-match, copy-back" in row
    assert "xoxb-secret" not in driver.page_source and "s3cret" not in driver.page_source

    fill("email", "rights at example")
    error = css(".flash.error").text
    assert "'rights at example' is not an e-mail address; give one like rights@example.com" in error
    shot("refused")
    fill("email", "rights@example.com", work=WORK)
    assert f"Added: e-mail to rights@example.com for work {WORK}" in css("#who-is-told + .flash.ok").text
    rows = driver.find_elements(By.CSS_SELECTOR, "table.followup-subscriptions tbody tr")
    assert len(rows) == 2
    shot("two-subscriptions")

    hook_row = next(r for r in rows if "hooks.chat.example" in r.text)
    click(hook_row.find_element(By.XPATH, ".//button[normalize-space()='Remove']"))
    assert "Removed: webhook https://hooks.chat.example/… for site biquge" in css("#who-is-told + .flash.ok").text
    rows = driver.find_elements(By.CSS_SELECTOR, "table.followup-subscriptions tbody tr")
    assert [r.text.split()[:2] for r in rows] == [["email", "rights@example.com"]]
    # a test to the address left: no mail server is set, and the page says so at once
    click(rows[0].find_element(By.XPATH, ".//button[normalize-space()='Send a test']"))
    assert "FPT_SMTP_URL is not set" in css("#who-is-told + .flash.error").text
    shot("one-removed")
