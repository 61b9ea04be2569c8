import csv
import io
import json

import pytest
from click.testing import CliRunner

from simtool import main

POEM = "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。寒来暑往，秋收冬藏。闰余成岁，律吕调阳。云腾致雨，露结为霜。金生丽水，玉出昆冈。" * 4
OTHER = "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？" * 4


@pytest.fixture
def pages(tmp_path):
    d = tmp_path / "pages"
    d.mkdir()
    (d / "a_original.txt").write_text(POEM, encoding="utf-8")
    (d / "b_repost.txt").write_text(POEM.replace("，", " ").replace("云", "雲") + "\n天才一秒记住本站地址", encoding="utf-8")
    (d / "c_other.txt").write_text(OTHER, encoding="utf-8")
    (d / "d_blank.txt").write_text("   \n", encoding="utf-8")
    return d


def run(*args, input=None):
    return CliRunner().invoke(main, ["dedup", *map(str, args)], input=input)


def test_help_has_example():
    res = run("-h")
    assert res.exit_code == 0
    assert "Example:" in res.output and "simtool dedup" in res.output


def test_jsonl_one_record_per_document(pages):
    res = run(pages, "--format", "jsonl", "-q")
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(r["key"], r["cluster"], r["centre"], r["distance"]) for r in recs] == [
        ("a_original", 0, "a_original", 0),
        ("b_repost", 0, "a_original", 0),  # punctuation, a traditional character and a watermark line differ
        ("c_other", 1, "c_other", 0),
    ]
    assert all(len(r["simhash"]) == 16 for r in recs)
    assert res.stderr == ""  # -q


def test_summary_on_stderr_with_skips(pages):
    res = run(pages, "-v")
    assert res.exit_code == 0
    assert "3 documents in 2 clusters (1 with near-duplicates)" in res.stderr
    assert "skipped 1" in res.stderr and "d_blank.txt: empty" in res.stderr
    header = res.stdout.splitlines()[0].split()
    assert header == ["key", "cluster", "centre", "distance"]


def test_clusters_csv_and_duplicates_only(pages):
    res = run(pages, "--clusters", "--format", "csv", "--duplicates-only", "-q")
    assert res.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == 1
    assert rows[0]["centre"] == "a_original" and rows[0]["size"] == "2"
    assert json.loads(rows[0]["members"]) == ["a_original", "b_repost"]


def test_threshold_zero_and_narrow_bits(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "x.txt").write_text(POEM, encoding="utf-8")
    (d / "y.txt").write_text(POEM[:-12] + "剑号巨阙，珠称夜光。", encoding="utf-8")
    wide = run(d, "--threshold", "15", "--format", "jsonl", "-q")
    strict = run(d, "--threshold", "0", "--format", "jsonl", "-q")
    dist = [json.loads(line)["distance"] for line in wide.stdout.splitlines()]
    assert dist[0] == 0 and 0 < dist[1] <= 15  # a small edit: a few bits, one cluster
    assert {json.loads(line)["cluster"] for line in strict.stdout.splitlines()} == {0, 1}
    narrow = run(d, "--bits", "16", "--format", "jsonl", "-q")
    assert all(len(json.loads(line)["simhash"]) == 4 for line in narrow.stdout.splitlines())


def test_stdin_and_bad_input(tmp_path):
    lines = "\n".join(json.dumps({"id": k, "text": t}, ensure_ascii=False) for k, t in [("p1", POEM), ("p2", POEM), ("p3", OTHER)])
    res = run("-", "--format", "jsonl", "-q", input=lines.encode("utf-8"))
    assert res.exit_code == 0, res.output
    assert [json.loads(line)["cluster"] for line in res.stdout.splitlines()] == [0, 0, 1]
    missing = run(tmp_path / "nope")
    assert missing.exit_code == 1
    assert "no such file or directory" in missing.output and "Traceback" not in missing.output
    assert run(tmp_path, "--threshold", "99").exit_code == 2


def test_sdbm_hash_clusters_copies_and_gives_other_fingerprints(tmp_path):
    import json

    from click.testing import CliRunner

    from simtool import main

    story = "陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶，眼睛却一直望着对面那条通往码头的窄巷。" * 4
    other = "为期三天的秋季农产品交易会于昨日下午在市会展中心闭幕，据组委会介绍本届交易会吸引了三百余家企业参展。" * 4
    (tmp_path / "a.txt").write_text(story)
    (tmp_path / "b.txt").write_text("本站首发\n" + story.replace("，", ","))
    (tmp_path / "c.txt").write_text(other)

    def rows(*extra):
        r = CliRunner().invoke(main, ["dedup", str(tmp_path), "--format", "jsonl", "-q", *extra])
        assert r.exit_code == 0, r.output
        return {x["key"]: x for x in map(json.loads, r.stdout.splitlines())}

    fast, sd = rows(), rows("--hash", "sdbm")
    assert sd["a"]["cluster"] == sd["b"]["cluster"] != sd["c"]["cluster"]
    assert sd["a"]["simhash"] != fast["a"]["simhash"]
