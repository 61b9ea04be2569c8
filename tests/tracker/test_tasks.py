"""The Celery tasks, run eagerly against an SQLite store in tmp_path and the in-process index."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracker import pipeline
from tracker.context import Context
from tracker.registry import register_work
from tracker.settings import Settings, SettingsError
from tracker.store import Page, StoreError
from tracker.workers import tasks
from tracker.workers.app import create_celery, require_broker, run_beat, run_worker
from tracker.workers.backlog import pages_to_process
from tracker.workers.queue import dispatch_pages

WORK = "雾港来信"

CHAPTERS = {
    "第一章": (
        "第一章 潮声\n"
        "雾港的清晨总是从汽笛声开始的。沈知远推开阁楼的木窗，海风夹着咸湿的气味扑进来，把桌上那叠泛黄的信纸吹得哗哗作响。"
        "他连忙伸手按住，指尖触到最上面那封信的落款，只有一个歪歪斜斜的“苏”字，墨迹早已褪成了淡褐色。\n"
        "这些信是他在旧书铺的夹层里发现的。书铺老板说，那排书架原本属于码头边一户姓苏的人家，战乱时全家搬去了南洋，"
        "只留下满屋的旧书和一只锈死的铁皮箱。沈知远花了三块银元买下整箱书，本想转手卖给城里的藏书家，却在第七本书的封底摸到了异样的厚度。\n"
        "他用裁纸刀轻轻挑开封底的糊纸，十二封信整整齐齐地叠在里面，每一封都写给同一个人：阿澄。"
        "信里说的多是码头上的琐事，哪条船靠了岸，哪家铺子换了招牌，鱼价又涨了几文，可每封信的末尾都重复着同一句话："
        "灯塔第三层的砖缝里，有我留给你的东西。\n"
        "沈知远在雾港住了二十年，从没听说过哪座灯塔有第三层。港口那座白色的灯塔只有两层，顶上是灯室，下面是守塔人的小屋。"
        "他把信按日期排好，一封一封重新读过，越读越觉得这不是寻常的家书，倒像是有人故意把一条路线拆开，藏进了鸡毛蒜皮的闲话里。\n"
    ),
    "第二章": (
        "第二章 守塔人\n"
        "守塔的老周今年六十有三，一条腿在年轻时被缆绳绞断过，走起路来一高一低。沈知远提着两斤黄酒上门的时候，老周正蹲在门口修补渔网，"
        "听说他要打听灯塔的旧事，眯起眼睛看了他半天，才把他让进屋里。\n"
        "屋里暗得很，只有一扇朝海的小窗。老周倒了两碗酒，自己先喝了一大口，慢慢说道，这座塔是光绪年间洋人修的，原本确实有三层，"
        "民国十九年刮了一场大台风，把最上面的灯室整个掀进了海里，后来重修的时候，工匠图省事，把第二层改成了灯室，第三层就这么没了。\n"
        "沈知远心里一动，问他旧塔的砖都去了哪里。老周说，能用的砖都砌进了新塔的地基，碎的就扔在塔后的礁石滩上，涨潮时淹着，退潮时才露出来。"
        "他说到这里忽然停住，盯着沈知远手里的信封看了很久，声音低了下去：你这信是从哪里来的，这笔迹我见过。\n"
        "原来四十年前，老周还是个跑船的小伙计，曾替一个姓苏的姑娘往南洋捎过一只木匣。姑娘叮嘱他，木匣只能交到一个叫阿澄的人手里，"
        "可他在南洋找了整整三个月，也没找到这个人，最后只好把木匣原样带了回来。等他回到雾港，苏家已经人去楼空，木匣就一直压在他的床底下。\n"
    ),
    "第三章": (
        "第三章 退潮\n"
        "木匣比沈知远想象的要小，樟木做的，四角包着铜皮，锁扣上缠着一圈早已发黑的红绳。老周说他这辈子没打开过，答应了人的事，就得守着。"
        "沈知远也没有打开，他把木匣和十二封信并排放在桌上，忽然注意到匣底刻着一行极小的字：潮落三尺，第九块青石。\n"
        "第二天正逢大退潮。天还没亮，沈知远就带着手电和铁钎去了塔后的礁石滩。海水退得很远，露出大片长满藤壶的黑色礁石，"
        "碎砖夹在石缝之间，被海水磨得圆润光滑。他按信里提到的次序，从塔基向东数青石，数到第九块的时候，铁钎碰到了空响。\n"
        "石板下面是一个用油布裹了好几层的铁盒。打开铁盒，里面没有金银，只有一张船票、一枚褪色的发簪，和一封没有寄出的信。"
        "信是写给苏家姑娘的，落款正是阿澄。信里说，他在南洋等了她三年，船票早已买好，只等她来。\n"
        "沈知远握着那张发脆的船票，在潮水重新涨起来之前站了很久。他终于明白，两个人都在等，却都以为对方没有来。"
        "远处的灯塔亮了起来，一下，又一下，像是在替谁数着那些错过的日子。\n"
    ),
}

# Chapter two as a pirate site shows it: site chrome and ads around the text, one paragraph left out.
PIRATED = (
    "笔趣阁 最新章节 雾港来信 第二章 守塔人\n"
    "天才一秒记住本站地址：www.biqu-ge.com 手机阅读 m.biqu-ge.com\n"
    + "\n".join(CHAPTERS["第二章"].splitlines()[1:4])
    + "\n本章未完，请点击下一页继续阅读\n"
    + CHAPTERS["第二章"].splitlines()[4]
    + "\n上一章 返回目录 下一章 加入书签\n"
)
ADS_ONLY = (
    "天才一秒记住本站地址：www.biqu-ge.com\n"
    "手机阅读 m.biqu-ge.com 无弹窗 无广告\n"
    "上一章 返回目录 下一章 加入书签 投推荐票\n"
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Only FPT_HOME and the retry count: no Mongo, Redis or broker from the environment.
    return Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_MAX_ATTEMPTS": "3"})


@pytest.fixture
def app(settings):
    # Eager, without propagating: a retry runs again at once and the result keeps the final state.
    app = create_celery(settings, task_always_eager=True)
    yield app
    tasks.use_context(app, None)


@pytest.fixture
def ctx(app) -> Context:
    """The Context the tasks of `app` use, with the work registered."""
    ctx = tasks.context(app)
    folder = Path(ctx.settings.home).parent / "originals"
    folder.mkdir()
    for name, text in CHAPTERS.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    report = register_work(ctx, WORK, folder, author="林澄")
    assert len(report.added) == 3
    assert tasks.context(app) is ctx
    yield ctx
    ctx.close()


def store_page(ctx: Context, key: str, text: str, site: str = "biquge") -> None:
    ctx.store.upsert_page(Page(key=key, text=text, site=site, url=f"https://www.{site}.com/{key}"))


def run(app, name: str, *args):
    return app.tasks[f"tracker.tasks.{name}"].apply_async(args)


def test_create_celery_configuration(settings):
    app = create_celery(settings)
    c = app.conf
    assert c.task_acks_late and c.task_reject_on_worker_lost and c.worker_prefetch_multiplier == 1
    assert c.task_serializer == "json" and c.accept_content == ["json"]
    assert c.broker_connection_retry_on_startup is True
    entry = c.beat_schedule["daily-recrawl-and-process"]
    assert entry["task"] == "tracker.tasks.daily"
    assert entry["schedule"].hour == {settings.recrawl_hour} and entry["schedule"].minute == {0}
    hourly = c.beat_schedule["hourly-scheduled-crawls"]
    assert hourly["task"] == "tracker.tasks.scheduled_crawls" and hourly["schedule"].minute == {0}
    assert hourly["schedule"].hour == set(range(24))
    assert c.timezone == "UTC"
    for name in ("process_page", "register_chapter", "reindex", "daily"):
        task = app.tasks[f"tracker.tasks.{name}"]
        assert task.max_retries == 3  # FPT_MAX_ATTEMPTS
        assert task.retry_backoff and task.retry_jitter
        assert StoreError in task.autoretry_for


def test_task_names_stay_those_deployments_route_and_schedule(settings):
    # Routing rules, beat entries and queued messages name the tasks; moving code must not rename them.
    app = create_celery(settings)
    names = {"tracker.tasks.process_page", "tracker.tasks.process_image", "tracker.tasks.read_picture",
             "tracker.tasks.register_chapter", "tracker.tasks.reindex", "tracker.tasks.daily", "tracker.tasks.followup",
             "tracker.tasks.scheduled_crawls"}
    assert {n for n in app.tasks if n.startswith("tracker.")} == names
    assert set(app.conf.task_annotations) == names
    assert app.conf.task_default_queue == "fptrack"
    assert tasks.process_page.name == "tracker.tasks.process_page" and tasks.daily.name == "tracker.tasks.daily"


def test_bad_recrawl_hour_is_a_settings_error(tmp_path):
    with pytest.raises(SettingsError, match="FPT_RECRAWL_HOUR"):
        create_celery(Settings.load({"FPT_HOME": str(tmp_path), "FPT_RECRAWL_HOUR": "24"}))


def test_worker_and_beat_need_a_broker(settings):
    with pytest.raises(SettingsError, match="FPT_BROKER_URL"):
        require_broker(settings)
    with pytest.raises(SettingsError, match="FPT_BROKER_URL"):
        run_worker(settings, [])
    with pytest.raises(SettingsError, match="FPT_BROKER_URL"):
        run_beat(settings, [])


def test_process_page_creates_the_expected_match(app, ctx):
    store_page(ctx, "biquge/2.html", PIRATED)
    out = run(app, "process_page", "biquge/2.html").get()
    assert out == {"page": "biquge/2.html", "status": "done", "matches": 1, "reason": ""}
    [m] = ctx.store.matches(page="biquge/2.html")
    assert m.chapter == f"{WORK}/第二章" and m.work == WORK and m.site == "biquge"
    assert m.containment > 0.5
    assert ctx.store.get_page("biquge/2.html").status == "done"


def test_process_page_twice_does_not_duplicate(app, ctx):
    store_page(ctx, "biquge/2.html", PIRATED)
    run(app, "process_page", "biquge/2.html").get()
    first = ctx.store.matches()
    out = run(app, "process_page", "biquge/2.html").get()
    assert out["matches"] == 1
    again = ctx.store.matches()
    assert [(m.page, m.chapter) for m in again] == [(m.page, m.chapter) for m in first]
    assert again[0].first_seen == first[0].first_seen
    assert ctx.store.counts()["pages"]["done"] == 1 and len(again) == 1


def test_page_with_only_ads_fails_with_a_reason(app, ctx):
    store_page(ctx, "ads.html", ADS_ONLY)
    out = run(app, "process_page", "ads.html").get()
    assert out["status"] == "failed" and out["matches"] == 0
    page = ctx.store.get_page("ads.html")
    assert page.status == "failed" and page.reason == pipeline.EMPTY_REASON
    assert ctx.store.matches() == []


def test_missing_page_is_reported_not_raised(app, ctx):
    assert run(app, "process_page", "nowhere").get()["status"] == "missing"


def test_store_error_retries_then_keeps_the_page(app, ctx, monkeypatch):
    store_page(ctx, "biquge/2.html", PIRATED)
    calls = []

    def broken(ctx_, key):
        calls.append(key)
        raise StoreError("the store is down (test)")

    monkeypatch.setattr(pipeline, "process_page", broken)
    task = app.tasks["tracker.tasks.process_page"]
    retries = []
    real_retry = task.retry
    monkeypatch.setattr(task, "retry", lambda *a, **kw: retries.append(kw) or real_retry(*a, **kw))
    result = task.apply_async(("biquge/2.html",))
    assert result.state == "FAILURE"
    with pytest.raises(StoreError):
        result.get()
    assert len(calls) == 1 + 3  # the first run and FPT_MAX_ATTEMPTS retries
    assert len(retries) == 4  # the last call gives up and raises
    assert all(kw.get("countdown") is not None for kw in retries)  # exponential backoff
    page = ctx.store.get_page("biquge/2.html")  # still stored, with why it failed
    assert page.status == "failed" and "gave up after 3 retries" in page.reason and "store is down" in page.reason
    assert page.attempts == 1
    assert ctx.store.matches() == []

    # The store is back: the daily run sends the page again and it is processed.
    monkeypatch.undo()
    summary = run(app, "daily").get()
    assert summary == {"queued": 0, "retried": 1, "images": 0, "pictures": 0, "discovered": {"skipped": "no search API configured (FPT_SEARCH_URL)"}, "evidence_removed": 0, "events_removed": 0, "deliveries_removed": 0, "unfinished_uploads_removed": []}
    assert ctx.store.get_page("biquge/2.html").status == "done"
    assert len(ctx.store.matches()) == 1


def test_retry_state_when_the_store_fails_once(app, ctx, monkeypatch):
    store_page(ctx, "biquge/2.html", PIRATED)
    real = pipeline.process_page
    failures = iter([StoreError("locked (test)")])

    def flaky(ctx_, key):
        for e in failures:
            raise e
        return real(ctx_, key)

    monkeypatch.setattr(pipeline, "process_page", flaky)
    result = run(app, "process_page", "biquge/2.html")
    assert result.state == "SUCCESS" and result.get()["status"] == "done"
    assert len(ctx.store.matches()) == 1
    assert ctx.store.get_page("biquge/2.html").attempts == 1


def test_store_down_for_good_leaves_the_page_queued(app, ctx, monkeypatch):
    store_page(ctx, "p1", PIRATED)

    def broken(*a, **kw):
        raise StoreError("the store is down (test)")

    monkeypatch.setattr(pipeline, "process_page", broken)
    monkeypatch.setattr(type(ctx.store), "set_page_status", broken)
    assert run(app, "process_page", "p1").state == "FAILURE"
    monkeypatch.undo()
    page = ctx.store.get_page("p1")
    assert page.status == "queued" and page.attempts == 0
    assert pages_to_process(ctx) == (["p1"], [])


def test_daily_processes_queued_and_retries_failed_with_attempts_left(app, ctx, monkeypatch):
    store_page(ctx, "q", PIRATED)
    store_page(ctx, "ads", ADS_ONLY)
    run(app, "process_page", "ads").get()  # failed, 1 attempt of 3
    assert pages_to_process(ctx) == (["q"], ["ads"])
    monkeypatch.setattr(tasks, "recrawl_sites", lambda *a, **kw: pytest.fail("the sites crawl on their schedules"))
    assert run(app, "daily").get() == {"queued": 1, "retried": 1, "images": 0, "pictures": 0, "discovered": {"skipped": "no search API configured (FPT_SEARCH_URL)"}, "evidence_removed": 0, "events_removed": 0, "deliveries_removed": 0, "unfinished_uploads_removed": []}
    assert ctx.store.get_page("q").status == "done"
    assert ctx.store.get_page("ads").attempts == 2
    run(app, "daily").get()
    assert ctx.store.get_page("ads").attempts == 3
    assert pages_to_process(ctx) == ([], [])  # out of attempts: left failed
    assert run(app, "daily").get()["retried"] == 0


def test_daily_computes_the_running_totals_again_where_a_store_asks_for_it(app, ctx, monkeypatch):
    calls = []
    monkeypatch.setattr(ctx.store, "rebuild_totals", lambda: calls.append("rebuilt") or 0, raising=False)
    run(app, "daily").get()
    assert calls == ["rebuilt"]  # MongoDB's; the SQLite store keeps them in its transactions and has none
    monkeypatch.undo()
    assert not hasattr(ctx.store, "rebuild_totals")


def test_recrawl_without_configured_sites_starts_no_crawl(ctx, caplog, monkeypatch):
    import subprocess

    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: pytest.fail("no crawl should start"))
    with caplog.at_level("INFO", logger="tracker.workers.tasks"):
        assert tasks.recrawl_sites(ctx) == 0
    assert "no sites configured for re-crawling" in caplog.text


def test_register_chapter_fingerprints_a_stored_chapter(app, ctx):
    key = f"{WORK}/第二章"
    ph = ctx.params_hash
    ctx.index.remove(ctx.store.get_chapter(key).doc)  # as if the index had lost it
    store_page(ctx, "p", PIRATED)
    assert run(app, "process_page", "p").get()["matches"] == 0
    assert run(app, "register_chapter", key).get() == {"chapter": key, "status": "indexed"}
    assert run(app, "register_chapter", key).get() == {"chapter": key, "status": "indexed"}  # idempotent
    assert sum(1 for r in ctx.store.fingerprints(ph) if r.chapter == key) == 1
    assert run(app, "process_page", "p").get()["matches"] == 1
    assert run(app, "register_chapter", "no/such").get()["status"] == "missing"


def test_reindex_task(app, ctx):
    assert run(app, "reindex").get() == {"indexed": 3}
    store_page(ctx, "p", PIRATED)
    assert run(app, "process_page", "p").get()["matches"] == 1


def test_worker_context_sees_works_registered_elsewhere(app, settings, tmp_path):
    ctx = tasks.context(app)  # the worker's, opened before the work exists
    assert ctx.store.counts()["chapters"] == 0
    other = Context(settings)
    folder = tmp_path / "originals"
    folder.mkdir()
    for name, text in CHAPTERS.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    register_work(other, WORK, folder)
    store_page(other, "p", PIRATED)
    other.close()
    assert run(app, "process_page", "p").get()["matches"] == 1
    tasks.context(app).close()


def test_worker_context_sees_a_chapter_rewritten_elsewhere(app, settings, tmp_path):
    """A new edition with as many chapters: the worker's in-process index is loaded again."""
    folder = tmp_path / "originals"
    folder.mkdir()
    (folder / "第一章.txt").write_text(CHAPTERS["第一章"], encoding="utf-8")
    other = Context(settings)
    register_work(other, WORK, folder)
    store_page(other, "p", PIRATED)
    assert run(app, "process_page", "p").get()["matches"] == 0  # the worker loads the first edition
    (folder / "第一章.txt").write_text(CHAPTERS["第二章"], encoding="utf-8")  # rewritten: still one chapter
    register_work(other, WORK, folder)
    store_page(other, "p2", PIRATED + "\n")
    other.close()
    assert run(app, "process_page", "p2").get()["matches"] == 1
    tasks.context(app).close()


