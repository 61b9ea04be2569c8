"""The pipelines and the encoding middleware, offline: what reaches the store, and how."""
from __future__ import annotations

import pytest
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse, Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from crawler.counts import by_site
from crawler.items import PageItem
from crawler.meta import FORCE_ENCODING
from crawler.middlewares.encoding import EncodingMiddleware
from crawler.pipelines.store import StorePipeline
from crawler.pipelines.validate import ValidatePipeline
from tracker.context import Context
from tracker.registry import register_work

from ..conftest import ROOT

ORIGINALS = ROOT / "samples" / "originals"
TEXT = (ORIGINALS / "山城旧事-第二章.txt").read_text(encoding="utf-8")


@pytest.fixture
def stats():
    return MemoryStatsCollector(get_crawler())


def counts(stats, site="s.test"):
    return by_site(stats.get_stats())[site]


def test_validate_drops_short_pages_with_the_reason(stats):
    v = ValidatePipeline(stats)
    assert v.process_item(PageItem(url="http://s.test/1", site="s.test", text=TEXT)).text == TEXT
    with pytest.raises(DropItem, match="too little text"):
        v.process_item(PageItem(url="http://s.test/2", site="s.test", text="上一章 目录 下一章"))
    assert counts(stats)["skipped"] == {"too little text (under 50 characters)": 1}


def test_store_pipeline_stores_queues_and_matches_here(settings, stats):
    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    p = StorePipeline(settings, stats)
    p.open_spider()
    pirated = PageItem(url="http://s.test/2.html", site="s.test", text=TEXT, title="第二章", encoding="gbk",
                       parts=["http://s.test/2.html", "http://s.test/2_2.html"])
    other = PageItem(url="http://s.test/news.html", site="s.test", text="今天天气很好，" * 40)
    p.process_item(pirated)
    p.process_item(other)
    p.close_spider()
    c = counts(stats)["counts"]
    assert (c["stored"], c["processed"], c["matched"]) == (2, 2, 1)
    ctx = Context(settings)
    page = ctx.store.get_page("http://s.test/2.html")
    assert page.status == "done" and page.site == "s.test"
    assert page.meta["parts"] == 2 and page.meta["part_urls"].split("\n")[1] == "http://s.test/2_2.html"
    (m,) = ctx.store.matches(site="s.test")
    assert m.chapter.startswith("山城旧事/") and m.page == "http://s.test/2.html"
    ctx.close()

    # The same content again: not reprocessed. Changed content: stored and matched again.
    again = StorePipeline(settings, stats)
    again.open_spider()
    again.process_item(pirated)
    again.process_item(PageItem(url="http://s.test/news.html", site="s.test", text="明天下雨，" * 40))
    again.close_spider()
    c = counts(stats)["counts"]
    assert (c["unchanged"], c["stored"], c["processed"]) == (1, 3, 3)


def test_store_pipeline_without_processing_leaves_pages_queued(settings, stats):
    p = StorePipeline(settings, stats, process=False)
    p.open_spider()
    p.process_item(PageItem(url="http://s.test/1.html", site="s.test", text=TEXT))
    p.close_spider()
    ctx = Context(settings)
    assert [pg.key for pg in ctx.store.pages(status="queued")] == ["http://s.test/1.html"]
    ctx.close()


def _response(body: bytes, header: str | None, **meta) -> HtmlResponse:
    headers = {"Content-Type": header} if header else {}
    return HtmlResponse("http://s.test/1.html", body=body, headers=headers,
                        request=Request("http://s.test/1.html", meta=meta))


@pytest.mark.parametrize("codec, header, meta_tag", [
    ("gbk", "text/html; charset=utf-8", "utf-8"),  # the header lies
    ("gbk", "text/html", "utf-8"),  # the <meta> lies
    ("big5", "text/html", ""),  # no label at all
    ("utf-8", "text/html; charset=gbk", "gbk"),  # UTF-8 with leftover GBK labels
])
def test_encoding_middleware_believes_the_bytes(codec, header, meta_tag):
    text = TEXT if codec != "big5" else "山城舊事。雨下了整整一夜，青石板路上積了一層薄薄的水。" * 20
    head = f'<meta charset="{meta_tag}">' if meta_tag else ""
    body = f"<html><head>{head}</head><body><div>{text}</div></body></html>".encode(codec)
    r = _response(body, header)
    fixed = EncodingMiddleware().process_response(r.request, r)
    assert text[:30] in fixed.text


def test_encoding_middleware_obeys_a_forced_encoding():
    body = "<html><body>山城的雨</body></html>".encode("gbk")
    r = _response(body, "text/html; charset=utf-8", **{FORCE_ENCODING: "gbk"})
    assert "山城的雨" in EncodingMiddleware().process_response(r.request, r).text


def test_encoding_middleware_reads_a_gbk_page_with_a_stray_byte_and_counts_it(stats):
    page = f"<html><head><meta charset='gbk'></head><body><div>{TEXT}</div></body></html>"
    r = _response(page[:300].encode("gbk") + b"\xff" + page[300:].encode("gbk"), "text/html", fpt_site="s.test")
    fixed = EncodingMiddleware(stats).process_response(r.request, r)
    assert fixed.encoding in ("gb18030", "gbk") and TEXT[-30:] in fixed.text
    assert counts(stats)["counts"]["bad bytes replaced"] == 1


def test_a_page_seen_under_a_new_site_name_is_matched_again(settings, stats):
    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    for site in ("127.0.0.1:8766", "biquge"):
        p = StorePipeline(settings, stats)
        p.open_spider()
        p.process_item(PageItem(url="http://127.0.0.1:8766/2.html", site=site, text=TEXT))
        p.close_spider()
    ctx = Context(settings)
    assert [m.site for m in ctx.store.matches()] == ["biquge"]
    ctx.close()


def test_with_a_broker_the_pages_go_to_the_workers(settings, stats):
    from tracker.workers import tasks
    from tracker.workers.app import create_celery

    ctx = Context(settings)
    register_work(ctx, "山城旧事", str(ORIGINALS))
    ctx.close()
    app = create_celery(settings, task_always_eager=True)  # the workers' code, run in this process
    p = StorePipeline(settings, stats)
    p.open_spider()
    p.app = app  # what open_spider does when FPT_BROKER_URL is set
    try:
        p.process_item(PageItem(url="http://s.test/2.html", site="s.test", text=TEXT))
        p.close_spider()
    finally:
        tasks.use_context(app, None)
    c = counts(stats)["counts"]
    assert c["sent to the workers"] == 1 and "processed" not in c  # matched by the task, not here
    ctx = Context(settings)
    assert ctx.store.get_page("http://s.test/2.html").status == "done"
    assert [m.page for m in ctx.store.matches()] == ["http://s.test/2.html"]
    ctx.close()
