"""Query building (tracker.discovery.queries): deterministic, distinctive sentences chosen over
stock phrases and repeated lines, phrases fit for a search engine, and linear time on
hostile text."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.strategies import giant_tokens, hostile_texts
from tests.linear import assert_linear
from tracker.discovery.queries import (
    Query,
    QueryPlan,
    build_queries,
    candidates,
    distinctive_sentences,
    phrase,
    telling_chapter_titles,
    units,
)

from ..conftest import ROOT

STOCK = "本章未完，请点击下一页继续阅读后面精彩内容，天才一秒记住本站地址！"
REFRAIN = "他点了点头，转身走出了房间，外面的雨还在下着，一直没有停。"
RARE = {
    1: "陈守义把那枚生锈的铜钥匙插进樟木箱底的暗锁，咔哒一声，夹层里滑出半张泛黄的船票。",
    2: "码头边的旧仓库里堆满了发霉的桐油桶，林晚踮着脚在第三排货架后面找到了那本账簿。",
    3: "井底的石壁上刻着七个歪歪扭扭的数字，像是有人在黑暗里摸索着用指甲一笔一笔划出来的。",
}


def work_chapters() -> list[tuple[str, str, str]]:
    out = []
    for n in (1, 2, 3):
        text = "\n".join([f"第{'一二三'[n - 1]}章 雨夜{n}", "他来了。", REFRAIN, STOCK, RARE[n], REFRAIN, "好。"])
        out.append((f"山城旧事/{n}", f"山城旧事-第{'一二三'[n - 1]}章", text))
    return out


def test_the_distinctive_sentences_are_chosen_one_per_chapter_and_no_stock_phrase_or_refrain():
    chosen = distinctive_sentences(work_chapters(), 3)
    assert sorted(chosen) == [(f"山城旧事/{n}", RARE[n].rstrip("。")) for n in (1, 2, 3)]
    more = distinctive_sentences(work_chapters(), 10)
    assert all("本章未完" not in p and "转身走出了房间" not in p for _, p in more)
    assert all(len(p) > 5 for _, p in more)  # "他来了" and "好" are too short to name a book


def test_queries_are_deterministic_and_in_their_order():
    plan = QueryPlan(sentences=2, chapter_titles=2)
    first = build_queries("山城旧事", "山城旧事", work_chapters(), plan, author="林岚")
    again = build_queries("山城旧事", "山城旧事", list(reversed(list(reversed(work_chapters())))), plan, author="林岚")
    assert first == again
    assert [q.kind for q in first] == ["sentence", "sentence", "title", "chapter-title", "chapter-title"]
    assert first[2] == Query("山城旧事", "title", '"山城旧事" "林岚"')
    # chapter titles without the work's name and numbering (the text's heading when the title is a file name)
    assert [q.text for q in first[3:]] == ['"山城旧事" "雨夜1"', '"山城旧事" "雨夜2"']
    assert all(q.text.count('"') % 2 == 0 for q in first)
    assert build_queries("w", "", work_chapters(), QueryPlan(sentences=0))  == []


def test_sentences_found_in_the_sample_novel_are_its_own():
    chapters = []
    for p in sorted((ROOT / "samples" / "originals").glob("*.txt")):
        text = p.read_text("utf-8")
        chapters.append((p.stem, p.stem, text))
    chosen = distinctive_sentences(chapters, 5)
    assert len(chosen) == 5 and len({k for k, _ in chosen}) == 3  # every chapter before a second from one
    texts = {k: t.replace("“", "").replace("”", "") for k, _, t in chapters}
    for key, p in chosen:
        assert p in texts[key] and 14 <= units(p) <= 40


def test_long_sentences_are_cut_at_clauses_or_windows_within_the_limits():
    plan = QueryPlan()
    clauses = "，".join(["林晚把灯笼挂在门口的铁钩上", "回头看了一眼空荡荡的巷子", "巷子尽头的狗叫了两声又停了",
                        "远处传来一阵急促的脚步声"]) + "。"
    pieces = candidates(clauses, plan)
    assert pieces and all(plan.min_units <= units(p) <= plan.max_units for p in pieces)
    assert all(p in clauses for p in pieces)
    run = "山城雨夜旧宅钥匙" * 40  # no punctuation at all
    windows = candidates(run, plan)
    assert len(windows) == len(run) // plan.max_units and all(units(p) == plan.max_units for p in windows)


def test_english_text_makes_phrases_of_words():
    text = ("It rained. The ferryman counted seven copper coins into the drowned girl's open palm before dawn. "
            "Yes.")
    (p,) = candidates(text, QueryPlan())
    assert p == "The ferryman counted seven copper coins into the drowned girl's open palm before dawn"
    assert units("It rained") == 4 and units("山城") == 2


def test_phrases_lose_quotes_and_control_characters():
    assert phrase('  “他说：\"走\x1b[31m吧\"”  ') == "他说：走 [31m吧"
    assert phrase("\u202e反转\u202c文字") == "反转 文字"
    assert phrase("。。。!!!") == ""
    assert telling_chapter_titles([("k", "第十二章", ""), ("k2", "Chapter 3: The Ferry", "")], 5) == [
        ("k2", "The Ferry")]


@settings(max_examples=150, deadline=None)
@given(title=hostile_texts, author=hostile_texts, texts=st.lists(hostile_texts, max_size=4),
       sentences=st.integers(0, 6), titles=st.integers(0, 3))
def test_hostile_text_makes_well_formed_queries(title, author, texts, sentences, titles):
    chapters = [(f"w/{i}", t[:50], t) for i, t in enumerate(texts)]
    plan = QueryPlan(sentences=sentences, chapter_titles=titles)
    queries = build_queries("w", title, chapters, plan, author=author)
    assert queries == build_queries("w", title, chapters, plan, author=author)
    assert len(queries) <= sentences + 1 + titles
    assert len({q.text for q in queries}) == len(queries)
    for q in queries:
        assert q.text.startswith('"') and q.text.endswith('"') and q.text.count('"') in (2, 4)
        assert not any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF or 0x202A <= ord(c) <= 0x202E for c in q.text)
        assert '""' not in q.text
        q.text.encode("utf-8")  # sendable
        if q.kind == "sentence":
            assert plan.min_units <= units(q.text) <= plan.max_units and len(q.text) <= 8 * plan.max_units + 2


@settings(max_examples=30, deadline=None)
@given(token=giant_tokens)
def test_giant_tokens_cost_no_query(token):
    for q in build_queries("w", "w", [("w/1", token, token)], QueryPlan()):
        assert len(q.text) <= 8 * QueryPlan().max_units + 2


def _novel(n: int) -> str:
    rng = random.Random(7)
    alphabet = "山城雨夜旧宅钥匙码头仓库账簿石壁数字灯笼巷子脚步陈守义林晚桐油船票樟木箱铜锈"
    out = []
    while sum(map(len, out)) < n:
        out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(5, 30))) + rng.choice("，。！？\n"))
    return "".join(out)[:n]


HOSTILE = {
    "a novel": _novel,
    "one sentence without a stop": lambda n: "山城雨夜旧宅钥匙" * (n // 8),
    "clause marks alone": lambda n: "，" * n,
    "spaces and commas": lambda n: " , " * (n // 3),
    "punctuation before a word": lambda n: "!" * n + "a",
    "one giant word": lambda n: "a" * n,
    "words without stops": lambda n: "ferry copper coin " * (n // 18),
    "stops alone": lambda n: "。" * n,
    "quotes and controls": lambda n: "“\x1b\u202e”" * (n // 4),
    "stock phrases": lambda n: "本章未完，" * (n // 5),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_query_building_is_linear_in_the_text(kind):
    make = HOSTILE[kind]
    assert_linear(lambda text: build_queries("w", text[:5000], [("w/1", text[:5000], text), ("w/2", "", text)]),
                  make, 20_000, what=f"build_queries on {kind}")


def test_query_building_is_pure_and_discovery_loads_no_crawler():
    import subprocess
    import sys

    code = ("import sys, tracker.discovery.queries; a = sorted(m for m in ('scrapy', 'flask', 'pymongo', 'redis', "
            "'sqlite3', 'urllib.request', 'http.client') if m in sys.modules); "
            "import tracker.discovery.discover, tracker.discovery.cli; "
            "print(a, sorted(m for m in ('scrapy', 'flask', 'twisted', 'crawler') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] []"
