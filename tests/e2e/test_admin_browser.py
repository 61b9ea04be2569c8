"""The admin in a real headless Chromium: sign in, read a work's report, check a match's
evidence, confirm it, download the takedown notice, sign out. A screenshot of every step
goes to tests/e2e/artifacts/."""
from __future__ import annotations

import re
import struct
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from .conftest import ADMIN, PASSWORD, WORK

pytestmark = pytest.mark.slow

CHAPTER = "山城旧事-第二章"
PAGE = "wap-2-p1"  # copies the first 320 characters of chapter 2, after the site's header lines
WAIT = 15  # seconds an explicit condition may take on a busy machine


def check_png(path: Path) -> None:
    """A real screenshot: a PNG of the window's size with more in it than a blank page."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 600, f"{path} is {width}x{height}"
    assert len(data) > 8_000, f"{path} has only {len(data)} bytes: a blank page?"


def finished_download(folder: Path) -> Path | None:
    """The one downloaded file, once Chromium has renamed it from its temporary names
    (a hidden .com.google.Chrome.XXXXXX, then NAME.crdownload)."""
    files = list(folder.iterdir())
    if len(files) != 1 or files[0].name.startswith(".") or files[0].suffix == ".crdownload":
        return None
    return files[0]


def page_left(element):
    """A wait condition: true once `element`'s document has been replaced. While Chromium swaps
    documents a lookup can fail with an inspector error instead of a stale reference (which is
    all EC.staleness_of handles); that means "not yet"."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def check(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as e:
            if "does not belong to the document" in str(e):
                return False
            raise
        return False

    return check


def test_review_a_match_and_send_a_takedown(driver, live, artifacts, downloads):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, WAIT)
    shots = []

    def shot(name: str) -> None:
        path = artifacts / f"{len(shots) + 1:02d}-{name}.png"
        assert driver.save_screenshot(str(path)), f"no screenshot {path}"
        check_png(path)
        shots.append(path)

    def css(selector: str):
        return wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def scroll_to(selector: str) -> None:
        """Bring a part of the page into the window, for the screenshot."""
        driver.execute_script("arguments[0].scrollIntoView()", driver.find_element(By.CSS_SELECTOR, selector))

    def click_and_wait(element) -> None:
        """Click something that loads a new page, and wait until the old one is gone."""
        element.click()
        wait.until(page_left(element))

    # A protected page sends an anonymous visitor to the sign-in form.
    driver.get(live.url + "/")
    wait.until(EC.url_contains("/login"))
    css("input[name=name]")
    shot("login")

    # A wrong password: the form comes back with the error, and nobody is signed in.
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys("not the password")
    click_and_wait(driver.find_element(By.CSS_SELECTOR, ".login button"))
    assert "Wrong name or password" in css(".login .flash.error").text
    assert not driver.find_elements(By.CSS_SELECTOR, "form.logout")
    shot("wrong-password")

    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    click_and_wait(driver.find_element(By.CSS_SELECTOR, ".login button"))
    assert css("h1").text == "Dashboard"
    assert ADMIN in css("header .me").text
    shot("dashboard")

    # The work's report, reached through the navigation.
    click_and_wait(driver.find_element(By.LINK_TEXT, "Works"))
    click_and_wait(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, WORK))))
    assert WORK in css("h1").text
    assert "3 of 3 chapters copied" in " ".join(css(".cards").text.split())
    shot("work-report")

    # The chapter's matches, then one match.
    click_and_wait(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, CHAPTER))))
    assert PAGE in css("main table").text
    shot("chapter-matches")
    click_and_wait(wait.until(EC.element_to_be_clickable((By.LINK_TEXT, PAGE))))
    assert CHAPTER in css("h1").text
    assert live.page_urls[PAGE] in css("dl.facts").text

    # The copied passage is marked on both sides, and it is the same text on both.
    page_side = css(".side-by-side > div:nth-child(1) .text")
    original_side = css(".side-by-side > div:nth-child(2) .text")
    marked = {}
    for side, box in (("page", page_side), ("original", original_side)):
        marks = box.find_elements(By.TAG_NAME, "mark")
        assert marks, f"no <mark> on the {side} side"
        assert all(m.is_displayed() and m.size["height"] > 0 for m in marks), f"a <mark> on the {side} side is hidden"
        marked[side] = "".join("".join(m.text for m in marks).split())
        assert len(marked[side]) > 100
        # Only part of each text is copied: the marks are the spans, not the whole text.
        assert len("".join(box.text.split())) > len(marked[side])
    assert marked["page"] == marked["original"]
    assert css("mark").value_of_css_property("background-color") not in ("rgba(0, 0, 0, 0)", "transparent")
    scroll_to(".side-by-side")
    shot("match-evidence")

    # Confirm it: the status changes and the history says who and when.
    click_and_wait(driver.find_element(By.CSS_SELECTOR, ".workflow button[value=confirmed]"))
    assert "1 match set to confirmed" in css(".flash.ok").text
    assert css(".workflow h2 .status").text == "confirmed"
    status, by, at = (c.text for c in css(".workflow tbody tr").find_elements(By.TAG_NAME, "td"))
    assert (status, by) == ("confirmed", ADMIN)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", at), at
    when = datetime.strptime(at, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - when) < timedelta(minutes=10), at
    scroll_to(".workflow")
    shot("confirmed")

    # The takedown notice for that site and work lists the confirmed match.
    click_and_wait(driver.find_element(By.LINK_TEXT, "Takedown"))
    row = wait.until(EC.visibility_of_element_located(
        (By.XPATH, f"//details//tr[td[1][normalize-space()='wap'] and td[2][normalize-space()='{WORK}']]")))
    click_and_wait(row.find_element(By.LINK_TEXT, "notice"))
    notice = css("textarea.notice").get_attribute("value")
    assert live.page_urls[PAGE] in notice and f"《{WORK}》" in notice
    shot("takedown-notice")

    assert not list(downloads.iterdir()), "the download folder should start empty"
    driver.find_element(By.LINK_TEXT, "Download as text").click()
    path = wait.until(lambda _: finished_download(downloads))
    text = path.read_text(encoding="utf-8")
    assert path.suffix == ".txt" and WORK in path.name
    assert f"《{WORK}》" in text, text
    assert CHAPTER in text, text
    assert live.page_urls[PAGE] in text, text
    assert "NOTICE OF COPYRIGHT INFRINGEMENT" in text
    shot("notice-downloaded")

    # Sign out: the session is gone, and a protected page sends the browser back to sign in.
    click_and_wait(driver.find_element(By.CSS_SELECTOR, "form.logout button"))
    wait.until(EC.url_contains("/login"))
    assert not driver.find_elements(By.CSS_SELECTOR, "form.logout")
    shot("signed-out")
    driver.get(live.url + "/matches/")
    wait.until(EC.url_contains("/login?next="))
    css("input[name=password]")
    assert "/matches/" in driver.current_url
    assert not driver.find_elements(By.CSS_SELECTOR, "form.logout")
    shot("protected-page-redirects")

    assert [p.name for p in sorted(artifacts.glob("*.png"))] == [p.name for p in shots]


