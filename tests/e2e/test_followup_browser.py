"""The follow-up page in a real headless Chromium: two pirate pages on a live HTTP server get
a takedown, one is taken down and re-checked, and the admin shows per site what was sent,
removed and is still up. Screenshots go to tests/e2e/artifacts/followup/."""
from __future__ import annotations

import pytest

from tracker.context import Context
from tracker.followup.recheck import PoliteClient, recheck
from tracker.pipeline import process_page
from tracker.settings import Settings
from tracker.store import Page

from ..conftest import ROOT
from ..tracker.fixture_site import pirate_site
from .conftest import ADMIN, PASSWORD, WORK
from .screen import Screen
from .test_admin_browser import page_left

pytestmark = pytest.mark.slow

CHAPTER = f"{WORK}/山城旧事-第二章"
TEXT = (ROOT / "samples" / "originals" / "山城旧事-第二章.txt").read_text(encoding="utf-8")


def test_the_follow_up_page_shows_what_was_removed_and_what_is_still_up(driver, live):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    screen = Screen(driver, "followup")
    wait, css, shot = screen.wait, screen.css, screen.shot

    with pirate_site() as site:
        html = "<html><body><div id='content'>" + "<br>".join(TEXT.splitlines()) + "</div></body></html>"
        site.put("/a.html", html)
        site.put("/b.html", html)
        ctx = Context(Settings.load({"FPT_HOME": str(live.home)}))
        try:
            for path in ("/a.html", "/b.html"):
                url = site.url + path
                ctx.store.upsert_page(Page(key=url, url=url, site="pirate", text=TEXT))
                assert process_page(ctx, url).status == "done"
                ctx.store.set_match_status(url, CHAPTER, "confirmed", by=ADMIN)
                ctx.store.set_match_status(url, CHAPTER, "takedown-sent", by=ADMIN)
            site.take_down("/a.html")
            report = recheck(ctx, client=PoliteClient(delay=0))
            assert sorted(c.outcome for c in report.checks) == ["gone", "up"]
        finally:
            ctx.close()

    driver.get(live.url + "/login")
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    login = driver.find_element(By.CSS_SELECTOR, ".login button")
    login.click()
    wait.until(page_left(login))
    nav = wait.until(EC.element_to_be_clickable((By.LINK_TEXT, "Follow-up")))
    nav.click()
    wait.until(page_left(nav))
    assert css("h1").text == "Follow-up"
    assert css("nav a[aria-current=page]").text == "Follow-up"

    row = wait.until(EC.visibility_of_element_located(
        (By.XPATH, "//table[contains(@class, 'followup-sites')]//tr[td[1][normalize-space()='pirate']]")))
    cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
    # site, sent, removed, median days, still up, longest open, reopened, last re-check
    assert cells[:7] == ["pirate", "2", "1", "0", "1", "0", "0"], cells
    assert cells[7], "the last re-check time is shown"
    still_up = css("table.followup-open").text
    assert "/b.html" in still_up and "up (200)" in still_up and "/a.html" not in still_up
    events = css("table.followup-events").text
    assert "removed" in events and "/a.html" in events
    shot("follow-up")

    # The open page's link leads to its match.
    link = driver.find_element(By.CSS_SELECTOR, "table.followup-open td a")
    link.click()
    wait.until(page_left(link))
    assert CHAPTER.split("/", 1)[1] in css("h1").text
    assert css(".workflow h2 .status").text == "takedown-sent"
    shot("open-match")
