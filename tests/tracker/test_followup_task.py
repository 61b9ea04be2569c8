"""The daily follow-up as Celery runs it: scheduled by beat at FPT_RECHECK_HOUR, retried like
every task, and, run, it re-checks the pages whose takedown was sent and tells the subscribers."""
from __future__ import annotations

import json

from tracker.context import Context
from tracker.followup.notify import subscribe
from tracker.pipeline import process_page
from tracker.registry import register_work
from tracker.settings import Settings
from tracker.store import Page, StoreError
from tracker.workers import tasks
from tracker.workers.app import create_celery
from tracker.workers.task_names import FOLLOWUP

from .conftest import SAMPLES
from .fixture_site import pirate_site, webhook_receiver

WORK = "山城旧事"
CHAPTER = f"{WORK}/山城旧事-第二章"


def test_beat_runs_the_follow_up_daily_at_the_recheck_hour(tmp_path):
    s = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_RECHECK_HOUR": "7", "FPT_MAX_ATTEMPTS": "3"})
    app = create_celery(s)
    entry = app.conf.beat_schedule["daily-followup"]
    assert entry["task"] == FOLLOWUP == "tracker.tasks.followup"
    assert entry["schedule"].hour == {7} and entry["schedule"].minute == {0}
    task = app.tasks[FOLLOWUP]
    assert task.max_retries == 3 and StoreError in task.autoretry_for and not task.acks_late


def test_the_task_rechecks_and_tells(tmp_path):
    s = Settings.load({"FPT_HOME": str(tmp_path / "home")})
    app = create_celery(s, task_always_eager=True)
    ctx = Context(s)
    tasks.use_context(app, ctx)
    try:
        register_work(ctx, WORK, SAMPLES / "originals")
        with pirate_site() as site, webhook_receiver() as hook:
            subscribe(ctx.store, "webhook", hook.url, site="pirate", secret="k")
            url = f"{site.url}/gone.html"  # never served: a 404
            ctx.store.upsert_page(Page(key=url, url=url, site="pirate",
                                       text=(SAMPLES / "originals" / "山城旧事-第二章.txt").read_text("utf-8")))
            process_page(ctx, url)
            ctx.store.set_match_status(url, CHAPTER, "takedown-sent")
            result = app.tasks[FOLLOWUP].apply_async().get()
        assert result["rechecked"] == 1 and result["removed"] == 1 and result["webhooks"] == 2
        assert [json.loads(b)["kind"] for _, b in hook.received] == ["new-match", "removed"]
        assert ctx.store.get_match(url, CHAPTER).status == "removed"
    finally:
        tasks.use_context(app, None)
        ctx.close()
