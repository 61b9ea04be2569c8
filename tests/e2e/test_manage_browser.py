"""Managing works and sites in a real headless Chromium: upload a novel through the works page
and see its chapters; add the sample pirate site (on 127.0.0.1) by URL, preview its rules on a
chapter page (one that selects nothing gets its message), and save them. Screenshots go to
tests/e2e/artifacts/manage/."""
from __future__ import annotations

import threading

import pytest

from tracker.settings import Settings
from tracker.store.open import store_at
from web.demo.chapters import chapters_from_folder
from web.demo.server import SampleSite

from ..conftest import ROOT
from ..tracker.test_uploads import CH1, CH2
from .conftest import ADMIN, PASSWORD
from .screen import Screen

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def manage_live(tmp_path_factory):
    """An empty admin with one admin user, allowed to fetch sample pages from 127.0.0.1."""
    from werkzeug.serving import make_server

    from web import create_app
    from web.auth.accounts import new_user

    home = tmp_path_factory.mktemp("manage") / "home"
    settings = Settings.load({"FPT_HOME": str(home)})
    store = store_at(None, settings.home)
    store.upsert_user(new_user(ADMIN, PASSWORD, "admin"))
    store.close()
    app = create_app({"SETTINGS": settings, "FETCH_PRIVATE": True})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="e2e-manage", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", home
    finally:
        server.shutdown()
        thread.join(10)
        app.extensions["fptrack"].root_store.close() if hasattr(app.extensions["fptrack"], "root_store") \
            else app.extensions["fptrack"].store.close()


def test_upload_a_work_then_add_a_site_and_preview_its_rules(driver, manage_live, tmp_path):
    from selenium.webdriver.common.by import By

    url, home = manage_live
    screen = Screen(driver, "manage")
    css, shot = screen.css, screen.shot

    submit = screen.click

    driver.get(url + "/login")
    driver.find_element(By.NAME, "name").send_keys(ADMIN)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    submit(driver.find_element(By.CSS_SELECTOR, ".login button"))

    # Upload a whole-book text file; the chapters page lists what its headings gave.
    book = tmp_path / "雨夜.txt"
    book.write_text(f"第一章 雨夜\n{CH1}\n第二章 码头\n{CH2}\n", encoding="gb18030")
    driver.get(url + "/works/")
    driver.find_element(By.CSS_SELECTOR, "#upload-box > summary").click()
    form = css("#upload")
    form.find_element(By.NAME, "title").send_keys("雨夜")
    form.find_element(By.NAME, "author").send_keys("林岚")
    form.find_element(By.NAME, "file").send_keys(str(book))
    submit(form.find_element(By.TAG_NAME, "button"))
    table = css("#chapters")
    assert "Registered 《雨夜》: 2 chapters" in driver.find_element(By.CSS_SELECTOR, ".flash").text
    assert [td.text for td in table.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(2)")] == \
        ["第一章 雨夜", "第二章 码头"]
    shot("1-chapters")

    # A new edition, with "Replace" ticked: the first chapter as it was, the second rewritten, a third.
    book.write_text(f"第一章 雨夜\n{CH1}\n第二章 码头\n{CH2[::-1]}\n第三章 离城\n{CH2[5:] + CH1[:30]}\n",
                    encoding="gb18030")
    driver.get(url + "/works/")
    driver.find_element(By.CSS_SELECTOR, "#upload-box > summary").click()
    form = css("#upload")
    form.find_element(By.NAME, "title").send_keys("雨夜")
    form.find_element(By.NAME, "file").send_keys(str(book))
    form.find_element(By.NAME, "replace").click()
    submit(form.find_element(By.TAG_NAME, "button"))
    table = css("#chapters")
    assert ("New edition of 《雨夜》 from the text upload: 1 chapters added, 1 changed, 1 unchanged, 0 removed"
            in driver.find_element(By.CSS_SELECTOR, ".flash").text)
    assert [td.text for td in table.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(2)")] == \
        ["第一章 雨夜", "第二章 码头", "第三章 离城"]
    shot("1b-new-edition")

    # A file that is not text: the form again, with the problem and the fix.
    junk = tmp_path / "cover.bin"
    junk.write_bytes(b"\x00\x01\x02\x03" * 500)
    driver.get(url + "/works/")
    driver.find_element(By.CSS_SELECTOR, "#upload-box > summary").click()
    form = css("#upload")
    form.find_element(By.NAME, "title").send_keys("坏文件")
    form.find_element(By.NAME, "file").send_keys(str(junk))
    submit(form.find_element(By.TAG_NAME, "button"))
    assert "not text" in css(".flash.error").text and "upload a .txt file" in css(".flash.error").text
    shot("2-not-text")

    with SampleSite(chapters_from_folder(ROOT / "samples" / "originals")) as site:
        driver.get(url + "/sites/")
        driver.find_element(By.CSS_SELECTOR, "#add-site-box > summary").click()
        form = css("#add-site")
        form.find_element(By.NAME, "url").send_keys(site.url + "/book/1/")
        submit(form.find_element(By.TAG_NAME, "button"))
        assert "Added site" in css(".flash").text

        # Preview with a content rule that selects nothing, then with one that does.
        form = css("#rules-form")
        form.find_element(By.NAME, "content").send_keys("#no-such-block")
        form.find_element(By.NAME, "sample_url").send_keys(site.url + "/book/1/1.html")
        submit(form.find_element(By.CSS_SELECTOR, "button[value=preview]"))
        assert "selects nothing on this page" in css("#preview .flash.error").text
        shot("3-preview-nothing")
        content = css("#rules-form").find_element(By.NAME, "content")
        content.clear()
        content.send_keys("#content, #chaptercontent")
        submit(css("#rules-form").find_element(By.CSS_SELECTOR, "button[value=preview]"))
        text = css("#preview-text").text
        assert len(text) > 200 and "天才一秒记住本站地址" not in text
        assert not driver.find_elements(By.CSS_SELECTOR, "#preview .flash.error")
        shot("4-preview")
        submit(css("#rules-form").find_element(By.CSS_SELECTOR, "button[value=save]"))
        assert "Saved the rules" in css(".flash").text
        assert css("#rules-form").find_element(By.NAME, "content").get_attribute("value") == "#content, #chaptercontent"
        shot("5-saved")
