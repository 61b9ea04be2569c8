"""Discovery in the admin: the recent runs with their totals and the sites they added, each
run's queries with what each found, and "search now" for one work, which starts a discovery
run in a child process (tracker.discovery.child_runs). The same functions serve the HTML pages and
the JSON API (web.api.discovery).

Runs are scoped like everything else (tracker.store.scoped): a user sees the runs of the
organisation's works, an operator every run; another organisation's run is a 404. Without a
search API (FPT_SEARCH_URL unset) the pages say how to set one instead of offering a button.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.exceptions import Conflict

from tracker.discovery import child_runs as discovery_runs
from tracker.discovery.discover import DiscoveryError, DiscoverySettings, make_provider, plan_queries
from tracker.discovery.providers import SearchError
from tracker.store import NotFound, Work
from tracker.store.discovery import DiscoveryQuery, DiscoveryRun

from ..params import int_arg, text_arg
from ..services import services

bp = Blueprint("discovery", __name__, url_prefix="/discovery")

MAX_ID = 2**63 - 1  # a larger number is no run's id (and neither backend takes it)
HOW = ("set FPT_SEARCH_URL to a JSON search API's URL template, with FPT_SEARCH_PRESET for its answer's "
       "shape (searxng, bing, google or brave) and FPT_SEARCH_KEY for its key, in the environment of the admin "
       "(or the [discovery] table of the FPT_CONFIG file), then restart it; for example FPT_SEARCH_PRESET=searxng "
       "FPT_SEARCH_URL='https://searx.example.org/search?q={query}&format=json&pageno={page}'")


def search_status() -> dict[str, Any]:
    """Whether discovery can run from here: {"ready", "provider", "problem", "how"}."""
    try:
        settings = DiscoverySettings.load()
        if settings.search_provider == "http" and not settings.search_url:
            return {"ready": False, "provider": "http", "problem": "no search API is configured (FPT_SEARCH_URL "
                                                                  "is not set)", "how": HOW}
        provider = make_provider(settings)
    except (DiscoveryError, SearchError) as e:
        return {"ready": False, "provider": "", "problem": str(e), "how": HOW}
    return {"ready": True, "provider": provider.name, "problem": "", "how": ""}


def run_row(run: DiscoveryRun, titles: dict[str, str]) -> dict[str, Any]:
    return {"id": run.id, "started_at": run.started_at, "finished_at": run.finished_at, "provider": run.provider,
            "outcome": run.outcome, "work": run.work, "work_title": titles.get(run.work, run.work) if run.work else "",
            "counts": dict(run.counts), "sites_added": list(run.sites_added)}


def query_row(q: DiscoveryQuery, titles: dict[str, str]) -> dict[str, Any]:
    return {"n": q.n, "work": q.work, "work_title": titles.get(q.work, q.work), "kind": q.kind, "text": q.text,
            "returned": q.returned, "new": q.new, "stored": q.stored, "matches": q.matches, "sites": list(q.sites),
            "error": q.error}


def _titles() -> dict[str, str]:
    return {w.id: w.title for w in services().store.works()}


def find_work(key: str) -> Work:
    """The organisation's work whose id (else title) is `key`; a 404 when it has none."""
    works = services().store.works()
    found = [w for w in works if w.id == key] or [w for w in works if w.title == key]
    if not found:
        raise NotFound(f"no work {key!r}; see the works on /works/ (or GET /api/works)")
    return found[0]


def now_running(work: str | None = None) -> list[dict[str, Any]]:
    """The discovery runs started from the admin that are going, or the work's last one."""
    settings, titles = services().settings, _titles()
    if work is not None:
        found = [discovery_runs.read_state(settings, work)]
    else:
        found = [s for s in discovery_runs.states(settings) if s.get("work") in titles and s["running"]]
    return [{**s, "work_title": titles.get(s["work"], s["work"])} for s in found if s["state"] != "none"]


def runs_data() -> dict[str, Any]:
    """The recent runs (?work= one work's, by id or title; ?limit=, 50 by default)."""
    key = text_arg("work")
    limit = int_arg("limit", 50, 1, 500)
    work = find_work(key) if key else None
    titles = _titles()
    runs = services().store.discovery_runs(work=work.id if work else None, limit=limit)
    return {"work": work.id if work else None, "work_title": work.title if work else None,
            "runs": [run_row(r, titles) for r in runs], "search": search_status(),
            "now": now_running(work.id if work else None)}


def run_data(run_id: int) -> dict[str, Any]:
    """One run with every query it sent and what each found."""
    if not 0 < run_id <= MAX_ID:
        raise NotFound(f"no discovery run {run_id}")
    store = services().store
    run = store.get_discovery_run(run_id)
    titles = _titles()
    return {"run": run_row(run, titles), "queries": [query_row(q, titles) for q in store.discovery_queries(run_id)]}


def start(key: str) -> dict[str, Any]:
    """Start discovery for the work (id or title) in the background; its state. A 409 that says
    how to configure a search API when there is none."""
    work = find_work(key)
    status = search_status()
    if not status["ready"]:
        raise Conflict(f"discovery cannot run: {status['problem']}; {status['how']}")
    going = discovery_runs.read_state(services().settings, work.id)
    if going["running"]:
        return {**going, "work_title": work.title, "already_running": True}
    state = discovery_runs.start(services().settings, work.id)
    return {**state, "work_title": work.title, "already_running": False}


def dry_run(key: str) -> dict[str, Any]:
    """The queries a run for the work would send, without sending them (no search API needed)."""
    work = find_work(key)
    try:
        queries = plan_queries(services().store, DiscoverySettings.load(), work.id)
    except DiscoveryError as e:
        abort(400, str(e))
    return {"work": work.id, "work_title": work.title,
            "queries": [{"n": n, "kind": q.kind, "text": q.text} for n, q in enumerate(queries)]}


# ---- pages -------------------------------------------------------------------------------

@bp.route("/")
def index() -> str:
    d = runs_data()
    works = sorted(services().store.works(), key=lambda w: w.title)
    return render_template("discovery/index.html", **d, works=works)


@bp.route("/runs/<int:run_id>")
def run(run_id: int) -> str:
    return render_template("discovery/run.html", **run_data(run_id))


@bp.route("/start", methods=["POST"])
def start_form() -> Any:
    """Search now: discovery for the work named in the form, in the background."""
    key = text_arg("work", request.form)
    if not key:
        abort(400, "choose the work to search for")
    work = find_work(key)
    status = search_status()
    if not status["ready"]:
        flash(f"Discovery cannot run: {status['problem']}. To set one up, {status['how']}.", "error")
        return redirect(url_for("discovery.index", work=work.id))
    state = start(work.id)
    if state["already_running"]:
        flash(f"A discovery for 《{work.title}》 is already running: follow it below.", "ok")
    elif state.get("state") == "failed":
        flash(f"The discovery for 《{work.title}》 did not start: {state.get('error', '')}", "error")
    else:
        flash(f"Searching the web for copies of 《{work.title}》: the run appears below; this page refreshes "
              "while it goes.", "ok")
    return redirect(url_for("discovery.index", work=work.id))
