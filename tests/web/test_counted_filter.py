"""Counts on the admin's pages agree with their nouns: "1 chapter", "3 chapters", "1,024 pages"."""
from __future__ import annotations

import re

import pytest

from tracker.store import Chapter, Work


@pytest.mark.parametrize("n, noun, said", [(1, "copy", "1 copy"), (2, "copy", "2 copies"), (0, "match", "0 matches"),
                                           (1024, "page", "1,024 pages"), (None, "query", "0 queries")])
def test_the_filter(app, n, noun, said) -> None:
    assert app.jinja_env.from_string("{{ n|counted(noun) }}").render(n=n, noun=noun) == said


def words(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_work_of_one_chapter_says_one_chapter(admin, store) -> None:
    store.upsert_work(Work(id="短篇", title="短篇", author=""))
    store.upsert_chapter(Chapter(key="短篇/第1章", work="短篇", title="第1章", text="一个短短的故事。" * 20, number=1))
    chapters = words(admin.get("/works/短篇/chapters").get_data(as_text=True))
    assert "1 chapter" in chapters and "1 chapters" not in chapters
    remove = words(admin.get("/works/短篇/remove").get_data(as_text=True))
    assert "its 1 chapter with their fingerprints" in remove and "the 0 matches found" in remove


def test_a_work_of_several_chapters_says_chapters(admin, store) -> None:
    n = sum(1 for _ in store.chapters(work="山城旧事"))
    assert n > 1
    remove = words(admin.get("/works/山城旧事/remove").get_data(as_text=True))
    assert f"its {n} chapters with their fingerprints" in remove
    report = words(admin.get("/works/山城旧事").get_data(as_text=True))
    assert f"of {n} chapters copied in full" in report


def test_a_site_crawled_once_says_last_crawl(admin, store) -> None:
    assert len(store.crawl_runs(site="biquge")) == 1
    html = words(admin.get("/sites/view?name=biquge").get_data(as_text=True))
    assert "Last crawl " in html and "Last 1 crawls" not in html
