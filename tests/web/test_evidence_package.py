"""The evidence package from the admin (signed-in users only) and from `fptrack evidence`,
on the admin's test store with a WARC file kept for a page."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from click.testing import CliRunner
from hypothesis import given, settings as hsettings, strategies as st

from tracker.evidence.package import verify_package
from tracker.evidence.warc import Exchange, exchange_warc, read_warc
from tracker.store.evidence import Evidence
from tracker.store.open import open_store
from web.catalog import ChapterCatalog
from web.evidence_cli import evidence as evidence_command
from web.evidence_package import NothingToPack, build_package, select_page, select_work_site

from .conftest import CH1, T0, fill

PAGE = "https://biquge.example/1.html"
SERVED = ("<html><body>广告" + "陈守义坐在茶馆靠窗的位置" + "</body></html>").encode("gbk")


def keep_warc(store, page: str = PAGE) -> bytes:
    data = exchange_warc(Exchange(url=page, headers=[("Content-Type", "text/html; charset=gbk")], body=SERVED,
                                  fetched_at=T0)).data
    store.put_evidence(Evidence(page=page, kind="warc", data=data, url=page, fetched_at=T0))
    return data


def test_the_package_of_a_page_holds_its_warc_report_notice_and_manifest(store):
    data = keep_warc(store)
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
    assert "<mark>" + CH1[:10] in report and "duplicate" in report and "winnow" in report
    assert "NOTICE OF COPYRIGHT INFRINGEMENT" in notice and PAGE in notice and "From: 林岚工作室" in notice
    assert manifest["selection"] == {"page": PAGE} and [m["page"] for m in manifest["matches"]] == [PAGE]
    assert manifest["pages"][0]["files"] == [warc] and packed.warnings == []


def test_a_work_on_a_site_and_a_page_without_capture(store):
    keep_warc(store)
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


def test_the_evidence_page_links_to_the_package(admin):
    html = admin.get("/matches/view", query_string={"page_key": PAGE, "chapter": "山城旧事/第1章"}).get_data(True)
    assert 'id="evidence-package"' in html and "/evidence/package?page_key=https" in html


# ----------------------------------------------------------------------------- the command


@pytest.fixture
def home(settings, tmp_path):
    s = open_store(None, settings.home)
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
    assert "1 match(es) on 1 page(s)" in made.output and "manifest SHA-256" in made.output
    ok = run(["--verify", str(out)], home)
    assert ok.exit_code == 0 and ok.output.startswith("ok: ")
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
    work = run(["--work", "山城旧事", "--site", "biquge", "-o", out, "--no-pdf"], home)
    assert work.exit_code == 0 and "2 match(es) on 2 page(s)" in work.output
    assert "warning: page 2" in work.output


@hsettings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=600))
def test_verify_on_random_files_is_a_clear_failure(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "x.zip"
    path.write_bytes(data)
    r = CliRunner().invoke(evidence_command, ["--verify", str(path)])
    assert r.exit_code == 1 and "Traceback" not in r.output
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
