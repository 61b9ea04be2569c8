"""The takedown notice speaks of one page and one work in the singular."""
from __future__ import annotations

from datetime import date

from web.review.takedown import notice_text

from .test_takedown import M1, items


def test_one_page_of_one_work(store) -> None:
    store.set_match_status(*M1, "confirmed", by="t")
    found, more = items(store, site="biquge")
    text = notice_text(found, sender="林岚工作室", contact="rights@example.com", today=date(2026, 11, 22), more=more)
    assert "We hold the rights to the following work:\n" in text
    assert "The page listed below reproduces chapters of this work without\n" in text
    assert "We ask you to remove it, or disable access to it, without delay." in text
    assert "(s)" not in text
