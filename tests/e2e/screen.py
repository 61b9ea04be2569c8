"""Waiting, clicking and screenshots for one browser test (shared by the e2e tests)."""
from __future__ import annotations

from .conftest import ARTIFACTS
from .test_admin_browser import WAIT, check_png, page_left


class Screen:
    """Explicit waits on `driver`; screenshots go to tests/e2e/artifacts/<folder>/, emptied first."""

    def __init__(self, driver, folder: str):
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.shots = ARTIFACTS / folder
        self.shots.mkdir(parents=True, exist_ok=True)
        for old in self.shots.glob("*.png"):
            old.unlink()
        self.wait = WebDriverWait(driver, WAIT)

    def css(self, selector: str):
        """The element once it is visible."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as EC

        return self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def shot(self, name: str) -> None:
        """A screenshot, checked to be a real PNG."""
        path = self.shots / f"{name}.png"
        assert self.driver.save_screenshot(str(path)), f"no screenshot {path}"
        check_png(path)

    def click(self, element) -> None:
        """Click, and wait until the page it was on is gone."""
        element.click()
        self.wait.until(page_left(element))
