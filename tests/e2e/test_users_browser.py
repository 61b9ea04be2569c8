"""Users in a real headless Chromium: an admin opens Users from the navigation, adds a viewer
with a generated password (shown once), signs out, and the new user signs in with it; then the
admin resets that password and removes the user after confirming, and the old password and the
removed account no longer sign in. Screenshots go to tests/e2e/artifacts/users/."""
from __future__ import annotations

import pytest

from .conftest import ADMIN, PASSWORD
from .screen import Screen

pytestmark = pytest.mark.slow


def test_an_admin_adds_a_user_who_signs_in_with_the_password_shown_once(driver, live):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select

    screen = Screen(driver, "users")
    wait, css, shot, click = screen.wait, screen.css, screen.shot, screen.click

    def sign_in(name: str, password: str) -> None:
        driver.get(live.url + "/login")
        css("input[name=name]").send_keys(name)
        driver.find_element(By.NAME, "password").send_keys(password)
        click(driver.find_element(By.CSS_SELECTOR, ".login button"))

    def sign_out() -> None:
        click(css("form.logout button"))
        css(".login")

    sign_in(ADMIN, PASSWORD)
    click(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, "Users"))))
    assert css("h1").text.startswith("Users")
    assert ADMIN in css("#users").text

    form = css("#new-user-form")
    form.find_element(By.NAME, "name").send_keys("bruno")
    Select(form.find_element(By.NAME, "role")).select_by_visible_text("viewer")
    assert "operator" not in [o.text for o in Select(form.find_element(By.NAME, "role")).options]
    form.find_element(By.NAME, "generate").click()
    click(form.find_element(By.CSS_SELECTOR, "button"))
    password = css("#new-password").text.strip()
    assert len(password) >= 16 and "not shown again" in css(".new-user").text
    row = css("#user-bruno").text
    assert "viewer" in row and "default" in row
    shot("user-added")

    driver.get(live.url + "/users/")  # shown once
    assert password not in driver.page_source
    sign_out()

    sign_in("bruno", password)
    assert css(".me").text.startswith("bruno") and "viewer" in css(".me").text
    assert "Users" not in [a.text for a in driver.find_elements(By.CSS_SELECTOR, ".top nav a")]
    shot("new-user-signed-in")
    sign_out()

    sign_in(ADMIN, PASSWORD)
    driver.get(live.url + "/users/")
    assert "—" not in css("#user-bruno").text  # signed out, but the sign-in is recorded
    click(css("#user-bruno a"))
    click(css("#password-form button"))
    reset = css("#new-password").text.strip()
    assert reset and reset != password
    shot("password-reset")
    click(css("#remove-link"))
    css("#remove-form input[name=confirm]").send_keys("bruno")
    click(css("#remove-form button"))
    assert "User bruno removed." in css(".flash.ok").text
    assert not driver.find_elements(By.ID, "user-bruno")
    shot("user-removed")
    sign_out()

    for tried in (password, reset):  # neither the first password nor the reset one signs in now
        sign_in("bruno", tried)
        assert "Wrong name or password" in css(".login .flash.error").text
