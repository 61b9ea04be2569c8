"""fptrack end to end on embedded defaults: each command is a fresh process-like
invocation, so data must persist in FPT_HOME between them."""
import json

from click.testing import CliRunner

from fptrack.cli import main

from .conftest import SAMPLES


def run(*args, env):
    r = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert "Traceback" not in r.output
    return r


def test_every_command_has_help_with_an_example():
    import click

    names = main.list_commands(None)
    assert {"crawl", "sites", "web", "user"} <= set(names)  # the commands of the other packages are there
    for name in names:
        r = CliRunner().invoke(main, [name, "--help"])
        assert r.exit_code == 0 and "Example" in r.output, name
        command = main.get_command(None, name)
        if isinstance(command, click.Group):  # and every subcommand too
            for sub in command.list_commands(None):
                r = CliRunner().invoke(main, [name, sub, "--help"])
                assert r.exit_code == 0 and "Example" in r.output, f"{name} {sub}"


def test_the_tracker_core_loads_neither_scrapy_nor_flask():
    import subprocess
    import sys

    code = ("import sys, tracker.cli, tracker.pipeline, tracker.workers.tasks, tracker.context; "
            "print(sorted(m for m in ('scrapy', 'flask', 'twisted') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_register_ingest_and_read_the_reports(settings):
    env = {"FPT_HOME": str(settings.home)}
    r = run("add-work", "山城旧事", SAMPLES / "originals", "--author", "林岚", env=env)
    assert r.exit_code == 0 and "3 chapters (3 new" in r.output
    r = run("ingest", SAMPLES / "pages", "--site", "biquge", env=env)
    assert r.exit_code == 0 and "8 pages queued" in r.output
    out = run("matches", "--format", "jsonl", env=env).output
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == 8
    assert {"page", "original", "work", "site", "similarity", "containment", "spans"} <= set(recs[0])
    assert all(x["work"] == "山城旧事" and x["site"] == "biquge" for x in recs)
    rep = run("report", "山城旧事", env=env)
    assert rep.exit_code == 0 and "山城旧事-第一章" in rep.output
    assert "3 of 3 chapters copied" in rep.output
    works = run("works", "--format", "csv", env=env).output.splitlines()
    assert works[0].startswith("work,author,chapters,matches") and works[1].startswith("山城旧事,林岚,3,8,")
    st = run("stats", env=env).output
    assert "pages    queued 0, done 8, failed 0" in st


def test_ingesting_again_processes_nothing_new(settings):
    env = {"FPT_HOME": str(settings.home)}
    run("add-work", "山城旧事", SAMPLES / "originals", env=env)
    run("ingest", SAMPLES / "pages", env=env)
    r = run("ingest", SAMPLES / "pages", env=env)
    assert "0 pages queued, 8 unchanged" in r.output
    assert len(run("matches", "--format", "jsonl", env=env).output.splitlines()) == 8


def test_status_workflow_and_filters(settings):
    env = {"FPT_HOME": str(settings.home)}
    run("add-work", "山城旧事", SAMPLES / "originals", env=env)
    run("ingest", SAMPLES / "pages", env=env)
    r = run("set-status", "tw-3", "山城旧事/山城旧事-第三章", "confirmed", "--by", "alice", env=env)
    assert r.exit_code == 0 and "confirmed" in r.output
    rec = json.loads(run("matches", "--status", "confirmed", "--format", "jsonl", env=env).output)
    assert rec["page"] == "tw-3" and rec["history"][-1]["by"] == "alice"
    bad = run("set-status", "tw-3", "nope/nope", "confirmed", env=env)
    assert bad.exit_code != 0 and "not found" in bad.output


def test_reindex_keeps_the_results(settings):
    env = {"FPT_HOME": str(settings.home)}
    run("add-work", "山城旧事", SAMPLES / "originals", env=env)
    r = run("reindex", "-q", env=env)
    assert r.exit_code == 0 and "indexed 3 chapters" in r.output
    run("ingest", SAMPLES / "pages" / "tw-3.txt", env=env)
    assert "tw-3" in run("matches", env=env).output


def test_user_mistakes_get_a_message_not_a_traceback(settings, tmp_path):
    env = {"FPT_HOME": str(settings.home)}
    r = run("report", "no-such-work", env=env)
    assert r.exit_code != 0 and "no-such-work" in r.output
    r = run("ingest", tmp_path / "missing", env=env)
    assert r.exit_code != 0 and "missing" in r.output
    r = run("stats", env={**env, "FPT_MIN_CONTAINMENT": "lots"})
    assert r.exit_code != 0 and "FPT_MIN_CONTAINMENT" in r.output
    r = run("worker", env={**env, "FPT_BROKER_URL": ""})
    assert r.exit_code != 0 and "FPT_BROKER_URL" in r.output


def test_an_unreachable_mongodb_is_a_clear_error(settings):
    r = run("stats", env={"FPT_HOME": str(settings.home), "FPT_MONGO_URL": "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300"})
    assert r.exit_code != 0
    assert "MongoDB" in r.output and "FPT_MONGO_URL" in r.output


def test_report_counts_excerpts_apart_and_only_the_copies_still_up(settings):
    import csv
    import io

    from tracker.store import MatchRecord
    from tracker.store.open import store_at

    env = {"FPT_HOME": str(settings.home)}
    run("add-work", "山城旧事", SAMPLES / "originals", "--author", "林岚", env=env)
    store = store_at(None, settings.home)
    try:
        chapters = [c.key for c in store.chapters(work="山城旧事")]
        for i, (key, verdict, status) in enumerate(zip(chapters, ("duplicate", "excerpt", "contains"),
                                                       ("new", "confirmed", "removed"))):
            store.upsert_match(MatchRecord(page=f"https://x.example/{i}", chapter=key, work="山城旧事", site="x",
                                           similarity=0.5, containment=0.095 if verdict == "excerpt" else 0.95,
                                           page_share=0.5, verdict=verdict))
            store.set_match_status(f"https://x.example/{i}", key, status, by="ann")
    finally:
        store.close()
    rep = run("report", "山城旧事", env=env)
    assert rep.exit_code == 0, rep.output
    assert "1 of 3 chapters copied in full, 1 quoted in an excerpt" in rep.output  # the removed copy is not up
    rows = {r["chapter"]: r for r in csv.DictReader(io.StringIO(run("report", "山城旧事", "--format", "csv",
                                                                        env=env).output))}
    assert [rows[k.split("/", 1)[1]]["copied"] for k in chapters] == ["full", "excerpt", ""]
