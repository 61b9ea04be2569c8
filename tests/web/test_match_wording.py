"""What people read about a match: the match page, the check page and the API open with the kind
of copy and one sentence on how much was copied; the channel scores sit under a closed
"Technical details"; counts are integers in JSON; one term, "Page share", everywhere."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tracker.context import Context
from tracker.registry import register_work
from tracker.store import Chapter, MatchRecord, Page

from ..conftest import ROOT
from .conftest import T0, post
from .test_auth import basic

LONG = "老街的石板路被雨水洗得发亮，茶馆里的说书人又开始讲那段旧事。" * 160  # 4,800 characters
PAGE = "https://biquge.example/long.html"
CHAPTER = "山城旧事/第9章"
TEMPLATES = Path(__file__).parents[2] / "web" / "templates"


def long_match(store) -> None:
    store.upsert_chapter(Chapter(key=CHAPTER, work="山城旧事", title="第9章", text=LONG, number=9))
    store.upsert_page(Page(key=PAGE, url=PAGE, site="biquge", text=LONG[:4760], fetched_at=T0))
    store.upsert_match(MatchRecord(
        page=PAGE, chapter=CHAPTER, work="山城旧事", site="biquge", similarity=0.98, containment=0.97,
        page_share=1.0, verdict="duplicate",
        scores={"longest_run": 4070.0, "candidate_channels": 3, "simhash_distance": 2, "minhash_containment": 0.93,
                "winnow": 0.97, "winnow_page": 1.0},
        spans=[{"page_start": 0, "page_end": 4760, "original_start": 0, "original_end": 4760}],
        first_seen=T0, last_seen=T0))


def test_the_match_page_opens_with_what_was_copied_and_closes_the_scores(admin, store):
    long_match(store)
    html = admin.get("/matches/view", query_string={"page_key": PAGE, "chapter": CHAPTER}).get_data(as_text=True)
    sentence = ("Full copy: 97% of the chapter appears on this page, in 1 passage of 4,760 characters; "
                "the page is 100% this chapter.")
    lead = re.search(r'<p class="lead" id="copy-summary">(.*?)</p>', html)
    assert lead and lead.group(1) == sentence
    assert html.index("</h1>") < lead.start() < html.index('<dl class="facts">')
    (details,) = re.findall(r'<details class="technical">(.*?)</details>', html, re.S)
    outside = html.replace(details, "")
    for name in ("candidate_channels", "longest_run", "minhash_containment", "simhash_distance", "winnow_page"):
        assert name not in outside and f"<th>{name}</th>" in details
    assert '<th>longest_run</th><td class="n">4070</td><td>the longest stretch' in details
    assert "<dt>Kind</dt><dd>full copy</dd>" in html


def test_the_match_page_packs_with_a_sender_a_contact_and_excerpts_when_asked(admin, store):
    long_match(store)
    html = admin.get("/matches/view", query_string={"page_key": PAGE, "chapter": CHAPTER}).get_data(as_text=True)
    form = re.search(r'<form class="filters package" method="get" action="/evidence/package">(.*?)</form>', html, re.S)
    assert form, "the package form"
    fields = set(re.findall(r'name="([a-z_]+)"', form.group(1)))
    assert fields == {"page_key", "sender", "contact", "include_excerpts"}
    assert 'id="evidence-package"' in form.group(1) and 'type="checkbox" name="include_excerpts"' in form.group(1)
    assert "checked" not in form.group(1)  # excerpts are left out unless asked for


def test_the_api_gives_the_sentence_and_counts_as_integers(client, store):
    long_match(store)
    r = client.get("/api/matches/view", query_string={"page_key": PAGE, "chapter": CHAPTER}, headers=basic("viewer"))
    raw = r.get_data(as_text=True)
    assert re.search(r'"longest_run":\s*4070[,}]', raw) and "4070.0" not in raw
    m = r.json["match"]
    assert m["kind"] == "full copy" and m["summary"].startswith("Full copy: 97% of the chapter appears on this page")
    assert m["scores"]["candidate_channels"] == 3 and isinstance(m["scores"]["winnow_page"], float)
    assert [s["name"] for s in m["score_lines"]][:3] == ["longest_run", "candidate_channels", "simhash_distance"]
    assert json.loads(raw)["match"]["containment"] == 0.97


def test_the_matches_list_names_the_kind_of_copy(admin, store):
    long_match(store)
    html = admin.get("/matches/?site=biquge").get_data(as_text=True)
    assert "<th>Kind</th>" in html and "<td>full copy</td>" in html and "<th>Verdict</th>" not in html


def test_the_check_page_says_it_in_the_same_words(admin, store, settings):
    register_work(Context(settings, store=store), "山城旧事", ROOT / "samples" / "originals", author="林岚")
    text = (ROOT / "samples" / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
    html = post(admin, "/check", {"text": "前言：以下转载自网络。\n" + text}).get_data(as_text=True)
    assert re.search(r'<p class="lead">Full copy: \d+% of the chapter appears in this text, in \d[\d,]* passages? of '
                     r'[\d,]+ characters( in all)?; the text is \d+% this chapter\.</p>', html), html
    (details,) = re.findall(r'<details class="technical">(.*?)</details>', html, re.S)
    assert "<th>winnow_page</th>" in details and "winnow_page" not in html.replace(details, "")
    assert "<th>Kind</th>" in html


def test_one_term_for_the_share_of_a_page_that_is_copied():
    """"Page share" is the term (matches list, match page, report, check page); never "Text share"."""
    for path in TEMPLATES.rglob("*.html"):
        assert "Text share" not in path.read_text(encoding="utf-8"), path
