"""Every text path of the engine takes time linear in its input, on hostile inputs too.

Each test times a path on an input of size n and 8n (tests.linear: a ratio, never a wall
clock). The inputs are what a hostile or broken page holds: a run of letters with no space
(a minified blob, base64), long digit runs, domain-shaped runs ("www.aaaa…", "a.a.a…"),
one CJK character repeated, a paragraph with no line break, markup with no ">", deep
nesting, thousands of sibling tags. n is chosen so the small run takes a few milliseconds;
the allocator is kept warm (tests.steady_memory) so page faults do not blur the ratio.
"""
from __future__ import annotations

import base64
import random

import pytest

from fingerprint.chapters import split_chapters
from fingerprint.engine import judge, prepare
from fingerprint.normalize import normalize
from fingerprint.pinyin import to_sounds
from pagetext.html import html_to_text, looks_like_html, strip_tags
from tests.linear import assert_linear
from tests.steady_memory import steady_allocator


@pytest.fixture(autouse=True, scope="module")
def _warm_memory():
    with steady_allocator():
        yield


def _base64(n: int) -> str:
    return base64.b64encode(random.Random(n).randbytes(n * 3 // 4 + 3)).decode()[:n]


PROSE = "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。寒来暑往，秋收冬藏。"

# name -> (make(n), n): texts with no line break at all unless the name says otherwise.
HOSTILE_TEXT = {
    "letters": (lambda n: "a" * n, 100_000),
    "random letters": (lambda n: "".join(random.Random(n).choices("abcdefghijklmnopqrstuvwxyz", k=n)), 50_000),
    "digits": (lambda n: "7" * n, 100_000),
    "base64": (_base64, 20_000),
    "www + letters": (lambda n: "www." + "a" * n, 20_000),
    "http + a. run": (lambda n: "http://" + "a." * (n // 2), 10_000),
    "a.b.c runs": (lambda n: "a.b.c" * (n // 5), 10_000),
    "one CJK character": (lambda n: "啊" * n, 20_000),
    "CJK and punctuation, one line": (lambda n: (PROSE * (n // len(PROSE) + 1))[:n], 20_000),
    "ad phrases on one line": (lambda n: ("最新章节" + "天" * 40) * (n // 44), 20_000),
    "many <": (lambda n: "<" * n, 200_000),
    "letters between spaces": (lambda n: "p " * (n // 2), 20_000),
}


@pytest.mark.parametrize("name", list(HOSTILE_TEXT))
def test_normalize_is_linear(name):
    make, n = HOSTILE_TEXT[name]
    assert_linear(normalize, make, n, what=f"normalize on {name}")


@pytest.mark.parametrize("name", list(HOSTILE_TEXT))
def test_prepare_is_linear(name):
    make, n = HOSTILE_TEXT[name]
    assert_linear(lambda t: prepare("page", t).compute(), make, n, what=f"engine.prepare on {name}")


def test_prepare_on_a_400000_letter_run_is_linear():
    # What `simtool fingerprint` runs; this input took over 100 s when the URL pattern backtracked.
    assert_linear(lambda t: prepare("page", t).compute(), lambda n: "x" * n, 50_000, what="engine.prepare, 400,000 letters")


def test_pinyin_reading_of_many_words_is_linear():
    # Chinese text with a pinyin word in every sentence: each word is segmented, at a bounded cost.
    sentence = "他说zhidao了明天再来，"
    normalized = {}

    def make(n):
        t = sentence * (n // len(sentence))
        normalized[n] = normalize(t)
        return normalized[n]

    assert_linear(to_sounds, make, 5_000, what="pinyin.to_sounds")


@pytest.mark.parametrize("text", ["啊", "天地玄黄"])
def test_judge_of_repeated_text_is_linear(text):
    # A page of one repeated phrase against an original of the same: every k-gram recurs everywhere.
    def make(n):
        t = text * (n // len(text))
        return prepare("page", t), prepare("original", t)

    assert_linear(lambda pair: judge(*pair), make, 4_000, what=f"engine.judge on repeated {text!r}")


CHAPTERED = {
    "one long line": (lambda n: (PROSE * (n // len(PROSE) + 1))[:n], 1_000_000),
    "heading lines only": (lambda n: "第一章\n" * (n // 4), 5_000),
    "chapters": (lambda n: "".join(f"第{i}章 标题\n{'啊' * 120}\n" for i in range(n // 130)), 50_000),
    "hostile heading lines": (lambda n: ("第" + "一 " * 199 + "\n") * (n // 400), 50_000),
    "blank lines": (lambda n: "\n" * n, 500_000),
}


@pytest.mark.parametrize("name", list(CHAPTERED))
def test_split_chapters_is_linear(name):
    make, n = CHAPTERED[name]
    assert_linear(split_chapters, make, n, what=f"split_chapters on {name}")


def _page(body: str) -> str:
    return f"<html><head><title>第一章</title></head><body>{body}</body></html>"


HOSTILE_HTML = {
    "many <": (lambda n: "<" * n, 20_000),
    "many <p without >": (lambda n: "<p " * (n // 3), 20_000),
    "unclosed <script>s": (lambda n: "<script>x" * (n // 9), 20_000),
    "5,000 nested <div>": (lambda n: _page("<div>字" * (n // 6) + "</div>" * (n // 6)), 30_000),
    "nested <span>": (lambda n: _page("<div>" + "<span>字" * (n // 7) + "</span>" * (n // 7) + "</div>"), 30_000),
    "sibling <span>s": (lambda n: _page("<div>" + "<span>字</span>" * (n // 14) + "</div>"), 5_000),
    "sibling ads": (lambda n: _page("<div>" + "<div class=ad>x</div>尾巴" * (n // 25) + "</div>"), 20_000),
    "sibling link lists": (lambda n: _page("<div>" + "<div><a href='/x'>链接</a></div>尾巴" * (n // 35) + "</div>"),
                           20_000),
    "comments between text": (lambda n: _page("<div>" + "<!--c-->尾巴" * (n // 10) + "</div>"), 20_000),
    "scripts between text": (lambda n: _page("<div>" + "<script>x</script>尾巴" * (n // 20) + "</div>"), 20_000),
    "paragraphs": (lambda n: _page("<div id=content>" + f"<p>{PROSE}</p>" * (n // 40) + "</div>"), 10_000),
    "letters in a div": (lambda n: _page("<div>" + "a" * n + "</div>"), 50_000),
}


@pytest.mark.parametrize("name", list(HOSTILE_HTML))
def test_html_to_text_is_linear(name):
    make, n = HOSTILE_HTML[name]
    assert_linear(html_to_text, make, n, what=f"html_to_text on {name}")


@pytest.mark.parametrize("name", ["many <", "many <p without >", "unclosed <script>s", "sibling <span>s"])
def test_strip_tags_is_linear(name):
    make, n = HOSTILE_HTML[name]
    assert_linear(strip_tags, make, 8 * n, what=f"strip_tags on {name}")


@pytest.mark.parametrize("name", ["many <", "many <p without >", "5,000 nested <div>"])
def test_looks_like_html_is_linear(name):
    # It reads a bounded head of the text: constant time, measured over 20 calls to rise above noise.
    make, n = HOSTILE_HTML[name]
    assert_linear(lambda t: [looks_like_html(t) for _ in range(20)], make, 10 * n, what=f"looks_like_html on {name}")


def test_deep_nesting_beyond_the_parser_limit_is_a_clean_result():
    # lxml stops nesting at its depth limit; the page still reads, without an exception.
    text, meta = html_to_text(_page("<div>字" * 5000 + "</div>" * 5000))
    assert isinstance(text, str) and text.startswith("字")
    assert meta["extractor"] in ("lxml", "trafilatura", "regex")


def test_charset_labels_are_found_in_linear_time_among_unclosed_meta_tags():
    from pagetext.charsets import _META_CHARSET

    assert _META_CHARSET.search(b'<meta charset="gbk">').group(1) == b"gbk"
    assert_linear(_META_CHARSET.search, lambda n: b"<meta " * n, 20_000, what="the <meta charset> pattern")
