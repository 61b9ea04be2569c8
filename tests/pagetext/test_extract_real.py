"""The general rules that real sites need: counters, ads, notes, banners, new domains, whole-work pages.

Every page here is written for the test (no copied page); each rule is tested on a shape
a site could take, with words no rule lists, and on the prose it must keep.
"""
from __future__ import annotations

import pytest

from pagetext.extraction.lines import (
    footnote_marks,
    has_site_address,
    is_site_line,
    recurring,
)
from pagetext.extraction.page import extract, remove_site_lines
from tests.linear import assert_linear

URL = "https://novels.example/book/3/45.html"
ZH = [
    "夜色渐深，城门外的官道上只剩下几盏摇晃的灯笼，守门的老兵靠着墙根打起了瞌睡。",
    "沈砚把马拴在驿站后面的槐树下，抖落斗篷上的雪，推门走进了那间早已打烊的酒肆。",
    "掌柜的认出了他，一言不发地从柜台后取出一坛陈酿，又摆上两只粗瓷碗，示意他坐下。",
    "两人对饮了三碗，谁也没有开口。窗外的风声越来越紧，仿佛有什么东西在雪地里奔跑。",
    "直到第四碗酒见了底，掌柜才低声说道：“你要找的人，三天前就已经离开了京城。”",
]
EN = [
    "The rain had not stopped for three days, and the river beneath the old mill ran high and brown with mud.",
    "Mara tied the boat to the post and climbed the slick ladder, her lantern swinging against the wet stone.",
    "Inside, the miller sat by a dead fire with a ledger open on his knees, as if he had been waiting for her.",
    "She set the lantern on the table and told him that the dam upstream would not hold through another night.",
    "He closed the ledger slowly, looked at the water creeping under the door, and reached for his coat at last.",
]


def page(body: str, title: str = "第四十五章 雪夜_旧城_某站") -> str:
    nav = '<div class="menu"><a href="/">首页</a> <a href="/top/">排行</a> <a href="/shelf/">书架</a></div>'
    return f"<html><head><title>{title}</title></head><body>{nav}{body}<div class=footer>关于我们</div></body></html>"


def paragraphs(lines, tail: str = "") -> str:
    return "".join(f"<p>{line}{tail}</p>" for line in lines)


# ----------------------------------------------------------------------------- per-paragraph counters


@pytest.mark.parametrize("counter", ['<span class="cmt">{n}</span>', '<a class="review" href="#c">评论({n})</a>',
                                     '<span>{n} comments</span>', '<button class="pc">+{n}</button>'])
def test_a_counter_ending_every_paragraph_is_furniture(counter):
    body = "<div id=text>" + "".join(f"<p>{line}{counter.format(n=i * 7 + 3)}</p>" for i, line in enumerate(ZH)) + "</div>"
    assert extract(page(body), URL).text.split("\n") == ZH


def test_a_number_that_ends_one_paragraph_is_the_story():
    lines = [*ZH[:4], "他数了数剩下的铜钱，一共是"]
    body = "<div id=text>" + paragraphs(lines[:4]) + f"<p>{lines[4]}<b>12</b></p></div>"
    assert extract(page(body), URL).text.split("\n")[-1] == "他数了数剩下的铜钱，一共是12"


def test_counters_with_text_after_them_stay():
    body = "<div id=text>" + "".join(f"<p>{line[:10]}<span>3</span>{line[10:]}</p>" for line in ZH) + "</div>"
    assert extract(page(body), URL).text.split("\n") == [line[:10] + "3" + line[10:] for line in ZH]


# ----------------------------------------------------------------------------- calls to action and banners


@pytest.mark.parametrize("ad", ["亲,点击进去,给个好评呗", "各位书友，喜欢的话请投一张月票吧！", "Please vote for us on the ranking!",
                                "Enjoying the story? Support us on our site and leave a review!"])
def test_a_call_to_action_inside_the_content_is_dropped(ad):
    lines = ZH if any("\u4e00" <= c <= "\u9fff" for c in ad) else EN
    body = "<div id=text>" + paragraphs([*lines[:2], ad, *lines[2:]]) + "</div>"
    assert extract(page(body), URL).text.split("\n") == lines


@pytest.mark.parametrize("line", ["他点击了收藏，把那页书签夹好。", "“给个好评吧！”她笑着说。", "Click!",
                                  "这太不妙了！主要是在人气投票的意义上！", "这成了大家关注的焦点。",
                                  "She couldn't raise the heavy load herself.", "Support the cause? If all the pupils help, I",
                                  "You must have your share in the conversation, if you are speaking of music.",
                                  "He asked the innkeeper to share the bread and leave a lamp for the road."])
