"""'Check this text now' uses the tracker's engine on the registered chapters."""
import pytest

from tracker.context import Context
from tracker.registry import register_work

from ..conftest import ROOT
from .conftest import post

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


def test_too_long_or_empty_texts_are_400(client, registered):
    from .test_auth import basic

    r = client.post("/api/check", json={"text": "字" * 200_001}, headers=basic("viewer"))
    assert r.status_code == 400 and "at most 200,000" in r.json["message"]
    r = client.post("/api/check", json={"text": ""}, headers=basic("viewer"))
    assert r.status_code == 400
    r = client.post("/api/check", json={"text": 3}, headers=basic("viewer"))
    assert r.status_code == 400
