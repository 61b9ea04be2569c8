"""Lines a site repeats on many of its pages (pagetext.extraction.sitememory.SiteLines).

The pages are written for the test: chapters of one made-up site, each with its own story
lines and the same watermark line the site prints on every page.
"""
from __future__ import annotations

import pytest

from pagetext.extraction.sitememory import SiteLines

WATERMARK = "云起书院倾情连载长篇佳作敬请期待"


def chapter(k: int, extra: str = WATERMARK) -> str:
    story = [f"第{k}天清晨，雾气还没有散去，码头上的船工已经开始搬运货物。",
             f"他数了数手里的铜钱，一共是{k * 3}枚，够买两个烧饼。",
             "“你又来晚了。”掌柜头也不抬地说。"]
    return "\n".join([story[0], extra, *story[1:]] if extra else story)


def test_a_line_on_every_page_of_a_site_goes_once_enough_pages_showed_it():
    memory = SiteLines(pages=4)
    texts = [memory.clean_and_learn("site-a", chapter(k)) for k in range(1, 9)]
    assert all(WATERMARK in t for t in texts[:3])  # not yet seen on enough pages
    assert all(WATERMARK not in t for t in texts[3:])
    assert texts[-1] == chapter(8, extra="")


def test_each_site_has_its_own_lines():
    memory = SiteLines(pages=3)
    for k in range(1, 6):
        memory.learn("site-a", chapter(k))
    assert memory.clean("site-b", chapter(9)) == chapter(9)
    assert memory.site_lines("site-a") == {WATERMARK}


def test_dialogue_sentences_and_ornaments_are_never_a_sites_lines():
    memory = SiteLines(pages=2)
    kept = ["“你又来晚了。”掌柜头也不抬地说。", "欲知后事如何，且听下回分解。", "＊＊＊＊＊＊＊＊", "He shook his head"]
    for k in range(1, 6):
        memory.learn("site-a", "\n".join([f"第{k}段故事。", *kept]))
    assert memory.site_lines("site-a") == set()


def test_a_line_on_a_few_pages_of_many_is_the_storys():
    memory = SiteLines(pages=3, share=0.5)
    for k in range(1, 21):
        memory.learn("site-a", chapter(k, extra="师父留下的那本剑谱" if k % 5 == 0 else ""))
    assert memory.site_lines("site-a") == set()  # on 4 pages of 20


def test_memory_stays_bounded():
    memory = SiteLines(pages=2, max_lines=50)
    for k in range(400):
        memory.learn("site-a", f"独一无二的一行字编号{k}\n{WATERMARK}")
    assert len(memory._counts["site-a"]) <= 50
    assert memory.site_lines("site-a") == {WATERMARK}


def test_bad_settings_say_what_is_wrong():
    with pytest.raises(ValueError, match="pages >= 2"):
        SiteLines(pages=1)


def test_the_spider_drops_a_sites_repeated_line_from_the_chapters_that_follow():
    from scrapy.http import HtmlResponse, Request
    from scrapy.utils.test import get_crawler

    from crawler.items import PageItem
    from crawler.meta import SITE
    from crawler.spiders.novel import NovelSpider

    spider = NovelSpider.from_crawler(get_crawler(NovelSpider, {"LOG_LEVEL": "WARNING"}), urls="http://novels.test/")
    site = next(iter(spider.sites))
    texts = []
    for k in range(1, 11):
        lines = [f"第{k}天清晨，雾气还没有散去，码头上的船工已经开始搬运货物，远处传来一阵低沉的号角声{'。' * i}"
                 f"老船夫把缆绳绕在木桩上，抬头看了看天色，说今天怕是要起风了，大家手脚都快一些{i}。"
                 for i in range(1, 5)]
        body = "<br><br>".join([*lines[:2], WATERMARK, *lines[2:], "“你又来晚了。”掌柜头也不抬地说。"])
        html = f"<html><head><title>第{k}章 码头_某书_某站</title></head><body><div id=content>{body}</div></body></html>"
        url = f"http://novels.test/book/3/{k}.html"
        response = HtmlResponse(url=url, body=html.encode(), encoding="utf-8", request=Request(url, meta={SITE: site}))
        texts += [o.text for o in spider.parse(response) if isinstance(o, PageItem)]
    assert len(texts) == 10
    assert all(WATERMARK in t for t in texts[:7]) and not any(WATERMARK in t for t in texts[7:])
