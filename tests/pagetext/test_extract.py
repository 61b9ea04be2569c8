"""pagetext.extraction.page: the chapter in a pirate page, without the site around it, and where the page leads."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import HtmlResponse

from fingerprint.chapters import split_chapters
from pagetext.extraction import page as extract_module
from pagetext.extraction.page import (
    KINDS,
    Extracted,
    Selectors,
    extract,
    is_chapter_text,
    remove_site_lines,
)
from tests.conftest import ROOT
from web.demo.build import build_site
from web.demo.chapters import chapters_from_folder
from web.demo.pages import CHROME_MARKERS, VARIANTS

URL = "http://www.xbiquge-fake.com/book/7/12.html"
PROSE = [
    "山城的雨总是下得没完没了。傍晚时分，青石板路上积起一层薄薄的水，映着两旁店铺里昏黄的灯光。陈守义坐在茶馆靠窗的位置，手里捧着一杯早已凉透的粗茶。",
    "他在这里已经等了三天。三天前，一封没有署名的信被人塞进了他家的门缝，信上只写着一句话：“七月十五，雨夜，茶馆，带上那把钥匙。”字迹潦草，墨色却很新。",
    "茶馆的老板姓周，是个五十来岁的胖子，平日里最爱打听别人的闲事。他端着一壶热水走过来，一边给陈守义续茶，一边压低声音问道：“陈先生，您在等什么人吧？”",
    "陈守义笑了笑，没有回答。他把手伸进长衫的口袋，摸到了那把冰凉的铜钥匙。钥匙是父亲临终前交给他的，父亲说，这把钥匙能打开一扇门，门后面藏着陈家的秘密。",
    # Real prose may say 阅读, even 手机阅读: only site lines go.
    "他放下书，继续阅读。",
    "林晚坐在船头用手机阅读那封转来的长信，信里说旧宅的地契早在二十年前就被人换走了，真正的契约藏在城西那口枯井下面，只有拿着铜钥匙的人才能打开。",
]
WATERMARKS = [
    "天才一秒记住本站地址：www.xbiquge-fake.com",
    "最新章节请访问m.xbiquge-fake.com",
    "手机用户请浏览m.xbiquge-fake.com阅读，更优质的阅读体验。",
    "山城旧事小说网首发",
    "www.xbiquge-fake.com",
    "(本章完)",
]
PAGINATION = ["(1/2)", "本章未完，请点击下一页继续阅读", "第1/3页"]
CHROME = ["脚本里的字", "样式里的字", "我的书架", "排行榜单", "点击领取红包广告", "侧栏推荐书", "本站所有小说均来自网络", "上一章", "下一章", "章节目录"]


def novel_page(lines=PROSE, *, h1="第十二章 雨夜来客", title="第十二章 雨夜来客_山城旧事_笔趣阁", bar="", charset="utf-8") -> str:
    content = "<br><br>".join("&nbsp;&nbsp;&nbsp;&nbsp;" + line for line in lines)
    return f"""<!DOCTYPE html><html><head><meta charset="{charset}">
