"""The takedown notice: which matches it names (confirmed ones; excerpts only when included), the
same in the admin's Takedown page and the API; and its text."""
from datetime import date

from tracker.store import MatchRecord, Page
from web.reports.catalog import ChapterCatalog
from web.review.takedown import in_notice, nothing_to_notice, notice_items, notice_matches, notice_text

from .conftest import CH1, T0, post

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")
M2 = ("https://biquge.example/2.html", "山城旧事/第2章")
BLOG = "https://blog.example/review.html"


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
    assert "We hold the rights to the following work:\n" in text
    assert "The 2 pages listed below reproduce chapters of this work without\n" in text
    assert "We ask you to remove them, or disable access to them, without delay." in text
    assert ("1. https://biquge.example/1.html\n"
            "   Copies: 《山城旧事》 第1章 (full copy)\n"
            f"   What was copied: 100% of the chapter appears on this page, in 1 passage of {len(CH1)} characters; "
            "the page is 90% this chapter.\n"
            "   First seen: 2026-11-20 06:10 UTC; last seen: 2026-11-20 06:10 UTC\n"
            "   Copied text: \u201c陈守义坐在茶馆靠窗的位置") in text
    assert "2. https://biquge.example/2.html" in text and "What was copied: 90% of the chapter appears" in text
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
    assert notice_text([]).startswith("No notice: no confirmed matches: confirm them on the Matches page")
    why = nothing_to_notice(store, work="山城旧事", site="biquge")
    assert why == ("no confirmed matches of 《山城旧事》 on biquge (2 new matches await review): confirm them on the "
                   "Matches page or with `fptrack set-status PAGE CHAPTER confirmed` first")
    assert notice_text([], empty=why) == f"No notice: {why}.\n"


def blog_excerpt(store, status: str = "confirmed") -> tuple[str, str]:
    """A blog review quoting 15% of chapter 1: an excerpt, which may be fair use."""
    store.upsert_page(Page(key=BLOG, url=BLOG, site="blog", text="书评：" + CH1[:12] + "……写得真好。", fetched_at=T0))
    store.upsert_match(MatchRecord(page=BLOG, chapter=M1[1], work="山城旧事", site="blog", similarity=0.2,
                                   containment=0.15, page_share=0.6, verdict="excerpt",
                                   scores={"winnow": 0.15, "longest_run": 12},
                                   spans=[{"page_start": 3, "page_end": 15, "original_start": 0, "original_end": 12}],
                                   first_seen=T0, last_seen=T0))
    store.set_match_status(BLOG, M1[1], status, by="t")
    return BLOG, M1[1]


def test_new_matches_and_excerpts_are_named_only_when_confirmed_and_included(store):
    blog_excerpt(store)
    store.set_match_status(*M2, "confirmed", by="t")  # M1 stays new
    names = lambda **kw: [(m.page, m.chapter) for m in notice_matches(store, work="山城旧事", **kw)[0]]  # noqa: E731
    assert names() == [M2]
    assert sorted(names(include_excerpts=True)) == sorted([M2, (BLOG, M1[1])])
    new = store.get_match(*M1)
    assert not in_notice(new) and not in_notice(new, include_excerpts=True)
    excerpt = store.get_match(BLOG, M1[1])
    assert not in_notice(excerpt) and in_notice(excerpt, include_excerpts=True)
    sent = store.set_match_status(*M2, "takedown-sent", by="t")
    assert not in_notice(sent)  # named once: the Takedown page moved it on when it was sent


def test_a_confirmed_excerpt_alone_is_no_notice_unless_included(store):
    blog_excerpt(store)
    assert notice_matches(store, site="blog") == ([], False)
    why = nothing_to_notice(store, site="blog", include_how="add --include-excerpts")
    assert why == ("no confirmed full copy or part on blog, only 1 confirmed excerpt (a short quotation, which may "
                   "be fair use): add --include-excerpts to name it")
    found, _ = items(store, site="blog", include_excerpts=True)
    assert [i["kind"] for i in found] == ["excerpt"]
    text = notice_text(found)
    assert "(excerpt)" in text and "reproduces chapters, or parts of chapters, of this work" in text
    assert "What was copied: 15% of the chapter appears on this page, in 1 passage of 12 characters" in text


