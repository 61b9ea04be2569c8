"""html_to_text and looks_like_html: the chapter text of a page, without the site around it."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagetext.html import (
    html_to_text,
    looks_like_html,
    parse_html,
    remove_furniture,
    strip_tags,
)

LINES = [
    "诗曰：混沌未分天地乱，茫茫渺渺无人见。",
    "自从盘古破鸿蒙，开辟从兹清浊辨。",
    "覆载群生仰至仁，发明万物皆成善。",
    "盖闻天地之数，有十二万九千六百岁为一元。将一元分为十二会，乃子、丑、寅、卯、辰、巳、午、未、申、酉、戌、亥之十二支也。",
]

NOVEL_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<title>第一回 灵根育孕源流出_西游记_笔趣阁</title>
<script>var secret = "脚本里的字";</script><style>.x{content:"样式里的字"}</style></head>
<body><div class="header"><a href="/">首页</a> <a href="/xuanhuan">玄幻小说</a> <a href="/top">排行榜单</a></div>
<div class="nav"><ul><li><a href="/">首页</a></li><li><a href="/shelf">我的书架</a></li></ul></div>
<div class="bookname"><h1>第一回 灵根育孕源流出</h1>
<div class="bottem1"><a href="/1">上一章</a> &larr; <a href="/list">章节目录</a> &rarr; <a href="/3">下一章</a></div></div>
<div id="content">&nbsp;&nbsp;&nbsp;&nbsp;LINE0<br /><br />&nbsp;&nbsp;&nbsp;&nbsp;LINE1<br/>\u3000\u3000LINE2<br>LINE3</div>
<div class="ads"><a href="http://ad.example">点击领取红包广告</a></div>
<div class="footer">本站所有小说均来自网络 Copyright 2020 笔趣阁</div></body></html>"""


def _page() -> str:
    page = NOVEL_PAGE
    for i, line in enumerate(LINES):
        page = page.replace(f"LINE{i}", line)
    return page


def test_novel_page_keeps_br_lines_and_drops_the_site():
    text, meta = html_to_text(_page())
    lines = text.split("\n")
    for line in LINES:
        assert line in lines  # each <br> line is its own line, indentation stripped
    for noise in ("脚本里的字", "样式里的字", "我的书架", "排行榜单", "下一章", "红包广告", "Copyright", "本站所有"):
        assert noise not in text
    assert meta["title"] == "第一回 灵根育孕源流出_西游记_笔趣阁"


def test_paragraph_article_keeps_paragraph_order():
    paras = "".join(f"<p>{line}</p>" for line in LINES)
    page = f"<html><head><title>文章</title></head><body><nav><a href='/'>首页</a></nav><article>{paras}</article></body></html>"
    text, meta = html_to_text(page)
    assert [line for line in text.split("\n") if line in LINES] == LINES
    assert "首页" not in text
    assert meta["title"] == "文章"


def test_title_falls_back_to_h1():
    _, meta = html_to_text(f"<html><body><h1>第二回</h1><div>{LINES[0]}</div></body></html>")
    assert meta["title"] == "第二回"


def test_class_names_containing_ad_letters_are_not_removed():
    """'read-content' contains the letters "ad" but is the chapter, not an ad."""
    page = f'<html><body><div class="read-content">{"<br>".join(LINES)}</div></body></html>'
    text, _ = html_to_text(page)
    assert all(line in text for line in LINES)


def test_xml_declaration_with_encoding_is_accepted():
    page = f'<?xml version="1.0" encoding="gbk"?><html><body><p>{LINES[1]}</p></body></html>'
    assert html_to_text(page)[0] == LINES[1]


@pytest.mark.parametrize(
    "broken",
    ["", "   ", "<html", "<<<>>>", "<div><p>未闭合<b>标签<div>还有</p>", "<!-- 只有注释 -->", "<html><body></body></html>",
     "\x00<html>", "<p>" * 5000, "</div></span></p>" * 100, "<script>不关闭"],
)
def test_broken_html_does_not_crash(broken):
    text, meta = html_to_text(broken)
    assert isinstance(text, str) and "title" in meta
    assert "<p>" not in text and "不关闭" not in text


