"""A title and an author set through the API by an organisation's write token, made of terminal
control sequences (retitle the window, clear the screen, ring the bell, C1's CSI), reach the
operator's terminal only as visible escapes: `fptrack works` in every format under a real
pseudo-terminal writes no ESC, BEL or C1 character."""
from __future__ import annotations

import io
import re
from datetime import UTC

import pytest

from tests.cli.terminal import clean_env, in_terminal, program
from tests.conftest import ROOT
from tests.tracker.test_uploads import CH1
from tests.web.test_manage_sites import home_store  # noqa: F401  (a fixture: the store at FPT_HOME)
from tracker.store.tenancy import Organisation
from tracker.tenancy.tokens import create_token
from web import create_app

from .conftest import bearer

TITLE = "\x1b]0;owned\x07雨夜\x1b[2J\x9b31m"
AUTHOR = "林\x1b[8m岚\x07\x85"
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # all but tab, newline, carriage return


@pytest.fixture
def hostile_title(home_store, settings):
    home_store.upsert_org(Organisation("east"))
    _, token = create_token(home_store, "east", "write", "east's writer")
    api = create_app({"TESTING": True, "SECRET_KEY": "test", "SETTINGS": settings, "STORE": home_store}).test_client()
    text = "".join(f"第{i}章 第{i}回\n{CH1}\n" for i in range(1, 4)).encode()
    r = api.post("/api/works", data={"title": TITLE, "author": AUTHOR, "file": (io.BytesIO(text), "book.txt")},
                 content_type="multipart/form-data", headers=bearer(token))
    return r


@pytest.mark.parametrize("fmt", ["csv", "table", "jsonl", "json"])
def test_works_shows_a_hostile_title_with_no_control_character(hostile_title, settings, fmt):
    if hostile_title.status_code != 201:  # refused at the door: nothing can reach a terminal
        assert hostile_title.status_code == 400, hostile_title.get_data(as_text=True)
        pytest.skip(f"the API refuses such a title: {hostile_title.get_json()['message']}")
    ran = in_terminal([program("fptrack"), "works", "--format", fmt], env=clean_env(FPT_HOME=str(settings.home)),
                      cwd=ROOT, timeout=120)
    assert ran.code == 0, ran.out
    assert not CONTROLS.findall(ran.out), repr(ran.out)
    assert "雨夜" in ran.out and ("\\x1b" in ran.out or "\\u001b" in ran.out), ran.out  # shown, as an escape


def test_verify_shows_a_packages_hostile_text_as_escapes(tmp_path):
    """A package received from anyone: its manifest's text (here the signer it names) reaches
    the terminal of whoever runs --verify only as visible escapes."""
    from datetime import datetime

    from tracker.evidence.package import write_package

    package = tmp_path / "p.zip"
    with open(package, "wb") as out:
        write_package(out, [("notice.txt", b"NOTICE\n")], {"signed_by": TITLE},
                      datetime(2026, 3, 1, tzinfo=UTC))
    ran = in_terminal([program("fptrack"), "evidence", "--verify", str(package)],
                      env=clean_env(FPT_HOME=str(tmp_path / "home")), cwd=ROOT, timeout=120)
    assert ran.code == 1, ran.out
    assert not CONTROLS.findall(ran.out), repr(ran.out)
    assert "FAIL: missing file: manifest.sig (the manifest says it was signed: \\x1b]0;owned\\x07" in ran.out
