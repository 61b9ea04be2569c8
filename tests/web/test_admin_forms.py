"""Small admin form fixes: times shown as on the other pages (with the ISO time kept in a
<time datetime>), and a webhook form whose label and checks agree on http(s)."""
import re

from tracker import site_crawls

from .conftest import post

STARTED, ENDED = "2026-11-20T06:10:00+00:00", "2026-11-20T06:15:30+00:00"


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no tags, no attributes."""
    return re.sub(r"<[^>]*>", " ", html)


def test_a_sites_crawl_times_read_like_the_other_pages_with_the_iso_time_kept(admin, settings):
    path = site_crawls.state_file(settings, "biquge")
    path.parent.mkdir(parents=True, exist_ok=True)
    site_crawls.write_state(path, {"state": "finished", "site": "biquge", "started_at": STARTED, "finished_at": ENDED,
                                   "outcome": "finished", "fetched": 10})
    html = admin.get("/sites/manage", query_string={"name": "biquge"}).get_data(as_text=True)
    crawl = html[html.index('<section id="crawl">'):]
    crawl = crawl[:crawl.index("</section>")]
    assert f'<time datetime="{STARTED}">2026-11-20 06:10</time> UTC' in crawl
    assert f'<time datetime="{ENDED}">2026-11-20 06:15</time> UTC (finished)' in crawl
    text = visible_text(crawl)
    assert "T06:" not in text and "+00:00" not in text, text