def test_dispatch_without_broker_processes_here(settings, ctx):
    store_page(ctx, "a", PIRATED)
    store_page(ctx, "b", ADS_ONLY)
    out = dispatch_pages(ctx, ["a", "b", "a", "gone"])
    assert out == "1 page done, 1 failed, 1 match, 1 not in the store"


def test_dispatch_with_an_app_sends_tasks(app, ctx):
    store_page(ctx, "a", PIRATED)
    assert dispatch_pages(ctx, ["a"], app=app) == "queued 1 page for the workers"
    assert ctx.store.get_page("a").status == "done"  # eager: ran at once


def test_dispatch_to_an_unreachable_broker_says_what_to_do(tmp_path, ctx):
    from tracker.workers.queue import BrokerUnavailable

    store_page(ctx, "a", PIRATED)
    s = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_BROKER_URL": "redis://:secret@127.0.0.1:1/14"})
    with pytest.raises(BrokerUnavailable, match="FPT_BROKER_URL=redis://:\\*\\*@127.0.0.1:1/14") as e:
        dispatch_pages(Context(s, store=ctx.store), ["a"])
    assert "secret" not in str(e.value) and isinstance(e.value, SettingsError)
    assert ctx.store.get_page("a").status == "queued"  # kept for later


def test_module_app_for_the_celery_command(monkeypatch, tmp_path):
    import tracker.workers.app as module

    monkeypatch.setenv("FPT_HOME", str(tmp_path))
    monkeypatch.setenv("FPT_BROKER_URL", "redis://127.0.0.1:6379/14")
    try:
        app = module.app  # built from the environment on first use
        assert app.conf.broker_url == "redis://127.0.0.1:6379/14"
        assert "tracker.tasks.process_page" in app.tasks
        assert module.celery is app
    finally:
        module.__dict__.pop("app", None)
        module.__dict__.pop("celery", None)


