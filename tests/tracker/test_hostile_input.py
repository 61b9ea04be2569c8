"""Hostile and damaged input through the tracker: a bad record never stops a batch, site names
have one spelling, and what a site owner wrote cannot run in a spreadsheet or steer a terminal."""
import csv
import io
import json

import pytest
from click.testing import CliRunner

from fingerprint.errors import InputError
from fptrack.cli import main
from tracker.pipeline import ingest, process_queued
from tracker.registry import register_work
from tracker.store import BadRecord, Page

from .conftest import SAMPLES

CHAPTER3 = (SAMPLES / "originals" / "山城旧事-第三章.txt").read_text(encoding="utf-8")
NEWS = (SAMPLES / "pages" / "unrelated-news.txt").read_text(encoding="utf-8")


def run(*args, env):
    r = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert "Traceback" not in r.output and not isinstance(r.exception, (UnicodeError, TypeError)), r.exception
    return r


def jsonl(path, *records):
    # Records as strings, so that a \ud800 escape reaches the file as written.
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path


def test_a_lone_surrogate_in_one_record_stops_nothing(settings, tmp_path):
    env = {"FPT_HOME": str(settings.home)}
    run("add-work", "山城旧事", SAMPLES / "originals", env=env)
    text = json.dumps(CHAPTER3, ensure_ascii=True)[1:-1]
    pages = jsonl(tmp_path / "p.jsonl",
                  '{"id": "before", "text": "%s"}' % text,
                  '{"id": "bad", "text": "%s\\ud800", "title": "\\udfff"}' % text,
                  '{"id": "after", "text": "%s"}' % text)
    r = run("ingest", pages, "-v", env=env)
    assert r.exit_code == 0, r.output
    assert "3 pages queued" in r.output and "3 pages done, 0 failed" in r.output
    assert "2 bad characters replaced with U+FFFD in 1 input" in r.output
    assert f"replaced 2 bad characters with U+FFFD in {pages}:2" in r.output  # the record, by its line
    recs = [json.loads(x) for x in run("matches", "--format", "jsonl", env=env).output.splitlines()]
    assert {x["page"] for x in recs} == {"before", "bad", "after"}


def test_add_work_replaces_lone_surrogates_and_says_so(settings, tmp_path):
    env = {"FPT_HOME": str(settings.home)}
    text = json.dumps(CHAPTER3, ensure_ascii=True)[1:-1]
    book = jsonl(tmp_path / "book.jsonl", '{"id": "一", "text": "%s"}' % text,
                 '{"id": "二\\ud800", "text": "%s\\udc00"}' % text, '{"id": "三", "text": "%s"}' % text)
    r = run("add-work", "书\udcff", book, "-v", env=env)  # a title that was not valid UTF-8 in argv
    assert r.exit_code == 0, r.output
    assert "书\ufffd: 3 chapters (3 new" in r.output
    assert "3 bad characters replaced with U+FFFD in 2 inputs" in r.output


def test_bad_records_are_reported_with_their_line_and_the_batch_goes_on(ctx, tmp_path):
    pages = jsonl(tmp_path / "p.jsonl",
                  json.dumps({"id": "a", "text": NEWS}),
                  json.dumps({"id": "b", "text": NEWS + "b", "site": "evil\x1b[2J"}),
                  json.dumps({"id": "c", "text": NEWS + "c", "site": "  biquge  "}))
    r = ingest(ctx, [str(pages)])
    assert r.queued == ["a", "c"]
    (skip,) = r.read.skipped
    assert skip.source == f"{pages}:2" and skip.reason.startswith("not stored: bad site name")
    assert r.read.documents == 2 and "skipped 1: 1 not stored" in r.read.summary()
    assert ctx.store.get_page("c").site == "biquge"


def test_a_record_the_store_refuses_is_skipped_not_fatal(ctx, tmp_path, monkeypatch):
    upsert = ctx.store.upsert_page

    def refuse_b(page):
        if page.key == "b":
            raise BadRecord("MongoDB cannot store this record: key must not contain NUL")
        return upsert(page)

    monkeypatch.setattr(ctx.store, "upsert_page", refuse_b)
    pages = jsonl(tmp_path / "p.jsonl", *(json.dumps({"id": k, "text": NEWS + k}) for k in "abc"))
    r = ingest(ctx, [str(pages)])
    assert r.queued == ["a", "c"] and r.read.skipped[0].source == f"{pages}:2"
    assert process_queued(ctx)["done"] == 2


