"""Smoke test of bench/speed.py on three short hand-written texts (no corpus needed).

rensa, datasketch and simhash are the benchmark's peers (the `bench` extra, which
scripts/test installs); without them the test skips locally and fails in CI.
"""
from __future__ import annotations

import importlib.util

import pytest

from ..conftest import need

_MISSING = [n for n in ("rensa", "datasketch", "simhash") if importlib.util.find_spec(n) is None]


@pytest.fixture(autouse=True)
def _peers_installed():
    need(not _MISSING, f"benchmark peers not installed: {', '.join(_MISSING)}; pip install -e '.[bench]'")


from bench import speed
from bench.common import BenchError, ChapterText, markdown_table

TEXTS = [
    "第一章 山雨欲来\n"
    "　　清晨的雾气还没有散尽，小镇东头的石桥上已经站满了赶集的人。卖菜的老汉把箩筐放在桥栏边，"
    "一面吆喝，一面用袖子擦着额头上的汗。桥下的河水比往年浅了许多，露出一片片灰白的卵石。"
    "镇上的孩子们光着脚在石头间跳来跳去，笑声传得很远。药铺的掌柜推开木窗，望了望天色，"
    "说今天午后怕是要下雨，叫伙计赶紧把晒在院里的草药收进屋来。伙计答应着，却仍旧蹲在门口，"
    "看那从北边来的一队马车慢慢驶进镇子，车上插着几面褪了色的小旗。",
    "第二章 旧友重逢\n"
    "　　傍晚时分，雨果然落了下来。茶馆里坐满了躲雨的客人，说书先生清了清嗓子，正要开讲，"
    "门帘一挑，走进来一个背着包袱的年轻人。他摘下斗笠，抖了抖上面的水珠，四下里看了一圈，"
    "目光落在靠窗的一张桌子上。那里坐着一位穿青布长衫的中年人，正慢慢地剥着花生。"
    "两人对望了片刻，中年人忽然笑了，招手让他过去坐。年轻人放下包袱，低声说自己走了三天三夜，"
    "才打听到这个地方。中年人给他倒了一碗热茶，叫他先别说话，把身子暖过来再讲。",
    "第三章 夜半灯火\n"
    "　　夜深了，镇子里只剩下更夫的梆子声。客栈二楼最里面的一间屋子还亮着灯，窗纸上映出两个人影。"
    "年轻人摊开一张发黄的地图，用手指顺着一条弯弯曲曲的墨线往西划去，说那片山里有一座废弃的庙，"
    "庙后的井早就干了，井底却藏着一扇铁门。中年人听完半晌没有作声，只是把油灯拨亮了些。"
    "过了好一会儿，他才开口，说这件事若是真的，明天一早就得动身，不然等消息传开，"
    "来的人就不止他们两个了。说罢他起身关好窗子，吹熄了灯。",
]


@pytest.fixture(scope="module")
def chapters() -> list[ChapterText]:
    return [ChapterText(f"smoke/{i:03d}", "smoke", i, t) for i, t in enumerate(TEXTS)]


def test_minhash_table_rows_and_peer_agreement():
    table, best = speed.bench_minhash(TEXTS, repeat=1)
    names = table.column("implementation")
    assert names == [
        "rensa RMinHash",
        "rensa CMinHash",
        "datasketch MinHash",
        "fptrack oph",
        "fptrack permutations",
        "fptrack oph, shingles given",
        "fptrack permutations, shingles given",
    ]
    assert set(best) == set(names) and all(s > 0 for s in best.values())
    assert "| rensa RMinHash |" in table.markdown()


def test_peer_jaccard_agrees_with_ours_on_a_near_duplicate():
    a = TEXTS[0]
    b = speed.near_duplicate(a, every=40)
    assert a != b
    j = speed.minhash_pair_jaccards(a, b)
    ours = j["fptrack oph"]
    assert 0.5 < ours < 1.0
    for peer in ("rensa RMinHash", "rensa CMinHash", "datasketch MinHash", "fptrack permutations"):
        assert abs(j[peer] - ours) <= 0.2, (peer, j[peer], ours)


def test_channels_table_has_every_stage():
    table = speed.bench_channels(TEXTS, repeat=2)
    rows = table.column("what")
    assert rows[0] == "prepare() (all channels)"
    assert rows[1].startswith("rensa RMinHash alone")
    assert [r.split(" (")[0] for r in rows[2:-1]] == [f"stage: {s}" for s in speed.STAGES]
    assert rows[-1] == "sum of stages"
    assert sum("(slowest)" in r for r in rows) == 1
    assert any("target ≤ 3×" in n for n in table.notes)


def test_simhash_table_rows():
    table = speed.bench_simhash(TEXTS, repeat=1)
    assert table.column("implementation") == [
        "simhash package Simhash(features)",
        "fptrack simhash(features)",
        "fptrack text_simhash",
        "fptrack normalize + text_simhash",
    ]
    near = table.column("d(near-dup pair)")
    far = table.column("d(unrelated pair)")
    assert all(isinstance(d, int) and 0 <= d <= 64 for d in near + far)


def test_hamming_small_index_finds_every_planted_neighbour():
    r = speed.bench_hamming_size(5000, queries=50, repeat=1)
    assert r.recall == 1.0 and r.extra == 0 and r.planted_found == 1.0
    table = speed.bench_hamming([5000], queries=50, repeat=1)
    assert table.column("fingerprints") == ["5,000"]
    assert table.column("recall") == ["1.0000"]


def test_tracker_table_rows(chapters):
    table = speed.bench_tracker(chapters, repeat=1)
    steps = table.column("step")
    assert steps[0].startswith("index originals") and steps[1].startswith("match pages")
    assert [s.strip().split(" (")[0] for s in steps[2:]] == [
        "match step: prepare", "match step: candidates", "match step: judge",
    ]
    # Two originals (first half, rounded up); both boilerplate pages find their own chapter.
    assert any("2/2 boilerplate pages" in n for n in table.notes)


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(BenchError, match="FPT_SHARED"):
        speed.main(["--corpus", str(tmp_path / "nowhere"), "--quick", "--no-write"])


def test_bad_options_are_clear_errors():
    with pytest.raises(BenchError, match="unknown section"):
        speed.parse_sections("minhash,nope")
    with pytest.raises(BenchError, match="--sizes"):
        speed.parse_sizes("lots")


def test_markdown_table_shape():
    text = markdown_table(["a", "n"], [["x", 1], ["y|z", "2.5 s"]])
    lines = text.splitlines()
    assert lines[1] == "| --- | ---: |"
    assert "y\\|z" in lines[3]