def _no_tracebacks(caplog) -> None:
    assert "Traceback" not in caplog.text
    assert all(r.exc_info is None and not r.exc_text for r in caplog.records)


def test_redis_failure_is_one_line_and_retried(tmp_path, caplog, monkeypatch):
    """A Redis error raised in a task: one line from redis_client.explain per attempt (password
    hidden), the retries as for any connection error, the line kept as the page's reason."""
    import logging

    import redis

    from tracker.redis_client import RedisUnavailable, explain

    url = "redis://:secret@127.0.0.1:6379/0"
    s = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_MAX_ATTEMPTS": "2", "FPT_REDIS_URL": url})
    app = create_celery(s, task_always_eager=True)
    ctx = Context(s)
    tasks.use_context(app, ctx)
    store_page(ctx, "p", PIRATED)
    error = redis.ResponseError("OOM command not allowed when used memory > 'maxmemory'.")
    calls = []

    def broken(ctx_, key):
        calls.append(key)
        raise error

    monkeypatch.setattr(pipeline, "process_page", broken)
    line = explain(error, url)
    try:
        with caplog.at_level(logging.INFO):
            result = run(app, "process_page", "p")
        assert result.state == "FAILURE" and len(calls) == 1 + 2
        with pytest.raises(RedisUnavailable, match="out of memory"):
            result.get()
        warnings = [r.getMessage() for r in caplog.records
                    if r.name == "tracker.workers.tasks" and r.levelname == "WARNING"]
        assert [w.rpartition(" in ")[0] for w in warnings] == [f"process_page p: {line}; retry {n} of 2"
                                                               for n in (1, 2)]
        assert all(w.endswith(" s") for w in warnings)  # the backoff's countdown
        [gave_up] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert gave_up == f"process_page p: gave up after 2 retries: {line}"
        assert "secret" not in caplog.text and "maxmemory" in line
        _no_tracebacks(caplog)
        page = ctx.store.get_page("p")
        assert page.status == "failed" and line in page.reason
    finally:
        tasks.use_context(app, None)
        ctx.close()