def test_prose_about_the_same_acts_stays(line):
    assert not is_site_line(line)


@pytest.mark.parametrize("banner", ["章节内容加载失败，请刷新页面重试", "Content failed to load. Please refresh the page.",
                                    "Please enable JavaScript in your browser to read this chapter.",
                                    "为了更好的阅读体验，请开启浏览器的JavaScript",
                                    "【手機版頁面暫不支持電腦端閱讀，請使用手機閱讀。】"])
def test_load_and_script_banners_are_dropped(banner):
    body = f'<div id=text><div class="tip">{banner}</div>' + paragraphs(EN) + "</div>"
    assert extract(page(body, "Chapter 45 - The Mill"), URL).text.split("\n") == EN


# ----------------------------------------------------------------------------- translators' notes


def test_note_boxes_and_their_sup_markers_are_dropped():
    body = ("<div id=text>" + f"<p>{EN[0]}<sup><a href='#fn1'>[1]</a></sup></p>" + paragraphs(EN[1:])
            + "<div class='tl-note'><p>TL: a mill is where grain is ground.</p></div>"
            + "<ol class='refs'><li id='fn1'>Grain was ground by water power then.</li></ol></div>")
    assert extract(page(body, "Chapter 45 - The Mill"), URL).text.split("\n") == EN


@pytest.mark.parametrize("cls", ["footnote", "annotation", "translatorNote", "tn"])
def test_a_note_container_by_its_class_words(cls):
    body = f"<div id=text>{paragraphs(EN)}<div class='{cls}'>Mill: a building with machinery for grinding.</div></div>"
    assert extract(page(body, "Chapter 45"), URL).text.split("\n") == EN


def test_a_chapter_in_a_note_class_is_not_a_note():
    # Some sites call the reading area "note-content": the rule never drops most of the page.
    body = f"<div class='note-content'>{paragraphs(EN)}</div>"
    assert extract(page(body, "Chapter 45"), URL).text.split("\n") == EN


def test_paragraphs_in_a_class_that_happens_to_say_tl_stay():
    # Tachyons' "tl" is text-align: left; a site may set it on every paragraph.
    body = "<div id=text>" + "".join(f"<p class='tl lh-copy'>{line}</p>" for line in EN) + "</div>"
    assert extract(page(body, "Chapter 45"), URL).text.split("\n") == EN


def test_plain_text_notes_and_their_marks_are_dropped():
    lines = ["（翻译：某站@某人）", EN[0] + " [1]", *EN[1:], "[1] A mill ground grain by water power.",
             "TL note: thanks for reading", "Editor: Someone"]
    assert remove_site_lines("\n".join(lines)).split("\n") == [EN[0], *EN[1:]]
    notes, marks = footnote_marks(["[1] alone, nothing refers to it"])
    assert not notes and not marks


# ----------------------------------------------------------------------------- site addresses of any domain


@pytest.mark.parametrize("line", ["请记住本站域名：ｂｉｑｕｇｅ。ｘｙｚ", "w w w . x i a o s h u o 8 8 . c l u b 最快更新",
                                  "（新站 m.novel99.vip 无广告）", "天天看书 shuku . la", "Read ahead at www.fastnovels.club",
                                  "本书由 tianya点cc 整理"])
def test_an_address_line_on_an_unknown_domain_is_dropped(line):
    assert has_site_address(line)
    assert remove_site_lines("\n".join([ZH[0], line, ZH[1]])).split("\n") == ZH[:2]


def test_an_address_with_a_full_width_dot_glued_to_a_paragraph_is_cut():
    glued = ZH[0] + "天天看书ｘｉａｏｓｈｕｏ。ｘｙｚ"
    assert remove_site_lines("\n".join([glued, ZH[1]])).split("\n") == ZH[:2]


@pytest.mark.parametrize("line", ["他看了看表，已经是下午三点了。", "It was the end.Then came the rain, and the river rose.",
                                  "Mr. Smith looked at Dr. Jones."])
def test_prose_with_dots_is_not_an_address(line):
    assert not has_site_address(line)


# ----------------------------------------------------------------------------- recurring lines


def test_a_line_a_page_repeats_between_paragraphs_is_dropped():
    slogan = "书友们的支持是我最大的动力"
    text = "\n".join(x for line in ZH for x in (line, slogan))
    assert remove_site_lines(text).split("\n") == ZH
    assert recurring(["“嗯。”"] * 5) == set()  # a repeated line of dialogue is the story's
    assert recurring(["oooooooooooooooooooo"] * 5) == set()  # a scene break is an ornament, not a slogan
    assert recurring(["湘云忙联道：", "百里奚，五羊皮！"] * 4) == set()  # sentences the story repeats


