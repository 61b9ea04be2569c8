"""Smoke test of bench/admin_latency.py on a store of 2,000 matches, 2 seconds per page."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from bench import admin_latency
from bench.common import BenchError

from ..conftest import ROOT, need
from .tables import table_rows as read_rows

ROWS = ["static file (floor)", "dashboard", "matches, page 1", "matches, page 20", "matches of one site, confirmed",
        "work report", "match evidence", "JSON API: matches", "sites"]


def table_rows(out: str) -> dict[str, list[str]]:
    return read_rows(out, ROWS)


@pytest.mark.slow
def test_every_page_answers_under_load(tmp_path, capsys):
    need(shutil.which("wrk") is not None,
         "wrk is not installed: scripts/system-deps test installs it (as root), or sudo apt-get install wrk")
    assert admin_latency.main(["--matches", "2000", "--duration", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert list(rows) == ROWS
    for label, (path, single, requests, _rate, p50, p95, p99, non2xx, errors) in rows.items():
        assert path.startswith("`/"), label
        assert int(requests.replace(",", "")) > 0, label
        assert (non2xx, errors) == ("0", "0"), f"{label}: {non2xx} non-2xx responses, {errors} socket errors"
        assert all(v.endswith(("ms", "µs", " s")) for v in (single, p50, p95, p99)), label
    assert (tmp_path / "admin-store-2000-v1.sqlite3").is_file()
    [report] = tmp_path.glob("admin-latency-*.md")
    assert "| dashboard |" in report.read_text(encoding="utf-8")


def test_the_store_has_what_was_asked(tmp_path):
    from tracker.store.sqlite import SQLiteStore

    made = admin_latency.build_store(tmp_path / "s.sqlite3", 300)
    store = SQLiteStore(tmp_path / "s.sqlite3")
    try:
        assert made["matches"] == store.count_matches() == 300
        counts = store.counts()
        assert counts["pages"]["done"] == made["pages"] and counts["pages"]["failed"] == made["failed_pages"]
        assert {s for s, n in counts["matches"].items() if n} == {"new", "confirmed", "dismissed"}
        for m in store.matches(limit=50):
            page, chapter = store.get_page(m.page), store.get_chapter(m.chapter)
            [span] = m.spans  # the copied text is where the span says, on both sides
            assert page.text[span["page_start"]:span["page_end"]] == \
                chapter.text[span["original_start"]:span["original_end"]]
        assert store.get_user(admin_latency.ADMIN).role == "admin"
    finally:
        store.close()
    admin_latency.organise(tmp_path / "s.sqlite3")
    admin_latency.organise(tmp_path / "s.sqlite3")  # once: a second call changes nothing
    store = SQLiteStore(tmp_path / "s.sqlite3")
    try:  # the admin reads through its organisation, which owns the most-copied works, not all
        (first, n_works, n_sites), (second, *_) = admin_latency.ORGS
        assert store.owners("user")[admin_latency.ADMIN] == first
        works = store.owners("work")
        assert sum(org == first for org in works.values()) == n_works and second in works.values()
        assert works[store.match_totals(["work"])[0]["work"]] == first
        assert sum(org == first for org in store.owners("site").values()) == n_sites
    finally:
        store.close()


def test_parse_wrk_reads_the_hook_line():
    load = admin_latency.parse_wrk("Running 2s test\nFPTRACK {\"requests\": 200, \"duration_us\": 2000000, "
                                   "\"p50\": 1500, \"p95\": 9000, \"p99\": 12000, \"non2xx\": 3, "
                                   "\"socket_errors\": 1}\n")
    assert (load.rate, load.p50, load.p95, load.non2xx, load.socket_errors) == (100.0, 0.0015, 0.009, 3, 1)
    with pytest.raises(BenchError, match="no result line"):
        admin_latency.parse_wrk("Running 2s test\n")


def test_missing_wrk_is_a_message_not_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "admin_latency.py"), "--wrk", "no-such-wrk",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "wrk was not found" in done.stderr and "apt-get install wrk" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())  # nothing was built before the check
