"""Every admin page fits a phone: in a real headless Chromium at 400x850, 768x1000 and 1400x1000,
each HTML page of the route samples (tests/web/test_routes.py) and a translated match's page
(tests/web/translated.py), for an admin and for a viewer, is
no wider than the window, no element or text sticks out of it except inside a box that scrolls,
no box with hidden overflow cuts its text, no time breaks over two lines, and every checkbox sits
on the line of its label. Screenshots of the main pages, at 400x850 and 1400x1000 (the window and
the whole page), go to tests/e2e/artifacts/phone/."""
from __future__ import annotations

import base64
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

from ..web.conftest import PASSWORD, fill
from ..web.test_routes import GET, fill_path
from ..web.translated import VIEW as TRANSLATED_VIEW
from ..web.translated import add_translated_match
from .conftest import ARTIFACTS
from .test_admin_browser import WAIT, page_left

pytestmark = pytest.mark.slow

FOLLOWED = ("https://biquge.example/2.html", "山城旧事/第2章")
SIZES = {"phone": (400, 850), "desktop": (1400, 1000)}
# a small tablet or a narrow window, between the phone's layout and the desktop's (layout checks only)
TABLET = (768, 1000)
SHOTS = ARTIFACTS / "phone"

# Run in the page: what sticks out of the window outside a scroll box, and what a box with
# hidden overflow cuts. Each finding names the element (tag, id, classes, a bit of its text).
LAYOUT_JS = r"""
const vw = document.documentElement.clientWidth;  // the window less its scroll bar
const name = el => {
  const cls = (el.getAttribute('class') || '').trim().replace(/\s+/g, '.');
  const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
  return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (cls ? '.' + cls : '') + ' "' + text + '"';
};
const scrolls = el => {
  const s = getComputedStyle(el);
  return s.overflowX === 'auto' || s.overflowX === 'scroll';
};
const inScrollBox = el => {
  for (let p = el.parentElement || el.parentNode; p && p !== document.body; p = p.parentElement) {
    if (scrolls(p)) return true;
  }
  return false;
};
const wide = [], cut = [];
for (const el of document.body.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if ((r.right > vw + 0.5 || r.left < -0.5) && !inScrollBox(el)) {
    wide.push(name(el) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  const s = getComputedStyle(el);
  const hidden = v => v === 'hidden' || v === 'clip';
  if ((hidden(s.overflowX) && el.scrollWidth > el.clientWidth + 1)
      || (hidden(s.overflowY) && el.scrollHeight > el.clientHeight + 1)
      || (s.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1)) {
    cut.push(name(el) + ' shows ' + el.clientWidth + 'x' + el.clientHeight + ' of '
             + el.scrollWidth + 'x' + el.scrollHeight);
  }
}
// text runs past its box without any element doing so (a long word in a paragraph)
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const range = document.createRange();
for (let t = walker.nextNode(); t; t = walker.nextNode()) {
  if (!t.textContent.trim() || inScrollBox(t)) continue;
  range.selectNodeContents(t);
  const r = range.getBoundingClientRect();
  if (r.width && (r.right > vw + 0.5 || r.left < -0.5)) {
    wide.push('text "' + t.textContent.trim().slice(0, 40) + '" in ' + name(t.parentElement) + ' spans '
              + Math.round(r.left) + '..' + Math.round(r.right));
  }
}
// a time on two lines ("2026-11-" / "20 06:10") reads as two values
for (const cell of document.querySelectorAll('td.when')) {
  if (!cell.textContent.trim()) continue;
  range.selectNodeContents(cell);
  const lines = new Set([...range.getClientRects()].filter(r => r.width).map(r => Math.round(r.top)));
  if (lines.size > 1) cut.push('time on ' + lines.size + ' lines: ' + name(cell));
}
return {scrollWidth: document.documentElement.scrollWidth, clientWidth: vw,
        wide: wide.slice(0, 8), cut: cut.slice(0, 8)};
"""


@dataclass
class Admin:
    url: str  # http://127.0.0.1:PORT
    pages: dict[str, list[str]]  # role -> the paths (with query) of its HTML pages