def test_refrains_and_message_headers_the_story_repeats_stay():
    refrain = "Speak your mind"  # a song's line between its verses
    text = "\n".join(x for line in EN for x in (line, refrain))
    assert remove_site_lines(text) == text
    chat = "\n".join(x for line in EN for x in ("From: Mara", "To: Ansel", line))
    assert remove_site_lines(chat) == chat
    assert recurring(["林舟：你到了吗"] * 4) == set()
    assert recurring(["Please vote for this story"] * 3) == {"Please vote for this story"}


# ----------------------------------------------------------------------------- whole-work pages


def whole_work(headings, texts, wrapper="div class='chapter'") -> str:
    tag = wrapper.split()[0]
    return "<div id='chapters'>" + "".join(
        f"<{wrapper}><h3>{h}</h3>{paragraphs(t)}</{tag}>" for h, t in zip(headings, texts)) + "</div>"


def test_a_whole_work_page_gives_every_chapter():
    texts = [ZH, ZH[::-1], ZH[1:] + ZH[:1]]
    heads = ["第一章 雪夜", "第二章 酒肆", "第三章 离京"]
    e = extract(page(whole_work(heads, texts)), URL)
    assert [h for h, _ in e.chapters] == heads
    assert [t.split("\n") for _, t in e.chapters] == texts
    assert e.text.split("\n") == [line for t in texts for line in t]
    assert e.kind == "chapter"


def test_english_chapters_in_sections():
    texts = [EN, EN[::-1]]
    e = extract(page(whole_work(["Chapter 1: The Mill", "Chapter Two"], texts, "section"), "The Mill"), URL)
    assert [t.split("\n") for _, t in e.chapters] == texts


def test_a_page_of_one_chapter_has_no_chapter_list():
    e = extract(page(whole_work(["第一章 雪夜"], [ZH])), URL)
    assert e.chapters == [] and e.text.split("\n")[-5:] == ZH


def test_short_sections_with_headings_are_not_chapters():
    # A sidebar of "第一章 …" teasers, each a line, is no whole work.
    teasers = "".join(f"<div><h4>第{i}章</h4><p>简介</p></div>" for i in "一二三四")
    assert extract(page(f"<div id=text>{paragraphs(ZH)}</div><div class=list>{teasers}</div>"), URL).chapters == []


def test_volumes_of_a_catalogue_are_not_chapters():
    links = "".join(f"<li><a href='/book/3/{i}.html'>第{i}章 某个相当长的章节标题在这里</a></li>" for i in range(1, 12))
    volumes = "".join(f"<div class=volume><h2>第{v}卷 卷名</h2><ul>{links}</ul></div>" for v in "一二三")
    e = extract(page(f"<div id=list>{volumes}</div>"), URL)
    assert e.chapters == [] and e.kind == "catalogue"


# ----------------------------------------------------------------------------- shapes of saved real pages


def loose(lines) -> str:
    """A chapter written as loose text with <br><br> between paragraphs, as most pirate sites do."""
    return "<br><br>".join("&nbsp;&nbsp;&nbsp;&nbsp;" + line for line in lines)


def test_a_control_panel_beside_loose_text_is_dropped():
    # The chapter's text sits loose in a block that also holds the reader's buttons.
    panel = ('<div class="set"><span>背景：</span><a href="javascript:void(0);" onclick="bg(1)">白</a>'
             '<a href="javascript:;" onclick="bg(2)">夜</a><span>字号：</span><a href="javascript:;">大</a>'
             '<a href="#" onclick="size(2)">中</a></div>')
    body = f'<div class="read">{panel}<p class="h">第45章 雪夜</p>{loose(ZH)}<br><br></div>'
    assert extract(page(body, "旧城 第45章 雪夜 某某小说网"), URL).text.split("\n") == ZH


def test_script_links_inside_a_chapter_keep_the_chapter():
    report = '<p><a href="javascript:report(7);">『报错』</a> <a href="javascript:mark(7);">『书签』</a></p>'
    body = f'<div id="box">{report}{loose(ZH)}{report}</div>'
    assert extract(page(body), URL).text.split("\n") == ZH
    # A short paragraph with two script links (pop-up notes) is still a paragraph of the story.
    short = '<p>他抬头看<a href="javascript:;" onclick="note(1)">匾</a>与<a href="javascript:;">联</a>。</p>'
    text = extract(page(f"<div id=text>{paragraphs(ZH[:3])}{short}{paragraphs(ZH[3:])}</div>"), URL).text
    assert "他抬头看匾与联。" in text


