"""tracker.evidence: WARC records written and read back by warcio, the size limit, the
retention of evidence, and packages whose every byte --verify checks (fuzzed with random zips)."""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from tracker.evidence.package import FORMAT, MANIFEST, PackageError, check_name, verify_package, write_package
from tracker.evidence.retention import expire_evidence
from tracker.evidence.warc import Exchange, WarcError, exchange_warc, read_warc, rendered_warc, sha256_digest
from tracker.store import MatchRecord, Page
from tracker.store.evidence import Evidence
from tracker.store.sqlite import SQLiteStore

T0 = datetime(2026, 11, 20, 6, 10, 30, tzinfo=UTC)
BODY = "<html><body><div id=content>陈守义坐在茶馆靠窗的位置。</div></body></html>".encode("gbk")


def exchange(body: bytes = BODY, **kw) -> Exchange:
    kw.setdefault("headers", [("Content-Type", "text/html; charset=gbk"), ("Set-Cookie", "a=1"),
                              ("Set-Cookie", "b=2"), ("Transfer-Encoding", "chunked")])
    return Exchange(url="https://www.biquge.example/book/1.html?from=list", method="GET",
                    request_headers=[("User-Agent", "fptrack"), ("Accept-Encoding", "gzip")], status=200,
                    reason="OK", body=body, fetched_at=T0, ip="203.0.113.7", **kw)


# ----------------------------------------------------------------------------- WARC


def test_warcio_reads_back_the_exchange_byte_for_byte_with_sha256_digests():
    captured = exchange_warc(exchange())
    assert captured.data[:2] == b"\x1f\x8b" and not captured.truncated
    assert captured.body_sha256 == hashlib.sha256(BODY).hexdigest()
    records = list(ArchiveIterator(io.BytesIO(captured.data), check_digests=True))
    assert [r.rec_type for r in records] == ["request", "response"]
    request, response = read_warc(captured.data)
    assert request.http_status == "GET /book/1.html?from=list HTTP/1.1"
    assert ("Host", "www.biquge.example") in request.http_headers and ("User-Agent", "fptrack") in request.http_headers
    assert response.payload == BODY
    assert response.http_status == "HTTP/1.1 200 OK"
    assert response.http_headers.count(("Set-Cookie", "a=1")) == 1 and ("Set-Cookie", "b=2") in response.http_headers
    # The body is stored de-chunked: a reader must not try to de-chunk it again.
    assert ("X-Archive-Orig-Transfer-Encoding", "chunked") in response.http_headers
    assert response.date == "2026-11-20T06:10:30Z" == request.date
    assert response.headers["WARC-Payload-Digest"] == sha256_digest(BODY)
    assert response.headers["WARC-Block-Digest"].startswith("sha256:")
    assert response.headers["WARC-IP-Address"] == "203.0.113.7"
    assert response.headers["WARC-Concurrent-To"] == request.headers["WARC-Record-ID"]


def test_a_body_over_the_limit_is_cut_and_says_its_whole_length_and_hash():
    body = bytes(range(256)) * 20
    captured = exchange_warc(exchange(body), max_bytes=1024)
    assert captured.truncated and captured.body_length == len(body)
    (_, response) = read_warc(captured.data)
    assert response.payload == body[:1024]
    assert response.headers["WARC-Truncated"] == "length"
    assert response.headers["FPT-Body-Length"] == str(len(body))
    assert response.headers["FPT-Body-SHA256"] == hashlib.sha256(body).hexdigest()
    assert response.headers["WARC-Payload-Digest"] == sha256_digest(body[:1024])  # of what is kept
    whole = exchange_warc(exchange(body), max_bytes=len(body))
    assert not whole.truncated and read_warc(whole.data)[1].payload == body


def test_a_body_cut_before_it_came_keeps_the_whole_bodys_length():
    body = b"x" * 5000
    cut = exchange(body[:1024], body_length=len(body), body_sha256=hashlib.sha256(body).hexdigest())
    captured = exchange_warc(cut, max_bytes=1024)
    assert captured.truncated and captured.body_length == 5000
    assert read_warc(captured.data)[1].headers["FPT-Body-SHA256"] == hashlib.sha256(body).hexdigest()


