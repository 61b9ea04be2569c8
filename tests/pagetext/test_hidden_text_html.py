"""Text the page's own CSS hides is not the page's text (pagetext.visibility, through pagetext.html)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from pagetext import visibility
from pagetext.html import block_text, drop_hidden, html_to_text, parse_html
from simtool import main
from web.demo.chapters import chapters_from_folder

from ..conftest import ROOT
from ..crawler.render_site import HIDING, JUNK, hidden_page
from ..linear import assert_linear

ORIGINALS = ROOT / "samples" / "originals"


def shown(html: str) -> str:
    tree = parse_html(html)
    drop_hidden(tree)
    return "".join(block_text(tree.find(".//body")).split())


def page(body: str, style: str = "") -> str:
    return f"<html><head><style>{style}</style></head><body>{body}</body></html>"


@pytest.mark.parametrize("style, body", [
    (".x9{display:none}", '陈<span class="x9">垃</span>守'),
    ("", '陈<span style="display:none">垃</span>守'),
    ("", '陈<span style="VISIBILITY: hidden">垃</span>守'),
    ("", '陈<span style="font-size:0px">垃</span>守'),
    ("", '陈<span style="font: 0/0 a">垃</span>守'),
    ("", "陈<b hidden>垃</b>守"),
    ("#j span{font-size:0}", '<div id="j">陈<span>垃</span>守</div>'),
    ("i{visibility:hidden}", "陈<i>垃</i>守"),
    ("div > .a.b[data-k='1']{display:none}", '<div>陈<u class="b a" data-k="1">垃</u>守</div>'),
    ("@media screen and (min-width: 1px){.z{display:none}}", '陈<span class="z">垃</span>守'),
    (".x{display:block}\n.x{display:none}", '陈<span class="x">垃</span>守'),  # the later rule wins
    ("#j .x{display:inline} .x{display:none!important}", '<p id="j">陈<span class="x">垃</span>守</p>'),
    ("/* .x{display:block} */ .x{display : none ; color:red}", '陈<span class="x">垃</span>守'),
    (".t{color:transparent}", '陈<span class="t">垃</span>守'),
    ("", '陈<span style="color: rgba(0, 0, 0, 0)">垃</span>守'),
    (".o{opacity:0}", '陈<span class="o">垃<b>圾</b></span>守'),  # nothing inside shows through
    (".off{position:absolute;left:-9999px}", '陈<span class="off">垃</span>守'),
    ("", '陈<p style="text-indent:-10000px">垃</p>守'),
    ("", '陈<div style="margin-left:-3000px; top:-5000px">垃</div>守'),
])
def test_junk_hidden_each_way_is_gone_and_the_text_around_it_joins(style, body):
    assert shown(page(body, style)) == "陈守"


@pytest.mark.parametrize("style, body", [
    (".x{display:none} .x.y{display:inline}", '陈<span class="x y">守</span>'),  # more specific shows it
    ("#j .x{display:inline} .x{display:none}", '<p id="j">陈<span class="x">守</span></p>'),  # specificity over order
    ("", '陈<span style="display:inline" hidden>守</span>'),  # author CSS overrides the hidden attribute
    ("@media print{.x{display:none}}", '陈<span class="x">守</span>'),  # print only
    ('@media only print, speech{.x{display:none}}', '陈<span class="x">守</span>'),
    (".x::before{display:none}", '陈<span class="x">守</span>'),  # pseudo-elements hold no page text
    ("a:hover{display:none}", '陈<a href="/">守</a>'),  # state-dependent: never guessed
    ("", '<div style="visibility:hidden"><p style="visibility:visible">陈守</p></div>'),  # a child shows itself
    ("", '<div style="font-size:0"><p style="font-size:16px">陈守</p></div>'),
    ("body{display:none}", "陈守"),  # shown by a script later: not junk hiding
    (".t{color:transparent} .t b{color:#333}", '<span class="t"><b>陈守</b></span>'),  # a colour of its own
    ("", '<span style="opacity:0.4">陈</span><span style="margin-left:-20px">守</span>'),  # faint or nudged: seen
    ("", '<span style="color:rgba(0,0,0,0.5)">陈守</span>'),
])
def test_visible_text_is_kept(style, body):
    assert shown(page(body, style)) == "陈守"


def test_hiding_is_inherited_unless_a_child_undoes_it():
    html = page('<div class="h">陈<p>垃<b>圾</b></p></div>守'
                '<div style="visibility:hidden">废<span>物</span><em style="visibility:visible">义</em></div>'
                '<div style="font-size:0">乱<span style="font-size:2em">码</span><span style="font-size:12px">坐</span></div>',
                ".h{display:none}")
    assert shown(html) == "守义坐"


def test_style_in_a_print_stylesheet_is_ignored():
    html = '<html><head><style media="print">.x{display:none}</style></head><body><span class="x">陈守</span></body></html>'
    assert shown(html) == "陈守"


def test_a_page_without_css_is_untouched():
    html = page("<p>陈守义</p><p>坐在茶馆</p>")
    assert visibility.hidden_parts(parse_html(html)) == ([], [])


def test_rules_beyond_the_cap_are_not_read(monkeypatch):
    monkeypatch.setattr(visibility, "MAX_SELECTORS", 3)
    style = " ".join(f".a{i}{{display:none}}" for i in range(10))
    body = "".join(f'<span class="a{i}">{c}</span>' for i, c in enumerate("一二三四五六七八九十"))
    assert shown(page(body, style)) == "四五六七八九十"


def test_bad_css_is_read_as_far_as_it_goes():
    style = ".x{display:none} }}} @media {{{ .y{display: none ;; .z{"
    assert shown(page('<span class="x">垃</span>陈守', style)) == "陈守"
    assert shown(page("陈守", "[[[ {display:none}")) == "陈守"


def test_html_to_text_drops_hidden_junk():
    (title, text), *_ = chapters_from_folder(ORIGINALS)
    for way in HIDING:
        got, _ = html_to_text(hidden_page(title, text, way))
        assert not any(c in got for c in JUNK), way
        assert "".join(got.split()) == "".join(text.split()), way


def test_many_rules_times_many_elements_is_linear():
    def make(n: int) -> str:
        rules = " ".join(f".c{i} span.k{i}{{display:none}} #i{i} b{{font-size:0}}" for i in range(visibility.MAX_SELECTORS))
        body = "".join(f'<div class="c{i % 300}"><span class="k{i % 300}">垃</span>陈<b>守</b></div>' for i in range(n))
        return page(body, rules)

    assert_linear(lambda h: drop_hidden(parse_html(h)), make, 1000, what="drop_hidden, many rules x many elements")


def test_deep_nesting_with_descendant_rules_is_linear():
    def make(n: int) -> str:
        return page("<div>" * n + "陈<span>垃</span>守" + "</div>" * n, "div div span{display:none} div > div{font-size:1px}")

    assert_linear(lambda h: drop_hidden(parse_html(h)), make, 300, what="drop_hidden on deep nesting")


def test_simtool_track_on_pages_with_hidden_junk_finds_the_whole_chapter(tmp_path):
    chapters = chapters_from_folder(ORIGINALS)
    pages = tmp_path / "pages"
    pages.mkdir()
    for n, (title, text) in enumerate(chapters, 1):
        for way in HIDING:
            (pages / f"{way}-{n}.html").write_text(hidden_page(title, text, way, seed=n), encoding="utf-8")
    r = CliRunner().invoke(main, ["track", str(ORIGINALS), str(pages), "--format", "jsonl", "-q"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    import json

    records = [json.loads(line) for line in r.output.splitlines() if line.startswith("{")]
    best: dict = {}
    for rec in records:
        best[(rec["page"], rec["original"])] = rec["containment"]
    for n, (title, _) in enumerate(chapters, 1):
        original = f"山城旧事-{title.split()[0]}"
        for way in HIDING:
            assert best.get((f"{way}-{n}", original), 0) >= 0.97, (way, n, {k: v for k, v in best.items() if k[0] == f"{way}-{n}"})


def test_the_child_combinator_looks_at_the_parent_only():
    html = page('<div class="a"><p>陈<span>守</span></p><span>垃</span></div>', ".a > span{display:none}")
    assert shown(html) == "陈守"
    html = page('<div class="a"><p>陈<u>守</u></p></div>', ".a > p > u{display:none} .a > u{display:none}")
    assert shown(html) == "陈"
