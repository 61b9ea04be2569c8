"""The evidence package from the admin (signed-in users only) and from `fptrack evidence`,
on the admin's test store with a WARC file kept for a page."""
from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tracker.evidence.package import verify_package
from tracker.evidence.warc import Exchange, exchange_warc, read_warc
from tracker.store import MatchRecord, Page
from tracker.store.evidence import Evidence
from tracker.store.open import store_at
from web.evidence.cli import evidence as evidence_command
from web.evidence.package import NothingToPack, build_package, select_page, select_work_site
from web.reports.catalog import ChapterCatalog

from .conftest import CH1, T0, fill

PAGE = "https://biquge.example/1.html"
SERVED = ("<html><body>广告" + "陈守义坐在茶馆靠窗的位置" + "</body></html>").encode("gbk")


def confirm_both(store) -> None:
    for page, chapter in ((PAGE, "山城旧事/第1章"), ("https://biquge.example/2.html", "山城旧事/第2章")):
        store.set_match_status(page, chapter, "confirmed", by="t")


def keep_warc(store, page: str = PAGE) -> bytes:
    data = exchange_warc(Exchange(url=page, headers=[("Content-Type", "text/html; charset=gbk")], body=SERVED,
                                  fetched_at=T0)).data
    store.put_evidence(Evidence(page=page, kind="warc", data=data, url=page, fetched_at=T0))
    return data


def test_the_package_of_a_page_holds_its_warc_report_notice_and_manifest(store):
    data = keep_warc(store)
    store.set_match_status(PAGE, "山城旧事/第1章", "confirmed", by="t")
    out = io.BytesIO()
    packed = build_package(store, ChapterCatalog().outline(store), select_page(store, PAGE), out, pdf=False,
                           sender="林岚工作室")
    assert verify_package(io.BytesIO(out.getvalue())).ok
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        (warc,) = [n for n in z.namelist() if n.endswith(".warc.gz")]
        assert z.read(warc) == data and read_warc(z.read(warc))[1].payload == SERVED
        report = z.read("report.html").decode()
        notice = z.read("notice.txt").decode()
        manifest = json.loads(z.read("manifest.json"))
    assert "<mark>" + CH1[:10] in report and "full copy" in report and "winnow" in report
    assert "NOTICE OF COPYRIGHT INFRINGEMENT" in notice and PAGE in notice and "From: 林岚工作室" in notice
    assert manifest["selection"] == {"page": PAGE} and [m["page"] for m in manifest["matches"]] == [PAGE]
    assert manifest["pages"][0]["files"] == [warc] and packed.warnings == []


def test_a_work_on_a_site_and_a_page_without_capture(store):
    keep_warc(store)
    confirm_both(store)
    out = io.BytesIO()
    selection = select_work_site(store, "山城旧事", "biquge")
    assert selection.pages == ["https://biquge.example/1.html", "https://biquge.example/2.html"]
    packed = build_package(store, ChapterCatalog().outline(store), selection, out, pdf=False)
    assert packed.warnings == ["page 2 (https://biquge.example/2.html): no capture is kept"]
    assert verify_package(io.BytesIO(out.getvalue())).ok
    with pytest.raises(NothingToPack, match="no match of the work"):
        select_work_site(store, "山城旧事", "nowhere")
    with pytest.raises(NothingToPack, match="no page"):
        select_page(store, "https://nowhere.example/")


def test_a_page_with_no_confirmed_match_gets_no_notice_but_the_reason(store):
    keep_warc(store)
    out = io.BytesIO()
    packed = build_package(store, ChapterCatalog().outline(store), select_page(store, PAGE), out, pdf=False)
    why = (f"no confirmed matches on the page {PAGE} (1 new match awaits review): confirm them on the Matches page "
           "or with `fptrack set-status PAGE CHAPTER confirmed` first")
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        notice = z.read("notice.txt").decode()
        manifest = json.loads(z.read("manifest.json"))
    assert notice == f"No notice: {why}.\n" and "NOTICE OF COPYRIGHT" not in notice
    assert packed.warnings == [f"notice.txt names no copy: {why}"] and manifest["warnings"] == packed.warnings


