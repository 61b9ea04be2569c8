"""A translated copy shown to people: a Liaozhai story registered in Chinese and a page carrying
Giles's English translation, judged by the engine (tests/web/translated.py). The match page and
the evidence report say in words that the page is an English translation and how many sentences
align, and show the aligned sentence pairs, the original's beside the page's, one row per pair;
the takedown notice says it is a translation and quotes a few pairs. A same-language match keeps
its copied passages."""
from __future__ import annotations

import io
import re
import zipfile
from html import unescape

from tracker.store import MatchRecord, Page
from web.reports.catalog import ChapterCatalog
from web.review import evidence
from web.review.takedown import notice_entries, notice_matches, notice_text

from .conftest import CH1, T0
from .test_routes import M1
from .translated import CHAPTER, PAGE, SITE, TITLE, VIEW, WORK, add_translated_match, story

ROW = re.compile(r"<tr><td class=\"n\">(\d+)</td><td class=\"original\"[^>]*>(.*?)</td>\s*"
                 r"<td class=\"page\"[^>]*>(.*?)</td></tr>", re.S)


def one_line(text: str) -> str:
    return " ".join(text.split())


def aligned_rows(html: str) -> list[tuple[int, str, str]]:
    """The rows of the aligned-sentence table: number, the original's sentence, the page's."""
    return [(int(n), unescape(o), unescape(p)) for n, o, p in ROW.findall(html)]


def expected_rows(m) -> list[tuple[str, str]]:
    """Each stored span as its two sentences, in the chapter's order, from the texts themselves."""
    pair = story()
    spans = sorted(m.spans, key=lambda s: s["original_start"])
    return [(one_line(pair.zh_text[s["original_start"]:s["original_end"]]),
             one_line(pair.en_text[s["page_start"]:s["page_end"]])) for s in spans]


def kind(m) -> str:
    """The kind as the summary opens with it ("Full copy"), from the engine's verdict on the pair."""
    words = {"duplicate": "Full copy", "contains": "Full copy", "part": "Part", "excerpt": "Excerpt"}
    return words[m.verdict]


def aligned_words(m) -> str:
    return f"{int(m.scores['aligned_sentences'])} of {int(m.scores['chapter_sentences'])} sentences aligned"


def test_the_match_page_says_it_is_an_english_translation_and_shows_the_aligned_pairs(admin, store):
    m = add_translated_match(store)
    html = admin.get(VIEW[0], query_string=VIEW[1]).get_data(as_text=True)
    summary = unescape(re.search(r'<p class="lead" id="copy-summary">(.*?)</p>', html, re.S).group(1))
    assert summary.startswith(f"{kind(m)}: English translation of this chapter, {aligned_words(m)}"), summary
    assert f"({round(m.containment * 100)}% of the chapter)" in summary
    assert summary.endswith(f"the page is {round(m.page_share * 100)}% this chapter.")
    rows = aligned_rows(html)
    assert f"Aligned sentences ({len(m.spans)} pairs)" in html and len(rows) == len(m.spans) > 20
    assert [n for n, _, _ in rows] == list(range(1, len(rows) + 1))
    assert [(o, p) for _, o, p in rows] == expected_rows(m)  # in order, each original beside its page sentence
    # a real pair, read by a person: the scholar mounts the horse
    (horse,) = [(o, p) for _, o, p in rows if "公力疾乘马从去" in o]
    assert "getting upon the horse" in horse[1]
    assert "The original (Chinese)" in html and "The page (English)" in html
    assert ">zh<" not in html and ">en<" not in html and "Copied passages" not in html
    assert "sentences of the chapter aligned with a sentence of the page" in html  # Technical details
    assert 'id="more-pairs"' not in html


def test_a_long_list_is_cut_on_the_page_and_whole_in_the_evidence_report(admin, store, monkeypatch):
    m = add_translated_match(store, "confirmed")
    monkeypatch.setattr(evidence, "ROWS_SHOWN", 5)
    html = admin.get(VIEW[0], query_string=VIEW[1]).get_data(as_text=True)
    total = len(m.spans)
    assert [n for n, _, _ in aligned_rows(html)] == [1, 2, 3, 4, 5]
    assert (f"The first 5 of {total} aligned pairs are shown; the other {total - 5} are in the evidence report "
            "of the downloadable evidence package.") in html
    r = admin.get("/evidence/package", query_string={"page_key": PAGE})
    assert r.status_code == 200 and r.mimetype == "application/zip"
    with zipfile.ZipFile(io.BytesIO(r.data)) as z:
        report = z.read("report.html").decode()
        notice = z.read("notice.txt").decode()
        names = z.namelist()
    assert [(o, p) for _, o, p in aligned_rows(report)] == expected_rows(m)
    assert f"Aligned sentences ({total} pairs)" in report and "The first 5" not in report
    assert f"{kind(m)}: English translation of this chapter, {aligned_words(m)}" in unescape(report)
    assert "Copied passages" not in report
    assert f"the page is an English translation of {TITLE} (《{WORK}》): {aligned_words(m)}" in notice
    if "report.pdf" in names:  # the PDF is printed from this report.html (tracker.evidence.pdf)
        with zipfile.ZipFile(io.BytesIO(r.data)) as z:
            assert z.read("report.pdf").startswith(b"%PDF-")