def test_an_image_copy_is_shown_beside_the_registered_cover(driver, live, artifacts):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, WAIT)

    def css(selector: str):
        return wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def loaded(img) -> bool:
        return driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 0

    driver.get(live.url + "/login")
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    login = driver.find_element(By.CSS_SELECTOR, ".login button")
    login.click()
    wait.until(page_left(login))
    nav = wait.until(EC.element_to_be_clickable((By.LINK_TEXT, "Images")))
    nav.click()
    wait.until(page_left(nav))
    thumbs = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.images img.thumb"))
    assert len(thumbs) == 2 and all(wait.until(lambda _, i=i: loaded(i)) for i in thumbs)
    link = thumbs[0].find_element(By.XPATH, "./ancestor::a")
    link.click()
    wait.until(page_left(link))
    assert f"{WORK}/cover.png" in css("h1").text
    shown = driver.find_elements(By.CSS_SELECTOR, ".side-by-side img.shown")
    assert len(shown) == 2 and all(wait.until(lambda _, i=i: loaded(i)) for i in shown)
    # Side by side: the copy on the left, the registered cover on the right, at the same height.
    left, right = (i.rect for i in shown)
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 5
    # The copy was served at 180 x 270 and the cover at 360 x 540: both drawn anew within the thumbnail size.
    sizes = [driver.execute_script("return [arguments[0].naturalWidth, arguments[0].naturalHeight]", i) for i in shown]
    assert sizes == [[180, 270], [320, 480]]
    path = artifacts / "images-side-by-side.png"
    assert driver.save_screenshot(str(path))
    check_png(path)