def test_the_store_refuses_a_lone_surrogate_as_one_bad_record(ctx):
    with pytest.raises(BadRecord, match="U\\+FFFD"):
        ctx.store.upsert_page(Page(key="x", text="a\ud800b"))
    ctx.store.upsert_page(Page(key="y", text="fine"))  # the store is still usable


def test_site_names_have_one_spelling_at_every_entry(ctx, settings):
    r = ingest(ctx, [str(SAMPLES / "pages" / "tw-3.txt")], site="  笔趣阁-分站 ")
    assert ctx.store.get_page("tw-3").site == "笔趣阁-分站" and r.queued == ["tw-3"]
    assert [p.key for p in ctx.store.find_pages(site="笔趣阁-分站")] == ["tw-3"]
    with pytest.raises(InputError, match="e.g. '笔趣阁-分站'"):
        ingest(ctx, [str(SAMPLES / "pages" / "tw-3.txt")], site="笔趣阁 分站")
    with pytest.raises(InputError, match="control character"):
        ingest(ctx, [str(SAMPLES / "pages" / "tw-3.txt")], site="x\x1b]0;t\x07")
    r = run("ingest", SAMPLES / "pages" / "tw-3.txt", "--site", "a\u202eb", env={"FPT_HOME": str(settings.home)})
    assert r.exit_code == 1 and "bad site name" in r.output and "site names are" in r.output


@pytest.fixture
def hostile(settings):
    """A registered work and pages from sites whose names are a formula and a terminal escape."""
    from tracker.context import Context

    ctx = Context(settings)
    register_work(ctx, "山城旧事", SAMPLES / "originals")
    for key, site in (("=HYPERLINK(\"http://evil\")", "@evil"), ("esc", "x-evil"), ("tab", "\tnot-a-name")):
        ctx.store.upsert_page(Page(key=key, text=CHAPTER3, site=site, url="http://e.test/\x1b[2J"))
    process_queued(ctx)
    # Written to the store directly: stored before names were checked, or by another tool.
    ctx.store.upsert_page(Page(key="raw\x1b[31m\u202e", text=CHAPTER3 + "。", site="s\x1b]0;pwned\x07"))
    process_queued(ctx)
    ctx.close()
    return {"FPT_HOME": str(settings.home)}


def test_matches_csv_defuses_formula_cells(hostile):
    out = run("matches", "--format", "csv", env=hostile).output
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["page"] for r in rows} >= {"'=HYPERLINK(\"http://evil\")", "esc", "tab"}
    assert {r["site"] for r in rows} >= {"'@evil", "x-evil", "'\tnot-a-name"}
    assert all(not r[c].startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for c in r)
    assert any(r["similarity"] and float(r["similarity"]) > 0 for r in rows)  # numbers stay numbers


def test_table_and_plain_output_show_control_characters_as_escapes(hostile):
    table = run("matches", env=hostile).output
    assert "\x1b" not in table and "\x07" not in table and "\u202e" not in table
    assert "raw\\x1b[31m\\u202e" in table and "s\\x1b]0;pwned\\x07" in table
    stats = run("set-status", "raw\x1b[31m\u202e", "山城旧事/山城旧事-第三章", "confirmed", env=hostile).output
    assert "\x1b" not in stats and "raw\\x1b[31m\\u202e" in stats
    out = run("matches", "--format", "jsonl", env=hostile).output
    assert "\x1b" not in out and "\u202e" not in out
    assert "raw\x1b[31m\u202e" in {json.loads(x)["page"] for x in out.splitlines()}  # JSON keeps it exact


def test_error_messages_show_control_characters_as_escapes(settings):
    r = run("ingest", "evil\x1b]0;pwned\x07.txt", env={"FPT_HOME": str(settings.home)})  # no such file
    assert r.exit_code == 1 and "\x1b" not in r.output and "\x07" not in r.output
    assert "evil\\x1b]0;pwned\\x07.txt" in r.output
