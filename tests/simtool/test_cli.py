"""The simtool commands end to end, through click's runner, on files made here."""
import json
import os

import pytest
from click.testing import CliRunner

from simtool import main

from ..conftest import ROOT

SAMPLES = ROOT / "samples"
CHAPTER3 = SAMPLES / "originals" / "山城旧事-第三章.txt"


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)

    return invoke


def test_every_command_has_help_with_an_example(run):
    for name in main.commands:
        r = run(name, "--help")
        assert r.exit_code == 0, name
        assert "Example" in r.output, f"{name} --help has no example"
    assert "Examples" in run("--help").output


def test_track_on_the_samples_finds_every_pirate_page_and_not_the_news(run):
    r = run("track", SAMPLES / "originals", SAMPLES / "pages", "-q")
    assert r.exit_code == 0
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    pairs = {(x["page"], x["original"]) for x in recs}
    pages = {p.stem for p in (SAMPLES / "pages").iterdir()} - {"unrelated-news"}
    assert {p for p, _ in pairs} == pages
    assert ("merged-1-2", "山城旧事-第一章") in pairs and ("merged-1-2", "山城旧事-第二章") in pairs
    for x in recs:
        assert {"page", "original", "similarity", "containment", "page_share", "scores", "spans"} <= set(x)
        assert 0 < x["containment"] <= 1 and 0 < x["page_share"] <= 1
        assert x["spans"] and all(s["page_end"] > s["page_start"] for s in x["spans"])


def test_track_csv_and_table_formats(run):
    csv_out = run("track", SAMPLES / "originals", SAMPLES / "pages" / "tw-3.txt", "--format", "csv", "-q").stdout
    header, row = csv_out.splitlines()[:2]
    assert header.startswith("page,original,verdict,similarity,containment")
    assert row.startswith("tw-3,山城旧事-第三章,duplicate,")
    table = run("track", SAMPLES / "originals", SAMPLES / "pages" / "tw-3.txt", "--format", "table", "-q").stdout
    assert table.splitlines()[0].split()[:3] == ["page", "original", "verdict"]


def _hostile_pages(tmp_path):
    """Pages that copy chapter 3 under names a site owner chose: a formula, terminal escapes, a bidi override."""
    text = CHAPTER3.read_text(encoding="utf-8")
    f = tmp_path / "hostile.jsonl"
    f.write_text("\n".join(json.dumps({"id": key, "text": text}) for key in
                           ("=HYPERLINK(\"http://evil\")", "-2+3", "x\x1b[2J\x1b]0;pwned\x07y", "a\u202egnp.exe")))
    return f


def test_track_csv_defuses_formula_cells(run, tmp_path):
    out = run("track", SAMPLES / "originals", _hostile_pages(tmp_path), "--format", "csv", "-q").stdout
    import csv
    import io

    pages = {row["page"] for row in csv.DictReader(io.StringIO(out))}
    assert "'=HYPERLINK(\"http://evil\")" in pages and "'-2+3" in pages
    assert not any(p.startswith(("=", "+", "-", "@")) for p in pages)


def test_track_table_shows_control_characters_as_escapes_and_jsonl_keeps_them_exact(run, tmp_path):
    pages = _hostile_pages(tmp_path)
    table = run("track", SAMPLES / "originals", pages, "--format", "table", "-q").stdout
    assert "\x1b" not in table and "\x07" not in table and "\u202e" not in table
    assert "x\\x1b[2J\\x1b]0;pwned\\x07y" in table and "a\\u202egnp.exe" in table
    out = run("track", SAMPLES / "originals", pages, "-q").stdout
    assert "\x1b" not in out and "\u202e" not in out  # escaped by JSON ...
    keys = {json.loads(line)["page"] for line in out.splitlines()}
    assert {"x\x1b[2J\x1b]0;pwned\x07y", "a\u202egnp.exe"} <= keys  # ... and exact once read