def blog_excerpt(store) -> str:
    """A blog review quoting a sentence of chapter 1, confirmed: an excerpt, which may be fair use."""
    blog = "https://blog.example/review.html"
    store.upsert_page(Page(key=blog, url=blog, site="biquge", text="书评：" + CH1[:12] + "。", fetched_at=T0))
    store.upsert_match(MatchRecord(page=blog, chapter="山城旧事/第1章", work="山城旧事", site="biquge",
                                   similarity=0.2, containment=0.15, page_share=0.6, verdict="excerpt",
                                   scores={"winnow": 0.15, "longest_run": 12},
                                   spans=[{"page_start": 3, "page_end": 15, "original_start": 0, "original_end": 12}],
                                   first_seen=T0, last_seen=T0))
    store.set_match_status(blog, "山城旧事/第1章", "confirmed", by="t")
    return blog


def test_a_work_on_a_site_packs_its_confirmed_copies_and_excerpts_only_when_included(store):
    blog = blog_excerpt(store)
    store.set_match_status(PAGE, "山城旧事/第1章", "confirmed", by="t")  # page 2 stays new
    outline = ChapterCatalog().outline(store)
    selection = select_work_site(store, "山城旧事", "biquge")
    assert selection.pages == [PAGE]
    out = io.BytesIO()
    build_package(store, outline, selection, out, pdf=False, sender="林岚工作室")
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        notice, report = z.read("notice.txt").decode(), z.read("report.html").decode()
    assert PAGE in notice and blog not in notice and "biquge.example/2.html" not in notice
    assert "biquge.example/2.html" not in report and blog not in report
    with_excerpts = select_work_site(store, "山城旧事", "biquge", include_excerpts=True)
    assert with_excerpts.pages == [PAGE, blog]
    out = io.BytesIO()
    build_package(store, outline, with_excerpts, out, pdf=False, include_excerpts=True)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        notice = z.read("notice.txt").decode()
    assert blog in notice and "(excerpt)" in notice and PAGE in notice


def test_the_package_of_a_page_quoted_in_a_review_names_it_only_when_included(store):
    blog = blog_excerpt(store)
    outline = ChapterCatalog().outline(store)
    out = io.BytesIO()
    packed = build_package(store, outline, select_page(store, blog), out, pdf=False)
    assert packed.warnings[-1] == (
        f"notice.txt names no copy: no confirmed full copy or part on the page {blog}, only 1 confirmed excerpt "
        "(a short quotation, which may be fair use): add --include-excerpts to name it")
    out = io.BytesIO()
    packed = build_package(store, outline, select_page(store, blog), out, pdf=False, include_excerpts=True)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        assert blog in z.read("notice.txt").decode()
    assert not any("notice.txt" in w for w in packed.warnings)


def test_the_report_opens_with_what_was_copied_in_words_and_keeps_the_scores_under_technical_details(store):
    import re

    out = io.BytesIO()
    build_package(store, ChapterCatalog().outline(store), select_page(store, PAGE), out, pdf=False)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        report = z.read("report.html").decode()
    sentence = (f"Full copy: 100% of the chapter appears on this page, in 1 passage of {len(CH1)} characters; "
                "the page is 90% this chapter.")
    assert report.count(sentence) == 2  # in "What was copied" and at the head of the match's section
    assert report.index(sentence) < report.index("<h2>Summary</h2>")
    details = re.findall(r"<details class=\"technical\">(.*?)</details>", report, re.S)
    assert len(details) == 1 and "<details class=\"technical\" open" not in report
    assert "<summary>Technical details</summary>" in details[0]
    outside = report.replace(details[0], "")
    for name in ("simhash_distance", "minhash_jaccard", "winnow"):
        assert name not in outside and f"<th>{name}</th>" in details[0]
    assert "<th>simhash_distance</th><td class=\"n\">3</td><td>bits that differ" in details[0]
    assert "<td>full copy</td>" in outside


def test_the_report_escapes_what_pages_hold(store):
    out = io.BytesIO()
    build_package(store, ChapterCatalog().outline(store), select_page(store, "evil-1"), out, pdf=False)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        report = z.read("report.html").decode()
    assert "<script>alert(1)</script>" not in report and "&lt;script&gt;" in report
    assert '"><img src=x onerror' not in report


def test_anonymous_visitors_are_sent_to_sign_in(client):
    r = client.get(f"/evidence/package?page_key={PAGE}")
    assert r.status_code == 302 and "/login" in r.headers["Location"]