def test_the_notice_says_translation_with_the_count_and_quotes_aligned_pairs(admin, store):
    m = add_translated_match(store, "confirmed")
    text = admin.get("/takedown.txt", query_string={"work": WORK}).get_data(as_text=True)
    entry = text[text.index(PAGE):]
    assert f"Copies: 《{WORK}》 {TITLE} ({kind(m).lower()}, in English translation)" in entry
    assert "The page listed below translates chapters of this work without" in text
    assert (f"What was copied: the page is an English translation of {TITLE} (《{WORK}》): {aligned_words(m)} "
            f"({round(m.containment * 100)}% of the chapter)") in entry
    assert "Aligned sentences (the original, then the page's translation of it):" in entry
    (first_zh, first_en), (second_zh, _) = expected_rows(m)[:2]
    assert f"\u201c{first_zh}\u201d\n     = \u201c{first_en[:119]}" in entry
    assert f"\u201c{second_zh}\u201d" in entry and "Copied text:" not in entry
    # the admin's notice page shows the same words
    html = unescape(admin.get("/takedown", query_string={"work": WORK}).get_data(as_text=True))
    assert f"the page is an English translation of {TITLE} (《{WORK}》): {aligned_words(m)}" in html


def test_a_same_language_match_keeps_its_copied_passages(admin, store):
    add_translated_match(store)
    html = admin.get("/matches/view", query_string=M1).get_data(as_text=True)
    assert "Copied passages (1)" in html and 'id="aligned-sentences"' not in html
    assert "translation" not in html.split('id="copy-summary">')[1].split("</p>")[0]
    assert "<mark>" + CH1[:10] in html


def test_the_match_json_carries_the_pairs_and_languages(admin, store):
    m = add_translated_match(store)
    data = admin.get("/api/matches/view", query_string={"page_key": PAGE, "chapter": CHAPTER}).get_json()
    t = data["translation"]
    assert t["language_name"] == "English" and t["original_language_name"] == "Chinese"
    assert t["total"] == len(m.spans) and [(p["original"], p["page"]) for p in t["pairs"]] == expected_rows(m)
    same = admin.get("/api/matches/view", query_string=M1).get_json()
    assert same["translation"] is None and same["passages"]


def test_a_translation_still_names_its_language_when_its_chapter_is_deleted(admin, store):
    m = add_translated_match(store)
    store.delete_chapter(CHAPTER)
    html = unescape(admin.get(VIEW[0], query_string=VIEW[1]).get_data(as_text=True))
    assert f"{kind(m)}: English translation of this chapter, {aligned_words(m)}" in html
    assert "The page (English)" in html and "(chapter deleted)" in html


def test_a_notice_naming_copies_and_a_translation_on_one_site_says_reproduce_or_translate(store):
    add_translated_match(store, "confirmed")
    # a same-language copy of the story on the translation's site
    copy = "https://fanyi.example/liaozhai/zh-1.html"
    store.upsert_page(Page(key=copy, url=copy, site=SITE, text=story().zh_text, fetched_at=T0))
    store.upsert_match(MatchRecord(page=copy, chapter=CHAPTER, work=WORK, site=SITE, similarity=1.0, containment=1.0,
                                   page_share=1.0, verdict="duplicate", scores={"winnow": 1.0},
                                   spans=[{"page_start": 0, "page_end": 50, "original_start": 0, "original_end": 50}],
                                   status="confirmed", first_seen=T0, last_seen=T0))
    found, _ = notice_matches(store, site=SITE)
    text = notice_text(notice_entries(store, ChapterCatalog().outline(store), found))
    assert "The 2 pages listed below reproduce or translate chapters" in text
    assert text.count("in English translation)") == 1 and "Copied text: \u201c" + story().zh_text[:10] in text