def test_track_verbose_names_the_inputs_with_bad_characters_replaced(run, tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    text = CHAPTER3.read_text(encoding="utf-8")
    (pages / "gbk.txt").write_bytes(text[:300].encode("gbk") + b"\xff" + text[300:].encode("gbk"))
    (pages / "p.jsonl").write_text(json.dumps({"id": "j", "text": text + "\ud800"}))
    r = run("track", SAMPLES / "originals", pages, "-v")
    assert r.exit_code == 0, r.output
    assert {json.loads(line)["page"] for line in r.stdout.splitlines()} == {"gbk", "j"}
    assert "2 bad characters replaced with U+FFFD in 2 inputs" in r.stderr
    assert f"replaced 1 bad character with U+FFFD in {pages / 'gbk.txt'}" in r.stderr
    assert f"replaced 1 bad character with U+FFFD in {pages / 'p.jsonl'}:1" in r.stderr


def test_track_reads_pages_from_standard_input(run):
    page = "本站首发\n" + CHAPTER3.read_text(encoding="utf-8")
    r = run("track", SAMPLES / "originals", "-", "-q", input=page.encode("gb18030"))
    assert r.exit_code == 0
    assert json.loads(r.stdout.splitlines()[0])["original"] == "山城旧事-第三章"


def test_track_counts_bad_pages_and_never_crashes(run, tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "empty.txt").write_text("")
    (pages / "punct.txt").write_text("，。！？……——\n\n")
    (pages / "garbage.bin").write_bytes(os.urandom(4096))
    (pages / "invalid-utf8.txt").write_bytes(b"\xff\xfe\xfd" + "第三章".encode() * 3 + b"\xc3\x28")
    (pages / "long-line.txt").write_text(("她笑了笑没有回答" * 700_000)[:5_000_000])
    (pages / "good.txt").write_text(CHAPTER3.read_text(encoding="utf-8"))
    r = run("track", SAMPLES / "originals", pages)
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["page"] for x in recs] == ["good"]
    assert "skipped" in r.stderr and "empty" in r.stderr
    assert "Traceback" not in r.output


def test_track_with_no_pages_says_what_to_give(run, tmp_path):
    r = CliRunner().invoke(main, ["track", str(SAMPLES / "originals"), str(tmp_path)])
    assert r.exit_code != 0
    assert "no pages" in r.output and ".txt" in r.output


def test_track_with_a_missing_path_names_it(run, tmp_path):
    r = CliRunner().invoke(main, ["track", str(tmp_path / "nope"), str(SAMPLES / "pages")])
    assert r.exit_code != 0 and "nope" in r.output and "Traceback" not in r.output


def test_compare_shows_channels_verdict_and_passages(run):
    r = run("compare", CHAPTER3, SAMPLES / "pages" / "xs-3-homophones.txt")
    assert r.exit_code == 0
    for word in ("verdict:", "duplicate", "simhash", "minhash", "pinyin", "winnow", "copied passages"):
        assert word in r.stdout
    js = json.loads(run("compare", CHAPTER3, SAMPLES / "pages" / "blog-excerpt.txt", "--format", "json").stdout)
    assert js["verdict"] == "different"  # the blog quotes chapter one, not chapter three


def test_compare_refuses_a_multi_document_input(run, tmp_path):
    f = tmp_path / "two.jsonl"
    f.write_text('{"id": "a", "text": "甲乙丙"}\n{"id": "b", "text": "丁戊己"}\n')
    r = CliRunner().invoke(main, ["compare", str(f), str(CHAPTER3)])
    assert r.exit_code != 0 and "2 documents" in r.output


def test_fingerprint_jsonl_has_every_channel_with_its_parameters(run):
    r = run("fingerprint", SAMPLES / "originals", "-q")
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(recs) == 3
    rec = recs[0]
    assert len(rec["simhash"]["value"]) == 16 and rec["simhash"]["bits"] == 64
    assert len(rec["minhash"]["values"]) == rec["minhash"]["num_perm"] == 128
    assert len(rec["pinyin"]["codes"]) == len(rec["pinyin"]["offsets"]) > 0
    assert len(rec["winnow"]["hashes"]) == len(rec["winnow"]["offsets"]) > 0
    assert rec["winnow"]["k"] == 8


def test_fingerprint_channels_select_and_bad_channel_is_explained(run):
    out = run("fingerprint", CHAPTER3, "--channels", "simhash", "--format", "csv", "-q").stdout
    assert out.splitlines()[0] == "id,units,long_words,simhash,simhash_params"
    r = CliRunner().invoke(main, ["fingerprint", str(CHAPTER3), "--channels", "simhash,bogus"])
    assert r.exit_code != 0 and "bogus" in r.output and "all" in r.output


def test_same_text_gives_same_fingerprints_across_runs(run):
    a = run("fingerprint", CHAPTER3, "-q").stdout
    b = run("fingerprint", CHAPTER3, "-q").stdout
    assert a == b


def test_track_thresholds_change_what_counts(run):
    loose = run("track", SAMPLES / "originals", SAMPLES / "pages" / "blog-excerpt.txt", "-q").stdout
    assert "blog-excerpt" in loose
    strict = run("track", SAMPLES / "originals", SAMPLES / "pages" / "blog-excerpt.txt", "-q",
                 "--min-containment", "0.5", "--min-page-share", "0.5", "--min-long-run", "1000").stdout
    assert strict == ""


def test_fingerprint_counts_runs_too_long_to_be_words(run, tmp_path):
    page = tmp_path / "blob.txt"
    page.write_text("陈守义坐在茶馆靠窗的位置。" + "a" * 5000 + "。他在这里已经等了三天。" + "7" * 300, encoding="utf-8")
    rec = json.loads(run("fingerprint", str(page), "--channels", "simhash", "-q").stdout)
    assert rec["long_words"] == 2 and rec["units"] < 40