def test_unreachable_redis_index_is_one_line_and_retried(tmp_path, caplog):
    """The real path: the worker's index on a Redis that does not answer (nothing listens on port 1)."""
    import logging

    s = Settings.load({"FPT_HOME": str(tmp_path / "home"), "FPT_MAX_ATTEMPTS": "1",
                       "FPT_REDIS_URL": "redis://127.0.0.1:1/0"})
    app = create_celery(s, task_always_eager=True)
    ctx = tasks.context(app)
    store_page(ctx, "p", PIRATED)
    try:
        with caplog.at_level(logging.INFO):
            assert run(app, "process_page", "p").state == "FAILURE"
        lines = [r.getMessage() for r in caplog.records if r.name == "tracker.workers.tasks"]
        assert len(lines) == 2 and lines[0].startswith("process_page p: ") and "retry 1 of 1" in lines[0]
        assert lines[1].startswith("process_page p: gave up after 1 retries: ")
        assert all("127.0.0.1:1" in line and "FPT_REDIS_URL" in line for line in lines)
        _no_tracebacks(caplog)
        assert ctx.store.get_page("p").status == "failed"
    finally:
        tasks.use_context(app, None)
        ctx.close()


def test_daily_run_goes_on_when_discovery_fails_and_expires_old_evidence(app, ctx, monkeypatch, caplog):
    import tracker.discovery.discover as discovery
    import tracker.evidence.retention as retention

    def broken(_ctx):
        raise RuntimeError("search API answered 500\ndetails")

    expired = []
    monkeypatch.setattr(discovery, "daily_discovery", broken)
    monkeypatch.setattr(retention, "expire_evidence",
                        lambda store, days: expired.append(days) or retention.Expired(0, 3))
    with caplog.at_level("WARNING"):
        summary = run(app, "daily").get()
    assert summary["discovered"] == {"failed": "RuntimeError"} and summary["evidence_removed"] == 3
    assert expired == [ctx.settings.evidence_days]
    assert "daily discovery failed: search API answered 500" in caplog.text