<title>{title}</title>
<script>var secret = "脚本里的字";</script><style>.x{{content:"样式里的字"}}</style></head>
<body><div class="header"><a href="/">首页</a> <a href="/xuanhuan/">玄幻小说</a> <a href="/top/">排行榜单</a></div>
<div class="nav"><ul><li><a href="/">首页</a></li><li><a href="/shelf/">我的书架</a></li></ul></div>
<div class="bookname"><h1>{h1}</h1>
<div class="bottem1"><a href="11.html">上一章</a> &larr; <a href="./">章节目录</a> &rarr;
<a href="13.html">下一章</a>{bar}</div></div>
<div id="sidebar"><h3>侧栏推荐书</h3><ul><li><a href="/b/1/">万古神帝</a></li><li><a href="/b/2/">武炼巅峰</a></li></ul></div>
<div id="content">{content}<script>document.write("脚本里的字");</script></div>
<div class="ads"><a href="http://ad.example/">点击领取红包广告</a></div>
<div class="bottem2"><a href="11.html">上一章</a> <a href="./">章节目录</a> <a href="13.html">下一章</a>{bar}</div>
<div class="footer">本站所有小说均来自网络 Copyright 2020 笔趣阁</div></body></html>"""


def with_watermarks(lines=PROSE) -> list[str]:
    out = list(lines)
    for i, mark in enumerate(WATERMARKS):
        out.insert(1 + (i * 2) % len(out), mark)
    return out


def assert_clean(text: str) -> None:
    for noise in CHROME + WATERMARKS:
        assert noise not in text, noise
    assert "xbiquge" not in text


# ----------------------------------------------------------------------------- main text


def test_content_div_with_br_lines_keeps_each_line_and_drops_the_site():
    e = extract(novel_page(with_watermarks()), URL)
    assert isinstance(e, Extracted)
    assert e.text.split("\n") == PROSE
    assert_clean(e.text)
    assert e.title == "第十二章 雨夜来客"
    assert e.kind == "chapter" and e.extractor == "density"
    assert e.part is None and e.next_part is None


def test_paragraph_article_keeps_paragraph_order():
    paras = "".join(f"<p>{line}</p>" for line in with_watermarks())
    page = (
        "<html><head><title>雨夜 - 山城旧事 - 某某文学</title></head><body>"
        "<header><a href='/'>首页</a> 我的书架</header><nav><a href='/'>首页</a><a href='/top/'>排行榜单</a></nav>"
        f"<main><article><h1>雨夜</h1>{paras}</article>"
        "<aside><p>侧栏推荐书：一部很长很长的小说的名字，还有它的简介，写得也不短。</p></aside></main>"
        "<footer>本站所有小说均来自网络</footer></body></html>"
    )
    e = extract(page, URL)
    lines = e.text.split("\n")
    assert [x for x in lines if x in PROSE] == PROSE
    assert lines[0] == "雨夜"
    assert_clean(e.text)
    assert e.title == "雨夜"


def test_prose_split_into_sections_is_kept_whole():
    half = len(PROSE) // 2
    sections = "".join(
        "<section>" + "".join(f"<p>{line}</p>" for line in part) + "</section>" for part in (PROSE[:half], PROSE[half:])
    )
    page = f"<html><body><div class='nav'><a href='/'>首页</a></div><article>{sections}</article></body></html>"
    assert extract(page, URL).text.split("\n") == PROSE


def test_one_long_block_without_breaks_is_the_chapter_alone():
    chapter = "".join(PROSE) * 2
    page = (
        "<html><body><div class='wrap'><div class='bar'><a href='11.html'>上一章</a><a href='13.html'>下一章</a></div>"
        f"<div id='content'>{chapter}</div><div class='info'>作者：林岚 字数：3000</div></div></body></html>"
    )
    assert extract(page, URL).text == chapter


def test_inline_watermark_is_cut_from_a_real_paragraph():
    line = "（笔趣阁 www.biquge-fake.la）" + PROSE[0]
    glued = PROSE[1] + "天才一秒记住本站地址：www.biquge-fake.la。"
    e = extract(novel_page([line, glued, *PROSE[2:]]), URL)
    assert e.text.split("\n") == PROSE


SITE_LINES = ["上一章 ← 章节目录 → 下一章 加入书签", "最快更新山城旧事最新章节！", "Copyright © 2024 笔趣阁 All Rights Reserved."]


@pytest.mark.parametrize("mark", WATERMARKS + PAGINATION + SITE_LINES)
def test_site_lines_go_and_prose_stays(mark):
    prose = [PROSE[0], PROSE[4], PROSE[5]]
    assert remove_site_lines("\n".join([prose[0], mark, *prose[1:]])) == "\n".join(prose)


def test_is_chapter_text_thresholds():
    assert is_chapter_text("字" * 200) and not is_chapter_text("字" * 199)
    assert is_chapter_text("words " * 240) and not is_chapter_text("words " * 239)
    assert not is_chapter_text("")


# ----------------------------------------------------------------------------- parts


def test_next_page_link_and_part_marker():
    page = novel_page(PROSE + ["本章未完，请点击下一页继续阅读"], h1="第十二章 雨夜来客(1/2)",
                      bar=' <a href="12_2.html">下一页</a>')
    e = extract(page, URL)
    assert e.next_part == "http://www.xbiquge-fake.com/book/7/12_2.html"
    assert e.part == (1, 2)
    assert e.title == "第十二章 雨夜来客"
    assert "本章未完" not in e.text and e.text.split("\n") == PROSE


@pytest.mark.parametrize("text", ["继续阅读", "2", "»"])
def test_part_url_suffix_is_the_next_part_whatever_the_link_says(text):
    e = extract(novel_page(bar=f' <a href="12_2.html">{text}</a>'), URL)
    assert e.next_part == "http://www.xbiquge-fake.com/book/7/12_2.html"
    second = extract(novel_page(bar=f' <a href="12_3.html">{text}</a>'), URL.replace("12.html", "12_2.html"))
    assert second.next_part == "http://www.xbiquge-fake.com/book/7/12_3.html"


def test_page_query_is_the_next_part():
    e = extract(novel_page(bar=' <a href="?id=12&amp;page=2">下页</a>'), "http://a.example/read.php?id=12")
    assert e.next_part == "http://a.example/read.php?id=12&page=2"
    e = extract(novel_page(bar=' <a href="read.php?id=12&amp;page=3">3</a>'), "http://a.example/read.php?id=12&page=2")
    assert e.next_part == "http://a.example/read.php?id=12&page=3"


@pytest.mark.parametrize("bar", [
    "",  # 下一章 alone
    ' <a href="13.html">下一页</a>',  # 下一页 and 下一章 lead to the same page: the next chapter
    ' <a href="12.html">下一页</a>',  # the page itself
    ' <a href="./">下一页</a>',  # the catalogue
    ' <a href="/book/7/">下一页</a>',
    ' <a href="list.html">目录 下一页</a>',
    ' <a href="12_2.html">下一章</a>',
])
def test_no_next_part(bar):
    assert extract(novel_page(bar=bar), URL).next_part is None


def test_last_part_has_no_next_part():
    page = novel_page(h1="第十二章 雨夜来客（2/2）", bar=' <a href="13.html">下一页</a>')
    e = extract(page, URL.replace("12.html", "12_2.html"))
    assert e.part == (2, 2) and e.next_part is None


def test_mobile_next_page_to_another_chapter_is_not_a_part():
    page = novel_page().replace('<a href="13.html">下一章</a>', '<a href="13.html">下一页</a>')
    assert extract(page, URL).next_part is None
    unfinished = novel_page(PROSE + ["本章未完，请点击下一页继续阅读"])
    unfinished = unfinished.replace('<a href="13.html">下一章</a>', '<a href="13.html">下一页</a>')
    assert extract(unfinished, URL).next_part == "http://www.xbiquge-fake.com/book/7/13.html"


@pytest.mark.parametrize("where,expected", [
    ("title", (2, 3)), ("h1", (3, 4)), ("text", (1, 5)), ("text-bare", (2, 5)), ("none", None),
])
def test_part_from_title_heading_or_text(where, expected):
    title, h1, lines = "第十二章 雨夜来客_山城旧事", "第十二章 雨夜来客", list(PROSE)
    if where == "title":
        title = "第十二章 雨夜来客 第2/3页_山城旧事"
    elif where == "h1":
        h1 += " 3/4"
    elif where == "text":
        lines.append("第1/5页")
    elif where == "text-bare":
        lines.append("2/5")
    e = extract(novel_page(lines, title=title, h1=h1), URL)
    assert e.part == expected
    assert e.title == "第十二章 雨夜来客"
    assert e.text.split("\n") == PROSE


def test_a_fraction_in_prose_is_not_a_part():
    lines = PROSE + ["众人把粮食分成三份，他只拿走了其中的1/3，剩下的都留给了城西那几户吃不上饭的人家，大家都说他心肠好。"]
    assert extract(novel_page(lines), URL).part is None


# ----------------------------------------------------------------------------- links and kinds


CATALOGUE = """<html><head><title>山城旧事最新章节列表_笔趣阁</title></head><body>
<div class="nav"><a href="/">首页</a> <a href="javascript:void(0)">登录</a> <a href="mailto:a@b.c">联系</a></div>
<div id="info"><h1>山城旧事</h1><p>作者：林岚</p><p>简介：山城旧家三代人守护的秘密。</p></div>
<div id="list"><dl><dt>正文</dt>
<dd><a href="1.html">第一章 雨夜来客</a></dd><dd><a href="2.html#top">第二章 旧宅疑云</a></dd>
<dd><a href="3.html">第三章 井下密室</a></dd><dd><a href="/book/7/4.html">第4章 江上</a></dd>
<dd><a href=" 5.html ">第五回　归来</a></dd><dd><a href="http://other.example/6.html">Chapter 6</a></dd>
<dd><a href="1.html">第一章 雨夜来客</a></dd><dd><a href="#bottom">到底部</a></dd>
</dl></div></body></html>"""


def test_catalogue_kind_and_chapter_links_in_order():
    e = extract(CATALOGUE, "http://www.xbiquge-fake.com/book/7/")
    base = "http://www.xbiquge-fake.com/book/7/"
    assert e.kind == "catalogue"
    assert e.chapter_links == [base + "1.html", base + "2.html", base + "3.html", base + "4.html", base + "5.html",
                               "http://other.example/6.html"]
    assert e.links == ["http://www.xbiquge-fake.com/", *e.chapter_links]  # once each, http(s) only, no fragments
    assert e.title == "山城旧事"


def test_base_href_resolves_links():
    page = CATALOGUE.replace("<head>", '<head><base href="http://mirror.example/b/">')
    assert extract(page, "http://www.xbiquge-fake.com/book/7/").chapter_links[0] == "http://mirror.example/b/1.html"


def test_short_page_is_other():
    e = extract("<html><body><h1>404 Not Found</h1><p>页面不存在。</p></body></html>", URL)
    assert e.kind == "other" and "页面不存在" in e.text


# ----------------------------------------------------------------------------- selectors


def test_selectors_pick_title_content_next_page_and_chapter_links():
    page = novel_page(with_watermarks()).replace(
        '<div id="content">',
        '<div class="chapter-title">卷一 雨夜</div><div id="note"><p>作者的话：谢谢大家。</p></div><div id="content">',
    ).replace("</body>", '<a class="np" href="12_2.html">继续</a><div class="toc"><a href="1.html">序</a></div></body>')
    rules = Selectors(title=".chapter-title", content="#note", next_page="//a[@class='np']", chapter_links="div.toc a")
    e = extract(page, URL)
    assert e.text.split("\n") == PROSE  # automatic: the chapter, not the note
    e = extract(page, URL, rules)
    assert e.extractor == "rules"
    assert e.text == "作者的话：谢谢大家。"
    assert e.title == "卷一 雨夜"
    assert e.next_part == "http://www.xbiquge-fake.com/book/7/12_2.html"
    assert e.chapter_links == ["http://www.xbiquge-fake.com/book/7/1.html"]


def test_xpath_text_selector_and_fallback_when_nothing_matches():
    page = novel_page(with_watermarks())
    e = extract(page, URL, Selectors(content="//div[@id='content']/text()", title="//h1/text()"))
    assert e.extractor == "rules" and e.text.split("\n") == PROSE and e.title == "第十二章 雨夜来客"
    nothing = Selectors(title="h2.none", content="#missing", next_page="a.none", chapter_links="dl.none a")
    e = extract(page, URL, nothing)
    assert e.extractor == "density"
    assert e.text.split("\n") == PROSE and e.title == "第十二章 雨夜来客"
    assert e.next_part is None and e.chapter_links == []


def test_bad_selector_fails_when_the_rules_are_made():
    with pytest.raises(ValueError, match="Selectors.content"):
        Selectors(content="div[[")
    with pytest.raises(ValueError, match="Selectors.title"):
        Selectors(title="//h1[")


# ----------------------------------------------------------------------------- bad input


def test_broken_html_is_recovered():
    body = "<br>".join(PROSE)
    page = (
        "<meta charset=utf-8><title>第十二章 雨夜来客_笔趣阁</title>"
        "<div class=nav><a href=/>首页</a> <p>我的书架 <a href=/shelf/>书架"
        f"</div></span></td><div id=content><font color=red>{body}<p>天才一秒记住本站地址：www.xbiquge-fake.com"
        "</div></div></div><div class=footer>本站所有小说均来自网络"
    )
    e = extract(page, URL)
    assert e.text.split("\n") == PROSE
    assert e.kind == "chapter" and e.title == "第十二章 雨夜来客"


@pytest.mark.parametrize("page", ["", "   \n\t", "<html></html>", "<!-- nothing -->", "<html><body></body></html>"])
def test_empty_page_is_other(page):
    e = extract(page, URL)
    assert e.kind == "other" and e.text == "" and e.links == [] and e.next_part is None


def test_markup_lxml_refuses_is_stripped_of_tags(monkeypatch):
    monkeypatch.setattr(extract_module, "parse_html", lambda html: None)
    e = extract("<div>" + "<br>".join(PROSE) + "</div><script>var x = '脚本里的字';</script>", URL)
    assert e.extractor == "regex" and e.text.split("\n") == PROSE and e.kind == "chapter"


def test_xml_declaration_is_accepted():
    page = '<?xml version="1.0" encoding="gbk"?>' + novel_page()
    assert extract(page, URL).text.split("\n") == PROSE


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/=\"' ab-pdivbrhtml!章第一下页(1/2)\x00\x08\x1f&;#\n")), max_size=200))
def test_never_raises(junk):
    e = extract(junk, URL)
    assert e.kind in KINDS
    assert all(u.startswith(("http://", "https://")) and "#" not in u for u in e.links)


# ----------------------------------------------------------------------------- through scrapy


@pytest.mark.parametrize("encoding,declare", [("gbk", True), ("gbk", False), ("utf-8", True), ("utf-8", False)])
def test_scrapy_response_text(encoding, declare):
    page = novel_page(with_watermarks(), charset=encoding)
    kwargs = {"encoding": encoding} if declare else {}  # else scrapy reads the <meta charset>
    response = HtmlResponse(url=URL, body=page.encode(encoding), **kwargs)
    e = extract(response.text, response.url)
    assert e.text.split("\n") == PROSE
    assert e.title == "第十二章 雨夜来客"
    assert "http://www.xbiquge-fake.com/book/7/13.html" in e.links


def test_importing_extract_loads_no_scrapy():
    code = "import sys, pagetext.extraction.page; print('scrapy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- sample site and real chapters


def grams(text: str, k: int = 5) -> set[str]:
    s = re.sub(r"\s+", "", text)
    return {s[i : i + k] for i in range(len(s) - k + 1)}


def recall(extracted: str, original: str) -> float:
    want = grams(original)
    return len(want & grams(extracted)) / len(want)


def chrome_left(text: str) -> list[str]:
    from web.demo.pages import _s2t

    return [m for m in CHROME_MARKERS if m in text or _s2t().convert(m) in text]


def test_every_sample_site_page_gives_its_chapter_back():
    site = build_site(chapters_from_folder(ROOT / "samples" / "originals"), huge_bytes=0)
    pages = {p: r for p, r in site.items() if r.kind in ("chapter", "part", "robots")}
    assert len(pages) >= 7
    for path, r in pages.items():
        e = extract(r.body.decode(r.encoding), "http://127.0.0.1:8000" + path)
        assert e.text == r.text, path
        assert e.kind == "chapter" and not chrome_left(e.text)
        assert e.next_part == ("http://127.0.0.1:8000/book/1/2_2.html" if path == "/book/1/2.html" else None)
    catalogue = extract(site["/book/1/"].body.decode("utf-8"), "http://127.0.0.1:8000/book/1/")
    assert catalogue.kind == "catalogue"
    assert catalogue.chapter_links[:3] == [f"http://127.0.0.1:8000/book/1/{i}.html" for i in (1, 2, 3)]


@pytest.fixture(scope="module")
def alt_chapters(corpus) -> list[tuple[str, str]]:
    """A few chapters of each real web edition in zh_novels_alt (their own site noise included)."""
    out = []
    for f in sorted((corpus / "zh_novels_alt").glob("*.txt")):
        chapters = [c for c in split_chapters(f.read_text(encoding="utf-8")) if c.number is not None]
        for c in (chapters[0], chapters[len(chapters) // 2], chapters[-1]):
            out.append((c.heading, c.body.strip()))
    assert len(out) >= 6
    return out


def test_real_chapters_in_site_chrome_are_recovered(alt_chapters):
    from web.demo.pages import _s2t

    site = build_site(alt_chapters, book="三国演义", huge_bytes=0)
    by_chapter: dict[int, list[str]] = {}
    for path, r in site.items():
        if r.kind in ("chapter", "part"):
            e = extract(r.body.decode(r.encoding), "http://127.0.0.1:8000" + path)
            assert not chrome_left(e.text), (path, chrome_left(e.text))
            by_chapter.setdefault(r.copies, []).append(e.text if r.variant != "big5" else _s2t().convert(e.text))
    assert sorted(by_chapter) == list(range(len(alt_chapters)))
    for i, (heading, body) in enumerate(alt_chapters):
        expected = body if VARIANTS[i % len(VARIANTS)] != "big5" else _s2t().convert(body)
        assert recall("\n".join(by_chapter[i]), expected) >= 0.95, heading
