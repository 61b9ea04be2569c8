"""What the listing commands write: safe on a terminal whatever a title holds, exact for machines
(JSON escapes, ISO 8601 dates with their UTC offset, whole numbers as integers), in every format."""
from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import UTC, datetime, timedelta, timezone

import pytest

from clikit.common import write_records
from tracker.context import Context
from tracker.pipeline import ingest, process_queued
from tracker.registry import register_work

from ..conftest import ROOT
from .test_crawl_cli import fptrack, fptrack_in_terminal

ORIGINALS = ROOT / "samples" / "originals"
# Retitles the terminal window (OSC ... BEL), then a C1 CSI, then a right-to-left override.
EVIL = "Evil\x1b]0;pwned\x07\x9b6n\u202e书"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
FORMATS = ["table", "csv", "jsonl", "json"]
LISTINGS = [("works",), ("report", EVIL), ("matches",), ("sites", "list"), ("stats",)]


@pytest.fixture
def evil(settings, tmp_path):
    """A work titled EVIL whose first chapter a page on site "copies" copies; a configured site."""
    chapter = sorted(ORIGINALS.glob("*.txt"))[0]
    ctx = Context(settings)
    try:
        register_work(ctx, EVIL, str(ORIGINALS), author="作者\x1b[2J")
        page = tmp_path / "copy-1.txt"
        shutil.copy(chapter, page)
        ingest(ctx, [str(page)], site="copies")
        assert process_queued(ctx)["done"] == 1
        assert ctx.store.matches(work=EVIL)
    finally:
        ctx.close()
    assert fptrack(settings, "sites", "add", "copies", "http://127.0.0.1:9/").returncode == 0
    r = fptrack(settings, "notify", "add", "--email", "rights@example.com", "--work", EVIL)
    assert r.returncode == 0, r.stderr
    return settings


def records(fmt: str, text: str) -> list[dict]:
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    if fmt == "json":
        return json.loads(text)
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("args", LISTINGS, ids=lambda a: " ".join(a)[:12])
def test_every_listing_in_every_format_cannot_steer_a_terminal(evil, args, fmt):
    rc, shown = fptrack_in_terminal(evil, *args, "--format", fmt)
    assert rc == 0, shown
    assert not any(c in shown for c in RAW), repr(shown)
    if args[0] in ("works", "matches") and fmt in ("jsonl", "json"):
        assert "Evil\\u001b]0;pwned\\u0007\\u009b6n\\u202e书" in shown  # JSON's own escapes: still exact
    elif args[0] in ("works", "matches"):
        assert "Evil\\x1b]0;pwned\\x07\\x9b6n\\u202e书" in shown  # visible escapes


@pytest.mark.parametrize("fmt", ["table", "csv", "jsonl"])
def test_the_subscriptions_listing_cannot_steer_a_terminal(evil, fmt):
    rc, shown = fptrack_in_terminal(evil, "notify", "list", "--format", fmt)
    assert rc == 0 and "rights@example.com" in shown and "pwned" in shown, shown
    assert not any(c in shown for c in RAW), repr(shown)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_piped_machine_formats_keep_the_exact_title(evil, fmt):
    for args, key in ((("works",), "work"), (("matches",), "work")):
        r = fptrack(evil, *args, "--format", fmt)
        assert r.returncode == 0, r.stderr
        got = {rec[key] for rec in records(fmt, r.stdout)}
        assert got == {EVIL}
    if fmt != "csv":
        assert "\x9b" not in r.stdout and "\x1b" not in r.stdout  # JSON escapes them even in a pipe


def _utc(value: str) -> datetime:
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert when.utcoffset() == timedelta(0), value
    return when


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_dates_in_machine_formats_are_iso_8601_with_their_utc_offset(evil, fmt):
    before = datetime.now(UTC) - timedelta(minutes=10)
    (work,) = records(fmt, fptrack(evil, "works", "--format", fmt).stdout)
    assert _utc(work["registered"]) > before
    rows = records(fmt, fptrack(evil, "report", EVIL, "--format", fmt).stdout)
    copied = [r for r in rows if int(r["copies"])]
    assert copied and all(_utc(r["first_seen"]) > before and _utc(r["last_seen"]) > before for r in copied)
    (match,) = records(fmt, fptrack(evil, "matches", "--format", fmt).stdout)
    _utc(match["first_seen"])
    (site,) = records(fmt, fptrack(evil, "sites", "list", "--format", fmt).stdout)
    assert _utc(site["next_crawl"]) > before


def test_stats_in_every_format_carries_the_same_counts(evil):
    table = fptrack(evil, "stats").stdout
    assert table.startswith("works 1, chapters ")
    chapters = int(table.split("chapters ")[1].split()[0])
    for fmt in ("json", "jsonl", "csv"):
        r = fptrack(evil, "stats", "--format", fmt)
        assert r.returncode == 0, r.stderr
        got = {(rec["group"], rec["status"]): rec["count"] for rec in records(fmt, r.stdout)}
        assert got[("works", "")] in (1, "1") and int(got[("chapters", "")]) == chapters
        assert int(got[("pages", "done")]) == 1 and int(got[("matches", "new")]) == 1
        if fmt != "csv":
            assert all(isinstance(v, int) for v in got.values())


def test_json_writes_whole_numbers_as_integers_and_naive_dates_as_utc():
    out = io.StringIO()
    write_records([{"n": 4070.0, "share": 0.25, "when": datetime(2026, 11, 27, 3, 0), "nested": [2.0, {"k": 1.0}]}],
                  "jsonl", ["n"], out)
    rec = json.loads(out.getvalue())
    assert out.getvalue().startswith('{"n": 4070, "share": 0.25, "when": "2026-11-27T03:00:00+00:00"')
    assert rec["nested"] == [2, {"k": 1}] and isinstance(rec["nested"][0], int)
    out = io.StringIO()
    write_records([{"n": 4070.0, "when": datetime(2026, 11, 27, 3, 0, tzinfo=timezone(timedelta(hours=8)))}],
                  "csv", ["n", "when"], out)
    assert out.getvalue().splitlines()[1] == "4070,2026-11-27T03:00:00+08:00"
    out = io.StringIO()
    write_records([{"n": 4070.0, "t": EVIL}], "json", ["n", "t"], out)
    assert json.loads(out.getvalue()) == [{"n": 4070, "t": EVIL}] and "\x1b" not in out.getvalue()