def html_pages(app, role: str) -> list[str]:
    """The route samples that answer `role` with an HTML page (not JSON, CSV, files or a refusal)."""
    from ..web.conftest import login

    client = app.test_client()
    assert login(client, role).status_code == 302
    pages = []
    for rule, sample in sorted(GET.items()) + [TRANSLATED_VIEW]:
        path, query = fill_path(rule, sample)
        r = client.get(path, query_string=query)
        if r.status_code == 200 and r.mimetype == "text/html":
            pages.append(path + ("?" + urlencode(query) if query else ""))
        r.close()
    return pages


@pytest.fixture(scope="module")
def admin_site(tmp_path_factory) -> Iterator[Admin]:
    """The admin as `fptrack web` builds it, on the route samples' records (tests/web/conftest.py)."""
    from werkzeug.serving import make_server

    from tracker.context import Context
    from tracker.pipeline import reindex
    from tracker.settings import Settings
    from web import create_app

    home = tmp_path_factory.mktemp("phone") / "home"
    settings = Settings.load({"FPT_HOME": str(home)})
    ctx = Context(settings)
    try:
        fill(ctx.store)
        add_translated_match(ctx.store)  # a page that translates a chapter: its aligned sentence pairs
        reindex(ctx)  # as `fptrack reindex`: the chapters fingerprinted, so "Check text" finds copies
        # a takedown sent, so the follow-up page has a site and a copy still up to show
        for status in ("confirmed", "takedown-sent"):
            ctx.store.set_match_status(*FOLLOWED, status, by="admin")
    finally:
        ctx.close()
    app = create_app({"SETTINGS": settings})
    pages = {role: html_pages(app, role) for role in ("admin", "viewer")}
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="phone-admin", daemon=True)
    thread.start()
    try:
        yield Admin(f"http://127.0.0.1:{server.server_port}", pages)
    finally:
        server.shutdown()
        thread.join(10)
        app.extensions["fptrack"].store.close()