def test_the_rendered_dom_is_a_conversion_record_after_the_exchange():
    dom = "<div id=content>陈守义</div>".encode()
    data = exchange_warc(exchange()).data + rendered_warc("https://www.biquge.example/book/1.html", dom, T0).data
    assert [r.type for r in read_warc(data)] == ["request", "response", "conversion"]
    assert read_warc(data)[2].payload == dom


@pytest.mark.parametrize("damage", ["flip", "cut", "empty", "garbage"])
def test_a_damaged_warc_file_is_refused_with_a_reason(damage):
    data = exchange_warc(exchange()).data
    import gzip

    raw = gzip.decompress(data)
    bad = {"flip": raw.replace(BODY[:8], bytes([BODY[0] ^ 1]) + BODY[1:8]),
           "cut": data[: len(data) - 7], "empty": b"", "garbage": b"WARC/1.0\r\nnonsense"}[damage]
    with pytest.raises(WarcError):
        read_warc(bad)


# ----------------------------------------------------------------------------- packages


WARC = exchange_warc(exchange()).data  # once: each WARC record has its own random id


def small_package() -> bytes:
    out = io.BytesIO()
    write_package(out, [("pages/001/a.warc.gz", WARC), ("report.html", "<p>山城</p>".encode()),
                        ("notice.txt", b"NOTICE")], {"pages": []}, created_at=T0)
    return out.getvalue()


def test_a_package_verifies_and_names_its_manifest():
    data = small_package()
    result = verify_package(io.BytesIO(data))
    assert result.ok and result.files == 3 and result.warc_records == 2
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        raw = z.read(MANIFEST)
        manifest = json.loads(raw)
    assert result.manifest_sha256 == hashlib.sha256(raw).hexdigest()
    assert manifest["format"] == FORMAT and manifest["created_at"] == T0.isoformat()
    assert [f["name"] for f in manifest["files"]] == ["pages/001/a.warc.gz", "report.html", "notice.txt"]


def test_the_same_files_make_the_same_zip():
    assert small_package() == small_package()


def test_any_changed_byte_of_the_zip_fails_the_check():
    data = small_package()
    undetected = []
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0x20
        if verify_package(io.BytesIO(bytes(flipped))).ok:
            undetected.append(i)
    assert not undetected, f"bytes whose change --verify missed: {undetected[:20]}"


def _rezip(data: bytes, drop: str = "", add: tuple[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != drop:
                dst.writestr(info, src.read(info))
        if add:
            dst.writestr(*add)
    return out.getvalue()


def test_missing_and_extra_files_are_named():
    data = small_package()
    missing = verify_package(io.BytesIO(_rezip(data, drop="notice.txt")))
    assert missing.problems == ["missing file: notice.txt"]
    extra = verify_package(io.BytesIO(_rezip(data, add=("evil.txt", b"x"))))
    assert extra.problems == ["extra file: evil.txt (not in the manifest)"]
    no_manifest = verify_package(io.BytesIO(_rezip(data, drop=MANIFEST)))
    assert not no_manifest.ok and "manifest.json" in no_manifest.problems[0]


def test_file_names_in_a_package_cannot_climb_out():
    for bad in ("../x", "/etc/passwd", "a/../../b", "C:\\x", "a\\b", "", ".hidden", "manifest.json", "a/" * 6 + "b"):
        with pytest.raises(PackageError):
            check_name(bad)
    with pytest.raises(PackageError):
        write_package(io.BytesIO(), [("../../evil", b"x")], {})
    assert check_name("pages/001/0123abcd.warc.gz") == "pages/001/0123abcd.warc.gz"
    # A package whose manifest lists such a name is refused on that line.
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("../evil", b"x")
        z.writestr(MANIFEST, json.dumps({"format": FORMAT, "files": [
            {"name": "../evil", "sha256": hashlib.sha256(b"x").hexdigest(), "size": 1}]}))
    problems = verify_package(io.BytesIO(out.getvalue())).problems
    assert any("bad file name" in p for p in problems)


def test_a_missing_or_non_zip_file_is_one_line(tmp_path):
    assert verify_package(str(tmp_path / "none.zip")).problems == [f"no such file: {tmp_path / 'none.zip'}"]
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    (problem,) = verify_package(str(tmp_path / "x.zip")).problems
    assert problem.startswith("not a zip file: ")


names = st.sampled_from(["manifest.json", "report.html", "a.warc.gz", "pages/001/b.warc.gz", "../x", "x.png", "é"])
entries = st.lists(st.tuples(names, st.binary(max_size=200)), max_size=5)
manifests = st.one_of(
    st.binary(max_size=100),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                 max_leaves=10).map(lambda v: json.dumps(v).encode()),
    st.lists(st.fixed_dictionaries({"name": names, "sha256": st.text("0123456789abcdef", min_size=64, max_size=64),
                                     "size": st.integers(-1, 300)}), max_size=4)
    .map(lambda files: json.dumps({"format": FORMAT, "files": files}).encode()))


@pytest.mark.filterwarnings("ignore:Duplicate name")  # duplicates are part of the fuzz
@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=entries, manifest=manifests, compress=st.booleans())
def test_random_zips_never_pass_and_never_raise(entries, manifest, compress):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(name, data)
        z.writestr(MANIFEST, manifest)
    result = verify_package(io.BytesIO(out.getvalue()))
    assert not result.ok
    assert all(isinstance(p, str) and p and "\n" not in p for p in result.problems)


