"""Every HTML page, with what it must show."""
import re

from tracker.store import MatchRecord

from .conftest import JS_URL, post

M1 = ("https://biquge.example/1.html", "山城旧事/第1章")


def text(r) -> str:
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return r.get_data(as_text=True)


def test_dashboard_totals_chart_top_sites_and_failures(admin):
    html = text(admin.get("/"))
    assert re.search(r"<b>1</b> works", html) and re.search(r"<b>3</b> chapters", html)
    assert re.search(r"<b>4</b> pages crawled", html) and re.search(r"<b>3</b> matches", html)
    assert "new 3" in html and "confirmed 0" in html
    assert html.count("<svg") == 2  # matches per day, top sites
    assert "biquge" in html
    assert "no text left after removing markup" in html  # the failed page


def test_dashboard_days_param(admin):
    html = text(admin.get("/?days=7"))
    assert "last 7 days" in html
    assert admin.get("/?days=0").status_code == 400


def test_works_list_shows_coverage(admin):
    html = text(admin.get("/works/"))
    assert "山城旧事" in html and "林岚" in html
    assert 'value="0.6666666666666666"' in html  # 2 of 3 chapters copied


def test_work_report_ranks_sites_and_draws_the_matrix(admin):
    html = text(admin.get("/works/山城旧事"))
    assert re.search(r"<b>2</b> of 3 chapters copied", html)
    ranked = re.findall(r'<td class="n">(\d+)</td><td><a href="/sites/view\?name=([^"]+)"', html)
    assert [site for _, site in ranked][0] == "biquge"  # 2 chapters, ahead of the site with 1
    assert html.count('class="cell hit"') == 3
    assert "第3章" in html and 'class="clean"' in html  # the uncopied chapter is listed too


def test_work_report_leaves_out_dismissed_matches_unless_asked(admin, store):
    store.set_match_status("https://biquge.example/2.html", "山城旧事/第2章", "dismissed", by="t")
    html = text(admin.get("/works/山城旧事"))
    assert re.search(r"<b>1</b> of 3 chapters copied", html)
    html = text(admin.get("/works/山城旧事?scope=all"))
    assert re.search(r"<b>2</b> of 3 chapters copied", html)
    html = text(admin.get("/works/山城旧事?scope=dismissed"))
    assert re.search(r"<b>1</b> of 3 chapters copied", html)


def test_unknown_work_is_404(admin):
    r = admin.get("/works/nope")
    assert r.status_code == 404 and b"nope" in r.data


def test_sites_list(admin):
    html = text(admin.get("/sites/"))
    assert "biquge" in html and "daily" in html
    assert "&#34;&gt;&lt;img" in html  # the hostile site name, escaped


def test_site_report_copies_crawls_and_failures(admin):
    html = text(admin.get("/sites/view?name=biquge"))
    assert "queued 0 · done 2 · failed 1" in html
    assert "not a chapter" in html and "http 404" in html  # skip and failure reasons of the crawl
    assert "job-1" in html and "finished" in html
    assert "https://biquge.example/broken.html" in html
    assert 'href="https://biquge.example/"' in html and JS_URL in html and f'href="{JS_URL}' not in html


def test_site_report_needs_a_name_and_a_known_site(admin):
    assert admin.get("/sites/view").status_code == 400
    assert admin.get("/sites/view?name=nowhere").status_code == 404


def test_matches_list_filters_sorts_and_pages(admin):
    html = text(admin.get("/matches/?site=biquge&sort=containment"))
    rows = re.findall(r'<td class="url"><a href="/matches/view\?page_key=([^&]+)', html)
    assert rows == ["https://biquge.example/2.html", "https://biquge.example/1.html"]
    html = text(admin.get("/matches/?per_page=1&page=2&sort=-containment"))
    assert "page 2 of 3" in html
    assert len(re.findall(r'<td class="url">', html)) == 1
    assert 'href="/matches/?per_page=1&amp;page=3&amp;sort=-containment" rel="next"' in html


def test_match_detail_shows_both_texts_scores_and_workflow(admin):
    html = text(admin.get("/matches/view", query_string={"page_key": M1[0], "chapter": M1[1]}))
    assert html.count("<mark>") == 2  # the copied passage in the page and in the original
    assert "广告<mark>陈守义" in html
    assert "minhash_jaccard" in html and "simhash_distance" in html
    assert 'href="https://biquge.example/1.html"' in html and "2026-11-20 06:10 UTC" in html
    assert 'value="confirmed"' in html


def test_status_change_is_recorded_with_who_and_when(admin, store):
    r = post(admin, "/matches/status", {"match": '["%s", "%s"]' % M1, "status": "confirmed"})
    assert r.status_code == 302 and "/matches/view" in r.headers["Location"]
    m = store.get_match(*M1)
    assert m.status == "confirmed" and m.history[-1]["by"] == "admin"
    html = text(admin.get(r.headers["Location"]))
    assert "1 match set to confirmed." in html
    assert re.search(r"<td><span class=\"status s-confirmed\">confirmed</span></td><td>admin</td>"
                     r"<td class=\"when\">\d{4}-", html)