def test_daily_run_removes_old_notification_events_whose_deliveries_are_done(app, ctx):
    from datetime import timedelta

    from tracker.store import now
    from tracker.store.followup import Delivery, Event

    old = now() - timedelta(days=ctx.settings.events_days + 1)
    for event_id, sent in (("told", True), ("waiting", False)):
        ctx.store.add_event(Event(id=event_id, kind="crawl-failed", at=old, site="biquge"))
        ctx.store.add_delivery(Delivery(event=event_id, subscription="s1", created_at=old))
        if sent:
            ctx.store.record_delivery(event_id, "s1", True, "250 ok")
        ctx.store.set_event_routed(event_id)
    ctx.store.add_event(Event(id="recent", kind="crawl-failed", site="biquge", routed=True))
    summary = run(app, "daily").get()
    assert summary["events_removed"] == 1 and summary["deliveries_removed"] == 1
    assert sorted(e.id for e in ctx.store.events(limit=None)) == ["recent", "waiting"]
    assert run(app, "daily").get()["events_removed"] == 0


def test_daily_run_goes_on_when_removing_old_events_fails(app, ctx, monkeypatch, caplog):
    def broken(before, **kw):
        raise StoreError("the SQLite store at x failed: disk I/O error; check the disk\nmore")

    monkeypatch.setattr(ctx.store, "purge_events", broken)
    with caplog.at_level("WARNING"):
        summary = run(app, "daily").get()
    assert summary["events_removed"] == summary["deliveries_removed"] == 0 and "queued" in summary
    lines = [r.getMessage() for r in caplog.records if "notification events" in r.getMessage()]
    assert lines == ["daily removal of old notification events failed: the SQLite store at x failed: disk I/O "
                     "error; check the disk"]