@hsettings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2000), cut=st.integers(0, 5000), flips=st.lists(st.integers(0, 5000), max_size=4))
def test_random_and_damaged_bytes_are_problems_not_tracebacks(data, cut, flips):
    package = bytearray(small_package())
    for f in flips:
        package[f % len(package)] ^= 0xFF
    for candidate in (data, bytes(package[:cut]), bytes(package)):
        result = verify_package(io.BytesIO(candidate))
        assert isinstance(result.problems, list)
        if candidate != small_package():
            assert not result.ok


# ----------------------------------------------------------------------------- retention


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "store.sqlite3")
    yield s
    s.close()


def _keep(store, key: str) -> None:
    store.put_evidence(Evidence(page=key, kind="warc", data=exchange_warc(exchange()).data + key.encode(),
                                url=key, fetched_at=T0))


def test_evidence_outlives_its_page_by_the_days_set(store, tmp_path):
    store.upsert_page(Page(key="https://a.example/1", text="x", url="https://a.example/1", site="a"))
    _keep(store, "https://a.example/1")
    assert expire_evidence(store, 30, at=T0).removed == 0
    assert store.delete_page("https://a.example/1")
    assert expire_evidence(store, 30, at=T0 + timedelta(days=1)).marked == 1
    assert expire_evidence(store, 30, at=T0 + timedelta(days=30)).removed == 0  # 29 days gone
    assert store.evidence("https://a.example/1")
    assert expire_evidence(store, 30, at=T0 + timedelta(days=31, minutes=1)).removed == 1
    assert store.evidence("https://a.example/1") == []
    assert not list((tmp_path / "evidence").rglob("*.warc.gz"))  # the file went with its record


def test_zero_days_keeps_evidence_as_long_as_the_page_and_no_longer(store):
    store.upsert_page(Page(key="https://a.example/2", text="x", url="https://a.example/2", site="a"))
    _keep(store, "https://a.example/2")
    _keep(store, "https://a.example/gone")
    store.upsert_match(MatchRecord(page="https://a.example/2", chapter="w/1", work="w", site="a", similarity=1,
                                   containment=1, page_share=1, verdict="duplicate"))
    store.set_match_status("https://a.example/2", "w/1", "removed", by="recheck")
    assert expire_evidence(store, 0, at=T0 + timedelta(days=900)).removed == 1  # the gone one only
    assert store.evidence("https://a.example/2")


def test_a_copy_marked_removed_keeps_its_evidence_for_the_days_set(store):
    store.upsert_page(Page(key="https://a.example/3", text="x", url="https://a.example/3", site="a"))
    _keep(store, "https://a.example/3")
    for chapter in ("w/1", "w/2"):
        store.upsert_match(MatchRecord(page="https://a.example/3", chapter=chapter, work="w", site="a",
                                       similarity=1, containment=1, page_share=1, verdict="duplicate"))
    store.set_match_status("https://a.example/3", "w/1", "removed", by="recheck")
    later = datetime.now(UTC) + timedelta(days=400)
    assert expire_evidence(store, 365, at=later).removed == 0  # w/2 is still up
    store.set_match_status("https://a.example/3", "w/2", "removed", by="recheck")
    assert expire_evidence(store, 365, at=datetime.now(UTC) + timedelta(days=300)).removed == 0
    assert expire_evidence(store, 365, at=later).removed == 1