def sign_in(driver, url: str, role: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.delete_all_cookies()
    driver.get(url + "/login")
    driver.find_element(By.NAME, "name").send_keys(role)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    button = driver.find_element(By.CSS_SELECTOR, ".login button")
    button.click()
    WebDriverWait(driver, WAIT).until(page_left(button))
    assert "/login" not in driver.current_url, f"{role} could not sign in"


def window(driver, width: int, height: int) -> None:
    """A viewport of exactly width x height CSS pixels, as a phone's browser lays pages out."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert len(data) > 5_000, f"{path} has only {len(data)} bytes: a blank page?"
    return struct.unpack(">II", data[16:24])


def layout_problems(driver) -> list[str]:
    found = driver.execute_script(LAYOUT_JS)
    problems = []
    if found["scrollWidth"] > found["clientWidth"]:
        problems.append(f"the page is {found['scrollWidth']} px wide in a {found['clientWidth']} px window")
    problems += [f"sticks out: {w}" for w in found["wide"]]
    problems += [f"cut: {c}" for c in found["cut"]]
    return problems


@pytest.fixture(scope="module")
def shots() -> Path:
    """tests/e2e/artifacts/phone, emptied of the last run's screenshots so none can pass for a new one."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    return SHOTS


@pytest.fixture
def sized(driver):
    yield driver
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_route_samples_cover_the_main_pages(admin_site):
    """Guards the page list below: a sign-in or sample that broke would leave nothing to check."""
    for role in ("admin", "viewer"):
        pages = admin_site.pages[role]
        translated = "/matches/view?" + urlencode(TRANSLATED_VIEW[1])
        for must in ("/", "/matches/", "/matches/view?", "/works/山城旧事", "/followup/", "/discovery/runs/1",
                     "/sites/", translated):
            assert any(p == must or p.startswith(must) for p in pages), (role, must, pages)
    assert "/users/" in admin_site.pages["admin"] and "/users/" not in admin_site.pages["viewer"]


@pytest.mark.parametrize("size", sorted(SIZES) + ["tablet"])
@pytest.mark.parametrize("role", ["admin", "viewer"])
def test_every_page_fits_the_window(sized, admin_site, role, size):
    driver = sized
    width, height = SIZES.get(size, TABLET)
    sign_in(driver, admin_site.url, role)
    window(driver, width, height)
    failures = {}
    # the route samples, and an error page (a match that is not there)
    for path in admin_site.pages[role] + ["/matches/view?page_key=gone&chapter=gone"]:
        driver.get(admin_site.url + path)
        assert driver.execute_script("return window.innerWidth") == width
        problems = layout_problems(driver)
        if problems:
            failures[path] = problems
    assert not failures, "\n".join(f"{p}: " + "; ".join(v) for p, v in failures.items())


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_sign_in_page_fits_the_window(sized, admin_site, size):
    driver = sized
    driver.delete_all_cookies()
    window(driver, *SIZES[size])
    driver.get(admin_site.url + "/login")
    assert driver.find_elements("css selector", ".login input[name=password]"), "the sign-in form is shown"
    assert not layout_problems(driver)


def test_a_new_token_fits_a_phone(sized, admin_site):
    """The one page a token is shown on (once, after the form): a long unbroken word."""
    from selenium.webdriver.common.by import By

    driver = sized
    sign_in(driver, admin_site.url, "admin")
    window(driver, *SIZES["phone"])
    driver.get(admin_site.url + "/tokens/")
    driver.find_element(By.CSS_SELECTOR, "#new-token-form input[name=name]").send_keys("phone test")
    button = driver.find_element(By.CSS_SELECTOR, "#new-token-form button")
    button.click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT).until(page_left(button))
    token = driver.find_element(By.ID, "new-token").text
    assert len(token) >= 20, token
    assert not layout_problems(driver)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_checked_text_and_its_passages_fit_the_window(sized, admin_site, shots, size):
    """The check-text result (a POST's page): the pasted text, its copied passages and scores."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from ..web.conftest import CH1

    driver = sized
    sign_in(driver, admin_site.url, "viewer")
    window(driver, *SIZES[size])
    driver.get(admin_site.url + "/check")
    # a pirate page: a long unbroken URL line, then the copied chapter
    pasted = "https://pirate.example/" + "x" * 120 + "\n" + CH1
    driver.execute_script("document.getElementById('text').value = arguments[0]", pasted)
    button = driver.find_element(By.CSS_SELECTOR, "form.check button")
    button.click()
    WebDriverWait(driver, WAIT).until(page_left(button))
    assert driver.find_elements(By.CSS_SELECTOR, "table.passages"), "the copied passages are listed"
    assert not layout_problems(driver)
    assert driver.save_screenshot(str(shots / f"check-text-{size}.png"))


# Run in the page: each checkbox (or radio button) in a label whose text is not on the box's line.
CHECKBOX_JS = r"""
const apart = [];
for (const box of document.querySelectorAll('label input[type=checkbox], label input[type=radio]')) {
  const label = box.closest('label');
  const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
  let t = walker.nextNode();
  while (t && !t.textContent.trim()) t = walker.nextNode();
  if (!t) continue;
  const range = document.createRange();
  range.setStart(t, t.textContent.search(/\S/));
  range.setEnd(t, t.textContent.search(/\S/) + 1);  // the first letter of the label's text
  const b = box.getBoundingClientRect(), r = range.getBoundingClientRect();
  const middle = b.top + b.height / 2;
  if (!(r.top <= middle && middle <= r.bottom && b.right <= r.left + 1)) {
    apart.push(box.name + ' at ' + Math.round(b.left) + ',' + Math.round(b.top) + ' and "'
               + t.textContent.trim().slice(0, 30) + '" at ' + Math.round(r.left) + ',' + Math.round(r.top));
  }
  // and the label's words are not covered by the form's other fields and buttons
  const whole = document.createRange();
  whole.selectNodeContents(label);
  for (const word of whole.getClientRects()) {
    for (const other of label.parentElement.children) {
      if (other === label || other.contains(label) || !other.getClientRects().length) continue;
      const o = other.getBoundingClientRect();
      if (word.left < o.right - 1 && o.left < word.right - 1 && word.top < o.bottom - 1 && o.top < word.bottom - 1) {
        apart.push(box.name + ': its label "' + t.textContent.trim().slice(0, 30) + '" is under ' + other.tagName);
        break;
      }
    }
  }
}
return {boxes: document.querySelectorAll('label input[type=checkbox]').length, apart: apart};
"""


@pytest.mark.parametrize("size", sorted(SIZES))
def test_each_checkbox_sits_on_the_line_of_its_label(sized, admin_site, size):
    """The sites form first (its checkboxes stood above their labels), then every page with one."""
    driver = sized
    sign_in(driver, admin_site.url, "admin")
    window(driver, *SIZES[size])
    driver.get(admin_site.url + "/sites/manage?name=biquge")
    found = driver.execute_script(CHECKBOX_JS)
    assert found["boxes"] >= 4, "the sites form has its checkboxes (render, images, robots.txt, schedule)"
    assert not found["apart"], found["apart"]
    for path in admin_site.pages["admin"]:
        driver.get(admin_site.url + path)
        assert not driver.execute_script(CHECKBOX_JS)["apart"], path


SCREENS = {
    "dashboard": "/",
    "matches": "/matches/",
    "match": "/matches/view?" + urlencode({"page_key": "https://biquge.example/1.html", "chapter": "山城旧事/第1章"}),
    "work-report": "/works/山城旧事",
    "follow-up": "/followup/",
    "sites": "/sites/",
    "site-rules": "/sites/manage?name=biquge",
    "translated-match": "/matches/view?" + urlencode(TRANSLATED_VIEW[1]),
}

# Run in the page: where the aligned-sentence table's first row puts its original and its page sentence.
ALIGNED_JS = r"""
const row = document.querySelector('table.aligned tbody tr');
if (!row) return null;
const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                   bottom: r.bottom, width: r.width}; };
return {original: box(row.querySelector('td.original')), page: box(row.querySelector('td.page')),
        rows: document.querySelectorAll('table.aligned tbody tr').length,
        label: getComputedStyle(row.querySelector('td.page'), '::before').content};