def test_signed_in_users_download_the_zip(viewer, store, monkeypatch):
    keep_warc(store)
    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")  # no browser: the zip comes without the PDF
    r = viewer.get("/evidence/package", query_string={"page_key": PAGE})
    assert r.status_code == 200 and r.mimetype == "application/zip"
    assert r.headers["Content-Disposition"].startswith('attachment; filename="evidence-')
    body = r.get_data()
    assert int(r.headers["Content-Length"]) == len(body)
    assert verify_package(io.BytesIO(body)).ok
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        assert "report.pdf" not in z.namelist()
        assert any("no report.pdf" in w for w in json.loads(z.read("manifest.json"))["warnings"])
    assert viewer.get("/evidence/package?page_key=https://nowhere.example/").status_code == 404
    assert viewer.get("/evidence/package").status_code == 400


def test_the_web_package_takes_sender_contact_and_excerpts_as_the_command_does(viewer, store, monkeypatch):
    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")
    blog = blog_excerpt(store)

    def notice(**query) -> str:
        r = viewer.get("/evidence/package", query_string=query)
        assert r.status_code == 200, r.get_data(as_text=True)
        with zipfile.ZipFile(io.BytesIO(r.get_data())) as z:
            return z.read("notice.txt").decode()

    store.set_match_status(PAGE, "山城旧事/第1章", "confirmed", by="t")
    text = notice(page_key=PAGE, sender="林岚工作室", contact="rights@example.com")
    assert "From: 林岚工作室\nContact: rights@example.com" in text and "Signed: 林岚工作室" in text
    assert "[name of the rights holder]" in notice(page_key=PAGE)  # the default organisation has no name to give
    assert notice(page_key=blog).startswith("No notice: no confirmed full copy or part on the page")
    assert blog in notice(page_key=blog, include_excerpts="1").split("Copies:")[0]
    assert viewer.get("/evidence/package", query_string={"page_key": blog, "include_excerpts": "x"}).status_code == 400


def test_the_command_includes_excerpts_when_asked(home, tmp_path):
    s = store_at(None, Path(home["FPT_HOME"]))
    blog_excerpt(s)
    s.close()
    out = str(tmp_path / "p.zip")
    left_out = run(["--work", "山城旧事", "--site", "biquge", "-o", out, "--no-pdf"], home)
    assert left_out.exit_code == 1 and "only 1 confirmed excerpt" in left_out.output
    assert "add --include-excerpts to name it" in left_out.output
    named = run(["--work", "山城旧事", "--site", "biquge", "-o", out, "--no-pdf", "--include-excerpts"], home)
    assert named.exit_code == 0 and "1 match on 1 page," in named.output
    with zipfile.ZipFile(out) as z:
        assert "blog.example/review.html" in z.read("notice.txt").decode()


def test_scripts_get_the_package_from_the_api_with_the_same_options(client, store, monkeypatch):
    from .test_auth import basic

    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")
    blog = blog_excerpt(store)
    r = client.get("/api/evidence/package", query_string={"page_key": blog, "sender": "林岚工作室",
                                                           "include_excerpts": "1"}, headers=basic("viewer"))
    assert r.status_code == 200 and r.mimetype == "application/zip"
    assert verify_package(io.BytesIO(r.get_data())).ok
    with zipfile.ZipFile(io.BytesIO(r.get_data())) as z:
        notice = z.read("notice.txt").decode()
    assert "From: 林岚工作室" in notice and blog in notice and "(excerpt)" in notice
    missing = client.get("/api/evidence/package", query_string={"page_key": "https://nowhere.example/"},
                         headers=basic("viewer"))
    assert missing.status_code == 404 and missing.is_json and "no page" in missing.get_data(as_text=True)
    assert client.get("/api/evidence/package", query_string={"page_key": blog}).status_code == 401


def test_the_evidence_page_links_to_the_package(admin):
    html = admin.get("/matches/view", query_string={"page_key": PAGE, "chapter": "山城旧事/第1章"}).get_data(True)
    assert 'id="evidence-package"' in html and 'action="/evidence/package"' in html
    assert f'<input type="hidden" name="page_key" value="{PAGE}">' in html


# ----------------------------------------------------------------------------- the command


@pytest.fixture
def home(settings, tmp_path):
    s = store_at(None, settings.home)
    fill(s)
    keep_warc(s)
    s.close()
    return {"FPT_HOME": str(settings.home), "FPT_CHROMIUM": "/nonexistent/chromium"}


