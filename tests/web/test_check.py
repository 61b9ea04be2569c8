"""'Check this text now' uses the tracker's engine on the registered chapters, on a text of
bounded size, one check at a time per process, never holding up the other pages."""
import threading

import pytest

from tracker.context import Context
from tracker.registry import register_work
from web import search

from ..conftest import ROOT
from ..linear import assert_linear
from .conftest import post
from .test_auth import basic

SAMPLES = ROOT / "samples"


@pytest.fixture
def registered(store, settings):
    ctx = Context(settings, store=store)
    register_work(ctx, "山城旧事", SAMPLES / "originals", author="林岚")
    return store


def test_a_traditional_script_copy_finds_its_chapter(admin, registered):
    text = (SAMPLES / "pages" / "tw-3.txt").read_text(encoding="utf-8")
    r = post(admin, "/check", {"text": text})
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "Copies 1 original" in html and "山城旧事-第三章" in html
    assert "<mark>" in html and "石階又窄又陡" in html


def test_the_api_gives_the_chapter_and_the_copied_passages(client, registered):
    from .test_auth import basic

    text = "前言：以下转载自网络。\n" + (SAMPLES / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
    r = client.post("/api/check", json={"text": text}, headers=basic("viewer"))
    assert r.status_code == 200, r.data
    found = r.json["matches"]
    assert [m["chapter"] for m in found] == ["山城旧事/山城旧事-第一章"]
    assert found[0]["containment"] > 0.95 and found[0]["passages"]
    p = found[0]["passages"][0]
    assert p["page_excerpt"][:20] == p["original_excerpt"][:20]
    copied = "".join(s["text"] for s in r.json["text_segments"] if s["copied"])
    assert len(copied) > 0.9 * len(text) - 20


def test_an_unrelated_text_matches_nothing(admin, registered):
    text = (SAMPLES / "pages" / "unrelated-news.txt").read_text(encoding="utf-8")
    html = post(admin, "/check", {"text": text}).get_data(as_text=True)
    assert "No copy found" in html


def test_a_chapter_registered_after_the_first_check_is_found(admin, store, settings):
    text = (SAMPLES / "originals" / "山城旧事-第二章.txt").read_text(encoding="utf-8")
    assert "No copy found" in post(admin, "/check", {"text": text}).get_data(as_text=True)
    register_work(Context(settings, store=store), "山城旧事", SAMPLES / "originals")
    assert "山城旧事-第二章" in post(admin, "/check", {"text": text}).get_data(as_text=True)


def test_a_chapter_edited_in_place_is_found_at_once(admin, store, settings, tmp_path):
    """A new edition with as many chapters as the old one: the in-process index is loaded again."""
    folder = tmp_path / "originals"
    folder.mkdir()
    first = (SAMPLES / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
    second = (SAMPLES / "originals" / "山城旧事-第二章.txt").read_text(encoding="utf-8")
    (folder / "山城旧事-第一章.txt").write_text(first, encoding="utf-8")
    register_work(Context(settings, store=store), "山城旧事", folder)
    assert "No copy found" in post(admin, "/check", {"text": second}).get_data(as_text=True)
    (folder / "山城旧事-第一章.txt").write_text(second, encoding="utf-8")  # the chapter, rewritten
    register_work(Context(settings, store=store), "山城旧事", folder)
    assert "山城旧事-第一章" in post(admin, "/check", {"text": second}).get_data(as_text=True)


LIMIT = 100_000
WAIT = 60  # seconds a held check waits to be let go: only so that a broken test cannot hang


def test_too_long_texts_are_413_naming_the_limit(client, registered):
    r = client.post("/api/check", json={"text": "字" * (LIMIT + 1)}, headers=basic("viewer"))
    assert r.status_code == 413 and r.json["error"] == "too large"
    assert r.json["limit"] == LIMIT and r.json["chars"] == LIMIT + 1 and "at most 100,000" in r.json["message"]
    r = client.post("/api/check", json={"text": "字" * LIMIT}, headers=basic("viewer"))
    assert r.status_code == 200 and r.json["chars"] == LIMIT


def test_too_long_text_on_the_page_is_a_form_error_keeping_the_text(admin):
    r = post(admin, "/check", {"text": "字" * (LIMIT + 1)})
    html = r.get_data(as_text=True)
    assert r.status_code == 413 and 'role="alert">The text has 100,001 characters; check at most 100,000' in html
    assert "<textarea" in html and "字" * 1000 in html


def test_the_limit_is_a_setting(store, settings):
    from web import create_app

    app = create_app({"SECRET_KEY": "k", "SETTINGS": settings, "STORE": store, "CHECK_MAX_CHARS": 10})
    r = app.test_client().post("/api/check", json={"text": "x" * 11}, headers=basic("viewer"))
    assert r.status_code == 413 and r.json["limit"] == 10


def test_empty_or_not_text_is_400(client, registered):
    r = client.post("/api/check", json={"text": ""}, headers=basic("viewer"))
    assert r.status_code == 400
    r = client.post("/api/check", json={"text": 3}, headers=basic("viewer"))
    assert r.status_code == 400


def test_a_lone_surrogate_is_replaced_and_counted(client, registered):
    r = client.post("/api/check", data='{"text": "\\ud800abc \\udfff\\ud83d\\ude00"}',
                    content_type="application/json", headers=basic("viewer"))
    assert r.status_code == 200, r.data
    assert r.json["surrogates_replaced"] == 2  # the pair is one character, not two halves
    assert "".join(seg["text"] for seg in r.json["text_segments"]) == "\ufffdabc \ufffd\U0001f600"


@pytest.mark.parametrize("body", ['{"page": "\\ud800", "chapter": "c", "status": "confirmed"}',
                                  '{"matches": [{"page": "p", "chapter": "\\udc00"}], "status": "confirmed"}',
                                  '{"\\ud800": 1, "status": "confirmed"}'])
def test_a_lone_surrogate_elsewhere_in_json_is_400(client, body):
    r = client.post("/api/matches/status", data=body, content_type="application/json", headers=basic("admin"))
    assert r.status_code == 400 and "lone surrogate" in r.json["message"]


def test_json_nested_too_deeply_is_400(client):
    r = client.post("/api/check", data="[" * 100_000 + "]" * 100_000, content_type="application/json",
                    headers=basic("viewer"))
    assert r.status_code == 400 and "nests too deeply" in r.json["message"]


@pytest.fixture
def held(monkeypatch):
    """Checks stop inside the engine (holding what a check holds) until `release` is set;
    `started` is set when one gets there."""
    started, release = threading.Event(), threading.Event()
    real = search.check_text

    def held_check(*args):
        started.set()
        assert release.wait(WAIT), "the held check was never let go"
        return real(*args)

    monkeypatch.setattr(search, "check_text", held_check)
    yield started, release
    release.set()


def in_thread(fn):
    """Run fn() in a thread; returns the thread and a dict that gets its "result"."""
    out = {}
    t = threading.Thread(target=lambda: out.update(result=fn()), daemon=True)
    t.start()
    return t, out


def test_the_dashboard_answers_while_a_maximum_size_check_runs(app, admin, registered, held):
    started, release = held
    checker = app.test_client()
    t, out = in_thread(lambda: checker.post("/api/check", json={"text": "字" * LIMIT}, headers=basic("viewer")))
    assert started.wait(WAIT)
    # In this thread, while the other one is inside the engine with a text of the maximum size:
    r = admin.get("/")
    assert r.status_code == 200 and "Matches found per day" in r.get_data(as_text=True)
    r = admin.get("/api/dashboard")
    assert r.status_code == 200 and r.json["counts"]["works"] == 1
    assert t.is_alive() and "result" not in out  # the check really was in flight all along
    release.set()
    t.join(WAIT)
    assert out["result"].status_code == 200 and out["result"].json["chars"] == LIMIT


def test_a_second_check_is_told_to_come_back_not_queued(app, admin, registered, held):
    started, release = held
    checker = app.test_client()
    t, out = in_thread(lambda: checker.post("/api/check", json={"text": "字" * 100}, headers=basic("viewer")))
    assert started.wait(WAIT)
    started.clear()
    # Queued, this call would wait for the held check, which waits for the test: the assertion
    # below would then see the 200 that comes after the release, not a 503.
    r = app.test_client().post("/api/check", json={"text": "字" * 100}, headers=basic("viewer"))
    assert r.status_code == 503 and r.json["error"] == "busy" and r.headers["Retry-After"] == "5"
    assert "try again in a few seconds" in r.json["message"]
    r = post(admin, "/check", {"text": "还没有检查的文字"})
    html = r.get_data(as_text=True)
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert 'role="alert">Busy checking another text; try again in a few seconds.' in html and "还没有检查的文字" in html
    assert not started.is_set()  # neither refused check reached the engine
    release.set()
    t.join(WAIT)
    assert out["result"].status_code == 200
    assert app.test_client().post("/api/check", json={"text": "字" * 100}, headers=basic("viewer")).status_code == 200


@pytest.mark.parametrize("unit", ["a", "abc "], ids=["one letter", "short words"])
def test_checking_a_run_of_letters_takes_linear_time(app, registered, unit):
    with app.test_request_context():  # the function behind /check and /api/check, without the HTTP costs
        assert_linear(search.check_data, lambda n: unit * (n // len(unit)), 1500,
                      what=f"checking {unit!r} repeated")