def test_bulk_status_change_from_the_list(admin, store):
    pairs = ['["https://biquge.example/1.html", "山城旧事/第1章"]', '["https://biquge.example/2.html", "山城旧事/第2章"]']
    r = admin.post("/matches/status", data={"match": pairs, "status": "dismissed", "next": "/matches/?site=biquge",
                                            "csrf_token": _token(admin)})
    assert r.status_code == 302 and r.headers["Location"] == "/matches/?site=biquge"
    assert {m.status for m in store.matches(site="biquge")} == {"dismissed"}


def test_bad_status_changes_are_400_or_404(admin):
    assert post(admin, "/matches/status", {"match": '["%s", "%s"]' % M1, "status": "stolen"}).status_code == 400
    assert post(admin, "/matches/status", {"match": "not json", "status": "new"}).status_code == 400
    assert post(admin, "/matches/status", {"status": "new"}).status_code == 400
    r = post(admin, "/matches/status", {"match": '["nope", "nope"]', "status": "new"})
    assert r.status_code == 404


def test_unknown_match_is_404(admin):
    assert admin.get("/matches/view?page_key=x&chapter=y").status_code == 404
    assert admin.get("/matches/view?page_key=x").status_code == 400


def test_match_of_a_deleted_chapter_still_shows_the_page(admin, store):
    store.delete_chapter("山城旧事/第2章")
    html = text(admin.get("/matches/view", query_string={"page_key": "https://biquge.example/2.html",
                                                         "chapter": "山城旧事/第2章"}))
    assert "chapter deleted" in html and html.count("<mark>") == 1


def test_search_finds_works_sites_and_urls(admin):
    html = text(admin.get("/search?q=biquge"))
    assert 'href="/sites/view?name=biquge"' in html
    assert "https://biquge.example/1.html" in html and "https://biquge.example/broken.html" in html
    html = text(admin.get("/search?q=林岚"))
    assert 'href="/works/%E5%B1%B1%E5%9F%8E%E6%97%A7%E4%BA%8B"' in html
    html = text(admin.get("/search?q=evil-1"))
    assert "Page with this key" in html
    assert "Works (0)" in text(admin.get("/search?q=zzz"))
    assert "Works (" not in text(admin.get("/search"))


def test_takedown_page_lists_confirmed_matches(admin, store):
    html = text(admin.get("/takedown?work=山城旧事"))
    assert "No notice: no confirmed matches of 《山城旧事》 (3 new matches await review)" in html
    store.set_match_status(*M1, "confirmed", by="t")
    html = text(admin.get("/takedown?work=山城旧事&sender=林岚工作室"))
    assert "1 confirmed match of" in html and "https://biquge.example/1.html" in html
    assert "From: 林岚工作室" in html
    assert 'action="/takedown/sent"' in html


def test_takedown_download_is_a_text_attachment(admin, store):
    store.set_match_status(*M1, "confirmed", by="t")
    r = admin.get("/takedown.txt?site=biquge")
    assert r.status_code == 200 and r.content_type == "text/plain; charset=utf-8"
    assert r.headers["Content-Disposition"].startswith('attachment; filename="takedown-biquge-')
    body = r.get_data(as_text=True)
    assert body.startswith("NOTICE OF COPYRIGHT INFRINGEMENT") and "https://biquge.example/1.html" in body


def test_marking_a_notice_sent_moves_its_matches(admin, store):
    store.set_match_status(*M1, "confirmed", by="t")
    r = post(admin, "/takedown/sent", {"work": "山城旧事", "site": "biquge"})
    assert r.status_code == 302
    m = store.get_match(*M1)
    assert m.status == "takedown-sent" and m.history[-1]["by"] == "admin"
    assert store.get_match("https://biquge.example/2.html", "山城旧事/第2章").status == "new"


def test_check_page_form(admin):
    html = text(admin.get("/check"))
    assert '<textarea id="text" name="text"' in html
    assert post(admin, "/check", {"text": "  "}).status_code == 400


def test_many_matches_are_paged_not_loaded(admin, store):
    for i in range(120):
        store.upsert_match(MatchRecord(page=f"p{i:03d}", chapter="山城旧事/第3章", work="山城旧事", site="bulk",
                                       similarity=0.5, containment=i / 200, page_share=0.5, verdict="part"))
    html = text(admin.get("/matches/?site=bulk&per_page=50&page=3"))
    assert "page 3 of 3" in html and len(re.findall(r'<td class="url">', html)) == 20
    html = text(admin.get("/works/山城旧事"))
    assert re.search(r"<b>2</b> of 3 chapters copied in full, 1 copied in part", html)  # the bulk copies are parts


def _token(client) -> str:
    from .conftest import csrf_token

    return csrf_token(client, "/")