def test_the_limit_counts_named_matches_only(store):
    blog_excerpt(store)
    store.set_match_status(*M2, "confirmed", by="t")
    found, more = notice_matches(store, work="山城旧事", limit=1)
    assert [(m.page, m.chapter) for m in found] == [M2] and more is False


# ----------------------------------------------------------------------------- admin and API


def test_the_takedown_page_leaves_new_matches_and_excerpts_out_and_says_why(admin, store):
    blog_excerpt(store)
    html = admin.get("/takedown?site=blog").get_data(as_text=True)
    assert BLOG not in html.split('<textarea', 1)[1] and "No notice: no confirmed full copy or part on blog" in html
    assert 'name="include_excerpts"' in html
    html = admin.get("/takedown?site=blog&include_excerpts=1").get_data(as_text=True)
    assert "NOTICE OF COPYRIGHT INFRINGEMENT" in html and BLOG in html
    html = admin.get("/takedown?site=biquge").get_data(as_text=True)
    assert "No notice: no confirmed matches on biquge (2 new matches await review)" in html


def test_marking_sent_moves_the_excerpts_only_when_the_notice_named_them(admin, store):
    blog_excerpt(store)
    store.set_match_status(*M1, "confirmed", by="t")
    assert post(admin, "/takedown/sent", {"work": "山城旧事"}).status_code == 302
    assert store.get_match(*M1).status == "takedown-sent" and store.get_match(BLOG, M1[1]).status == "confirmed"
    assert post(admin, "/takedown/sent", {"work": "山城旧事", "include_excerpts": "1"}).status_code == 302
    assert store.get_match(BLOG, M1[1]).status == "takedown-sent"


def test_the_api_takes_the_same_rule_and_a_sender(client, store):
    from .test_auth import basic

    blog_excerpt(store)
    store.set_match_status(*M2, "confirmed", by="t")
    d = client.get("/api/takedown?work=山城旧事", headers=basic("viewer")).json
    assert [i["page"] for i in d["items"]] == [M2[0]] and d["include_excerpts"] is False
    assert d["items"][0]["kind"] == "full copy" and d["items"][0]["copied"].startswith("90% of the chapter")
    d = client.get("/api/takedown?work=山城旧事&include_excerpts=1&sender=林岚工作室", headers=basic("viewer")).json
    assert sorted(i["page"] for i in d["items"]) == sorted([M2[0], BLOG]) and "From: 林岚工作室" in d["text"]
    bad = client.get("/api/takedown?work=山城旧事&include_excerpts=maybe", headers=basic("viewer"))
    assert bad.status_code == 400 and "include_excerpts is 1 or 0" in bad.get_data(as_text=True)
    r = client.post("/api/takedown/sent", json={"work": "山城旧事"}, headers=basic("admin"))
    assert r.json == {"changed": 1} and store.get_match(BLOG, M1[1]).status == "confirmed"
    bad = client.post("/api/takedown/sent", json={"work": "山城旧事", "include_excerpts": "all"}, headers=basic("admin"))
    assert bad.status_code == 400 and store.get_match(BLOG, M1[1]).status == "confirmed"
    r = client.post("/api/takedown/sent", json={"work": "山城旧事", "include_excerpts": 1}, headers=basic("admin"))
    assert r.json == {"changed": 1} and store.get_match(BLOG, M1[1]).status == "takedown-sent"


def test_the_sender_defaults_to_the_organisation(store):
    from flask import Flask
    from flask_login import LoginManager, login_user

    from tracker.store import User
    from web.auth.access import SignedIn
    from web.review.notices import sender_args

    app = Flask(__name__)
    app.secret_key = "x"
    LoginManager(app)
    with app.test_request_context("/takedown?contact=rights@example.com"):
        login_user(SignedIn(User(name="a", password_hash=""), "s", org="north-press"))
        assert sender_args() == {"sender": "north-press", "contact": "rights@example.com"}
    with app.test_request_context("/takedown?sender=林岚工作室"):
        login_user(SignedIn(User(name="a", password_hash=""), "s"))
        assert sender_args() == {"sender": "林岚工作室", "contact": ""}
    with app.test_request_context("/takedown"):
        login_user(SignedIn(User(name="a", password_hash=""), "s"))  # the unnamed default organisation
        assert sender_args()["sender"] == ""
