"""The takedown notice text."""
from datetime import date

from web.catalog import ChapterCatalog
from web.takedown import notice_items, notice_text

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")
M2 = ("https://biquge.example/2.html", "山城旧事/第2章")


def items(store, **kw):
    return notice_items(store, ChapterCatalog().outline(store), **kw)


def test_only_confirmed_matches_are_listed(store):
    assert items(store, work="山城旧事") == ([], False)
    store.set_match_status(*M1, "confirmed", by="t")
    store.set_match_status(*M2, "dismissed", by="t")
    found, more = items(store, work="山城旧事")
    assert [i["url"] for i in found] == [M1[0]] and more is False


def test_notice_names_work_chapter_url_dates_and_evidence(store):
    store.set_match_status(*M1, "confirmed", by="t")
    store.set_match_status(*M2, "confirmed", by="t")
    found, more = items(store, site="biquge")
    text = notice_text(found, sender="林岚工作室", contact="rights@example.com", today=date(2026, 11, 22), more=more)
    assert text.startswith("NOTICE OF COPYRIGHT INFRINGEMENT\n\nDate: 2026-11-22\nTo: the operator of the site biquge")
    assert "From: 林岚工作室\nContact: rights@example.com" in text
    assert "  - 《山城旧事》 by 林岚" in text
    assert "The 2 page(s) listed below" in text
    assert ("1. https://biquge.example/1.html\n"
            "   Copies: 《山城旧事》 第1章 (100% of the chapter)\n"
            "   First seen: 2026-11-20 06:10 UTC; last seen: 2026-11-20 06:10 UTC\n"
            "   Copied text: \u201c陈守义坐在茶馆靠窗的位置") in text
    assert "2. https://biquge.example/2.html" in text and "(90% of the chapter)" in text
    assert text.rstrip().endswith("Signed: 林岚工作室")


def test_one_section_per_site_and_placeholders_without_a_sender(store):
    store.set_match_status(*M1, "confirmed", by="t")
    store.set_match_status("evil-1", "山城旧事/第1章", "confirmed", by="t")
    text = notice_text(items(store, work="山城旧事")[0], today=date(2026, 11, 22))
    assert text.count("NOTICE OF COPYRIGHT INFRINGEMENT") == 2
    assert "[name of the rights holder]" in text and "-" * 72 in text
    # a page whose URL is not http(s) is listed by its URL as text; the notice is plain text, never HTML
    assert "javascript:alert(1)" in text


def test_too_many_matches_are_cut_with_a_note(store):
    store.set_match_status(*M1, "confirmed", by="t")
    store.set_match_status(*M2, "confirmed", by="t")
    found, more = items(store, work="山城旧事", limit=1)
    assert len(found) == 1 and more
    assert "Only the first 1 matches are listed" in notice_text(found, more=more)


def test_nothing_confirmed_says_what_to_do(store):
    assert "confirm matches first" in notice_text([])