def test_unclosed_tags_keep_their_text():
    text, _ = html_to_text("<div><p>未闭合的<b>标签<div>还有</p>")
    assert "未闭合的" in text and "标签" in text and "还有" in text


@pytest.mark.parametrize(
    "text,expected",
    [
        (_page(), True),
        ("<html><body>x</body></html>", True),
        ("<!doctype html>\n<p>x", True),
        ("<div>一</div><p>二</p><br>三", True),
        ("《西游记》第一回\n诗曰：混沌未分天地乱", False),
        ("<<西游记>> 第一回：他说 a<b 且 c>d", False),
        ("第一回 <b>加粗</b> 只有一个标签", False),
        ("", False),
    ],
)
def test_looks_like_html(text, expected):
    assert looks_like_html(text) is expected


@given(st.text(max_size=300))
def test_any_text_gives_text_without_crashing(text):
    out, meta = html_to_text(text)
    assert isinstance(out, str) and isinstance(meta["title"], str)


@given(st.lists(st.sampled_from(["<div>", "</div>", "<p>", "<br>", "<script>", "</script>", "<a href=x>", "</a>", "你好", "世界", "&nbsp;", "&amp;", "<"]), max_size=60))
def test_tag_soup_never_crashes_and_never_leaks_tags(parts):
    out, _ = html_to_text("<html><body>" + "".join(parts) + "</body></html>")
    assert "<div>" not in out and "<br>" not in out


def test_text_after_a_comment_is_kept():
    text, _ = html_to_text("<html><body><div>第一行正文内容<!-- 广告位 -->第二行正文内容</div></body></html>")
    assert "第一行正文内容" in text and "第二行正文内容" in text and "广告位" not in text


def test_control_characters_do_not_break_extraction():
    text, _ = html_to_text("<html><body><div id='content'>山城\x08的雨\x00下了一夜</div></body></html>")
    assert text == "山城的雨下了一夜"


def test_dropped_furniture_keeps_the_text_after_it_in_order():
    html = "<html><body><div>" + "".join(f"第{i}段<div class=ad>广告</div>" for i in range(5)) + "完</div></body></html>"
    text, _ = html_to_text(html)
    assert "广告" not in text and "第0段第1段第2段第3段第4段完" in text.replace("\n", "")


def test_comments_and_scripts_between_text_keep_it_in_order():
    root = remove_furniture(parse_html("<div>一<!--a-->二<script>x</script>三<?pi?>四<!--b--></div>"))
    assert root.text_content() == "一二三四"


def test_a_block_that_is_mostly_links_is_dropped_whatever_nests_inside():
    html = ("<html><body><div id=content>" + "正文很长的一段话。" * 5 + "</div>"
            "<div><span><a href='/1'>上一章</a></span> <a href='/2'>目录</a> <a href='/3'>下一章</a></div></body></html>")
    text, _ = html_to_text(html)
    assert "正文很长的一段话" in text and "目录" not in text


@pytest.mark.parametrize(
    "markup, expected",
    [
        ("a<script>x</script>b", "a b"),
        ("a<script>x<script>y</SCRIPT >b", "a b"),  # the first closing tag ends it, in any case
        ("a<style>x</style>b<script>never closed", "a b never closed"),
        ("a<br>b<p class=x>c</p>d", "a\nb\nc\nd"),
        ("a < b and c > d", "a d"),  # a stray "<" still opens a tag when a ">" follows
        ("<<<< 书名", "<<<< 书名"),  # no ">" after them: the text stays
    ],
)
def test_strip_tags(markup, expected):
    assert strip_tags(markup) == expected


@pytest.mark.parametrize("page", ["<<?xml version='1.0' encoding='gbk'?>\ufffe",
                                  "<html><body><p>他\uffff们</p><!-- x\ud800 --><p>说\x00话</p></body></html>"])
def test_non_xml_code_points_are_dropped_not_raised(page):
    text, _ = html_to_text(page)
    assert not any(c in text for c in "\ufffe\uffff\ud800\x00")