"""


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_translated_matchs_sentence_pairs_stack_on_a_phone_and_sit_side_by_side_on_a_desktop(sized, admin_site,
                                                                                               size):
    driver = sized
    sign_in(driver, admin_site.url, "viewer")
    width, height = SIZES[size]
    window(driver, width, height)
    driver.get(admin_site.url + SCREENS["translated-match"])
    found = driver.execute_script(ALIGNED_JS)
    assert found and found["rows"] > 20, "the aligned sentence pairs are listed"
    o, p = found["original"], found["page"]
    if size == "phone":  # one above the other, each as wide as the table, each saying which side it is
        assert o["bottom"] <= p["top"] + 0.5 and abs(o["left"] - p["left"]) < 1, found
        assert o["width"] > width * 0.8 and "The page (English)" in found["label"], found
    else:  # the two columns, the original on the left
        assert o["right"] <= p["left"] + 0.5 and abs(o["top"] - p["top"]) < 1, found
    assert not layout_problems(driver)


def test_screenshots_of_the_main_pages_at_both_sizes(sized, admin_site, shots):
    driver = sized
    sign_in(driver, admin_site.url, "admin")
    for size, (width, height) in SIZES.items():
        window(driver, width, height)
        for name, path in SCREENS.items():
            driver.get(admin_site.url + path)
            assert driver.find_element("css selector", "h1").text, f"{path} has no heading"
            shot = shots / f"{name}-{size}.png"
            assert driver.save_screenshot(str(shot)), f"no screenshot {shot}"
            assert png_size(shot) == (width, height), shot
            # and the whole page, to see what lies below the fold
            full = shots / f"{name}-{size}-full.png"
            tall = driver.execute_script("return document.documentElement.scrollHeight")
            data = driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": tall, "scale": 1}})
            full.write_bytes(base64.b64decode(data["data"]))
            assert png_size(full) == (width, tall), full