def run(args, env):
    r = CliRunner().invoke(evidence_command, args, env=env)
    assert "Traceback" not in r.output and not isinstance(r.exception, (AttributeError, TypeError, KeyError))
    return r


def test_the_command_makes_and_checks_a_package(home, tmp_path):
    assert "Example:" in run(["--help"], home).output
    out = tmp_path / "p.zip"
    made = run([PAGE, "-o", str(out), "--no-pdf"], home)
    assert made.exit_code == 0, made.output
    assert "1 match on 1 page," in made.output and "manifest SHA-256" in made.output
    ok = run(["--verify", str(out)], home)
    assert ok.exit_code == 0 and ok.output.startswith("ok: ")
    counts = re.search(r"(\d+) (files?) and (\d+) (WARC records?) match", ok.output)
    assert counts and [counts[2], counts[4]] == [  # the nouns agree with their counts
        "file" if counts[1] == "1" else "files", "WARC record" if counts[3] == "1" else "WARC records"]
    raw = bytearray(out.read_bytes())
    raw[len(raw) // 3] ^= 1
    out.write_bytes(bytes(raw))
    bad = run(["--verify", str(out)], home)
    assert bad.exit_code == 1 and "FAIL: " in bad.output


def test_the_command_says_what_is_wrong(home, tmp_path):
    out = str(tmp_path / "p.zip")
    assert run([PAGE], home).exit_code == 2  # no -o
    assert run([PAGE, "-o", out, "--work", "w"], home).exit_code == 2
    assert run(["-o", out, "--work", "山城旧事"], home).exit_code == 2
    missing = run(["https://nowhere.example/", "-o", out, "--no-pdf"], home)
    assert missing.exit_code == 1 and "no page" in missing.output
    no_browser = run([PAGE, "-o", out], home)  # a PDF asked for, no chromium: the fix is named
    assert no_browser.exit_code == 1 and "--no-pdf" in no_browser.output
    assert not (tmp_path / "p.zip").exists() and not list(tmp_path.glob(".evidence-*"))  # nothing half-made
    unreviewed = run(["--work", "山城旧事", "--site", "biquge", "-o", out, "--no-pdf"], home)
    assert unreviewed.exit_code == 1 and not (tmp_path / "p.zip").exists()
    assert unreviewed.output == ("Error: no confirmed matches of 《山城旧事》 on biquge (2 new matches await review): "
                                 "confirm them on the Matches page or with `fptrack set-status PAGE CHAPTER confirmed` "
                                 "first\n")
    s = store_at(None, Path(home["FPT_HOME"]))
    confirm_both(s)
    s.close()
    work = run(["--work", "山城旧事", "--site", "biquge", "-o", out, "--no-pdf"], home)
    assert work.exit_code == 0 and "2 matches on 2 pages," in work.output
    assert "warning: page 2" in work.output


@hsettings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=600))
def test_verify_on_random_files_is_a_clear_failure(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "x.zip"
    path.write_bytes(data)
    r = CliRunner().invoke(evidence_command, ["--verify", str(path)])
    assert r.exit_code == 1 and "Traceback" not in r.output
    if r.output.startswith("Error: "):  # no package at all: one line that says what the file is
        assert r.output.startswith(("Error: not a zip file: ", "Error: not an evidence package: "))
        assert r.output.count("\n") == 1, r.output
    else:
        assert r.output.startswith("FAIL: ") and r.output.rstrip().endswith("this package is not as it was made")


def test_the_pdf_report_embeds_a_chinese_font(store):
    import re

    from tracker.evidence.pdf import chromium, cjk_font_installed

    from ..conftest import need

    need(chromium() is not None, "chromium is not installed (scripts/system-deps test)")
    need(cjk_font_installed(), "no Chinese font: apt-get install fonts-noto-cjk (the PDF would show boxes)")
    out = io.BytesIO()
    packed = build_package(store, ChapterCatalog().outline(store), select_page(store, PAGE), out, pdf=True)
    assert not any("report.pdf" in w for w in packed.warnings)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as z:
        pdf = z.read("report.pdf")
    fonts = set(re.findall(rb"/FontName\s*/([A-Za-z0-9+_-]+)", pdf))
    assert any(re.search(rb"CJK|Han|WenQuanYi|Hei|Song|Ming", f) for f in fonts), fonts