def test_a_heading_repeated_at_the_top_of_the_text_is_the_title():
    body = f"<div id=content>&nbsp;&nbsp;&nbsp;&nbsp;第45章&nbsp;&nbsp;雪夜<br><br>{loose(ZH)}</div>"
    e = extract(page(body), URL)
    assert e.title == "第四十五章 雪夜" and e.text.split("\n") == ZH  # the numbers written two ways


def test_a_numbered_heading_and_its_words_at_the_top_are_the_title():
    head = "<p style='text-align:center'><strong>Chapter 003<br></strong><strong>The Mill</strong></p>"
    body = f"<h1>3. The Mill</h1><div class='chapter-content'>{head}{paragraphs(EN)}</div>"
    assert extract(page(body, "3. The Mill - River Tales"), URL).text.split("\n") == EN


def test_a_heading_that_numbers_the_chapter_twice_is_the_title():
    head = "<h4>Chapter 7: Chapter 7 The Mill at Night</h4><p>Chapter 7 The Mill at Night</p>"
    body = f"<h1>River Tales</h1><div id='article'>{head}{paragraphs(EN)}</div>"
    title = "River Tales - Chapter 7 The Mill at Night | Some Novel Site"
    assert extract(page(body, title), URL).text.split("\n") == EN


def test_a_heading_with_the_number_written_the_sites_way_is_the_title():
    body = f"<div id=content><p>RT 0007 – The Mill at Night</p>{paragraphs(EN)}</div>"
    assert extract(page(body, "RT - Chapter 7 - The Mill at Night - Some Site"), URL).text.split("\n") == EN


def test_english_navigation_lines_inside_the_chapter_are_dropped():
    body = f"<div class=fr-view><p>Previous Chapter</p>{paragraphs(EN)}<p>Next Chapter</p></div>"
    assert extract(page(body, "The Mill - River Tales"), URL).text.split("\n") == EN
    line = "He turned to the next chapter of the ledger."
    assert remove_site_lines(line) == line


def test_an_unmarked_note_in_a_run_of_marked_notes_is_a_note():
    prose = [EN[0] + "[1]", EN[1], EN[2] + "[3]"]
    notes = ["[1] a game in his old world.", "[2] a term of endearment.", "[3] a measure of distance."]
    assert remove_site_lines("\n".join(prose + [""] + notes)).split("\n") == EN[:3]


@pytest.mark.parametrize("first", ["天黑，别出门。", "雪夜"])
def test_a_first_line_that_only_shares_the_title_words_stays(first):
    # The story's first sentence, or a heading without a number, is the chapter's own.
    body = f"<div id=content>{loose([first, *ZH])}</div>"
    title = "第一章 天黑别出门_某书_某站" if first.startswith("天黑") else "雪夜_某书_某站"
    assert extract(page(body, title), URL).text.split("\n") == [first, *ZH]


def test_a_plea_in_a_link_and_an_address_sentence_after_the_chapter_are_dropped():
    tail = ('<p><a href="http://reviews.example/s/x" target="_blank">亲,点进去给个好评呗,分数越高更新越快,'
            '听说打满分的书友都找到了好工作哦!</a><br />手机版全新升级地址：http://m.shuku88.la，书签与电脑版同步，'
            '无广告清爽阅读！</p>')
    body = f"<div id=content>{loose(ZH)}<br><br>{tail}</div>"
    assert extract(page(body), URL).text.split("\n") == ZH


def test_a_load_banner_glued_to_a_paragraph_in_brackets_is_cut():
    line = ZH[4] + "……（內容加載失敗！請重載或更換瀏覽器）"
    assert remove_site_lines("\n".join([*ZH[:4], line])).split("\n") == [*ZH[:4], ZH[4] + "……"]
    kept = "他摇了摇头（那盏灯早就坏了），转身走进雨里。"
    assert remove_site_lines(kept) == kept


@pytest.mark.parametrize("line", ["本文来自 某某文库(http://www.mouwenku.com)",
                                  "最新最全的轻小说 某某文库(http://www.mouwenku.com) 为你一网打尽！"])
def test_a_sites_sentence_with_its_address_alone_in_brackets_is_dropped(line):
    assert remove_site_lines("\n".join([line, *ZH, line])).split("\n") == ZH


def test_a_sentence_that_names_an_address_in_the_story_stays():
    line = "他在地址栏里输入了www.example.com，屏幕上跳出一行红字，她的脸色一下子就变了。"
    text = extract(page(f"<div id=content>{loose([*ZH, line])}</div>"), URL).text
    assert "屏幕上跳出一行红字" in text and "www.example.com" not in text


# ----------------------------------------------------------------------------- linear time


def _prose(n: int) -> list[str]:
    return (ZH * (n // 200 + 1))[: max(1, n // 40)]


NEW_PATHS = {
    "counters on every paragraph": (lambda n: page("<div>" + "".join(
        f"<p>{line}<span class=c>{i}</span></p>" for i, line in enumerate(_prose(n))) + "</div>"), 20_000),
    "nested counters": (lambda n: page("<p>字" + "<span>1" * (n // 7) + "</span>" * (n // 7) + "</p>"), 20_000),
    "nested sup markers": (lambda n: page("<p>字" + "<sup><a href='#x'>[1]" * (n // 24) + "</p>"), 20_000),
    "many note boxes": (lambda n: page("<div>" + "<div class=note>注</div>字" * (n // 26) + "</div>"), 20_000),
    "nested note boxes": (lambda n: page("<div class=note>" * (n // 17) + "字" + "</div>" * (n // 17)), 20_000),
    "many chapter wrappers": (lambda n: page("<div>" + "".join(
        f"<div><h3>第{i}章</h3><p>{''.join(ZH)}</p></div>" for i in range(n // 250)) + "</div>"), 20_000),
    "nested headings": (lambda n: page("<div>" + "<h3>第1章" * (n // 8) + "</div>"), 20_000),
    "many script links": (lambda n: page("<div>" + '<a href="javascript:;">大</a>字' * (n // 28) + "</div>"), 20_000),
    "nested control panels": (lambda n: page('<div><a href="#">a</a>' * (n // 20) + "</div>" * (n // 20)), 20_000),
    "a long heading line": (lambda n: page("<div id=content>第1章" + "字" * n + "<br>字</div>"), 20_000),
}


@pytest.mark.parametrize("name", list(NEW_PATHS))
def test_the_new_paths_are_linear(name):
    make, n = NEW_PATHS[name]
    assert_linear(lambda html: extract(html, URL), make, n, what=f"extract on {name}")


HOSTILE_LINES = {
    "spaced letters and dots": (lambda n: "a . " * (n // 4), 20_000),
    "full-width dots": (lambda n: "ａ．" * (n // 2), 20_000),
    "many [n] marks": (lambda n: "[1] " * (n // 4), 20_000),
    "many note lines": (lambda n: "\n".join(f"[{i % 999}] 注" for i in range(n // 8)) + "\n正文[1]", 20_000),
    "repeated short lines": (lambda n: "书友们的支持\n" * (n // 7), 20_000),
    "calls to action": (lambda n: "亲,点击进去,给个好评呗\n" * (n // 12), 20_000),
    "latin after full-width dots": (lambda n: "字。a" * (n // 3), 20_000),
    "full-width address pieces": (lambda n: "ｂ。ｘ" * (n // 3), 20_000),
    "open brackets and a banner": (lambda n: "（字" * (n // 2) + "加载失败", 20_000),
}


@pytest.mark.parametrize("name", list(HOSTILE_LINES))
def test_the_new_line_rules_are_linear(name):
    make, n = HOSTILE_LINES[name]
    assert_linear(remove_site_lines, make, n, what=f"remove_site_lines on {name}")


def test_the_spider_stores_each_chapter_of_a_whole_work_page_as_its_own_page():
    from scrapy.http import HtmlResponse, Request
    from scrapy.utils.test import get_crawler

    from crawler.items import PageItem
    from crawler.meta import SITE
    from crawler.spiders.novel import NovelSpider

    spider = NovelSpider.from_crawler(get_crawler(NovelSpider, {"LOG_LEVEL": "WARNING"}), urls="http://novels.test/")
    url = "http://novels.test/book/3/all.html"
    html = page(whole_work(["第一章 雪夜", "第二章 酒肆"], [ZH, ZH[::-1]]))
    req = Request(url, meta={SITE: next(iter(spider.sites))})
    items = [o for o in spider.parse(HtmlResponse(url=url, body=html.encode(), encoding="utf-8", request=req))
             if isinstance(o, PageItem)]
    assert [(i.url, i.title, i.text.split("\n")) for i in items] == [
        (url + "#chapter-1", "第一章 雪夜", ZH), (url + "#chapter-2", "第二章 酒肆", ZH[::-1])]
    assert all(i.parts == [url] for i in items)
