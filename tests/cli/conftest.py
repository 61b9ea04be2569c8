"""A world for the terminal tests: the sample novel registered, the sample pages ingested and
matched, the sample pirate site served on 127.0.0.1 and crawled, an account, an organisation,
a token and a subscription; each test gets its own copy of that FPT_HOME."""
from __future__ import annotations

import re
import shutil
import socket
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..conftest import ROOT
from .terminal import clean_env, piped, program

SAMPLES = ROOT / "samples"
WORK = "山城旧事"


@dataclass
class World:
    home: Path  # the template FPT_HOME; tests copy it
    site: str  # the sample pirate site's base URL
    facts: dict[str, str] = field(default_factory=dict)  # values the cases' arguments name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ok(args: list[str], home: Path, stdin: str = "") -> str:
    r = piped([program(args[0]), *args[1:]], env=clean_env(FPT_HOME=str(home)), cwd=home, stdin=stdin)
    assert r.code == 0, f"setting up with {' '.join(args)} failed ({r.code}):\n{r.text}"
    return r.text


@pytest.fixture(scope="session")
def sample_site():
    from web.demo.chapters import chapters_from_folder
    from web.demo.server import SampleSite

    with SampleSite(chapters_from_folder(SAMPLES / "originals"), slow_delay=0.5) as site:
        yield site


@pytest.fixture(scope="session")
def smtp_server():
    """An SMTP server on 127.0.0.1 that keeps what it is sent (aiosmtpd)."""
    from ..tracker.test_notify import SMTPServer

    with SMTPServer(free_port()) as server:
        yield server


@pytest.fixture(scope="session")
def search_engine(sample_site):
    """A search engine on 127.0.0.1 (SearXNG's JSON) that has indexed the sample site's chapter pages."""
    from ..tracker.search_engine import search_engine as serve_engine

    with serve_engine() as engine:
        # Indexed as a search engine that reads every encoding sees them: each chapter page's title and text.
        for path, chapter in sample_site.copies.items():
            if sample_site.expected[path] == "chapter":
                engine.pages[sample_site.url + path] = sample_site.chapters[chapter]
        yield engine


@pytest.fixture(scope="session")
def world(tmp_path_factory, sample_site, smtp_server, search_engine) -> World:
    home = tmp_path_factory.mktemp("cli-world") / "home"
    home.mkdir()
    w = World(home=home, site=sample_site.url, facts={"smtp": smtp_server.url,
                                                                  "search": search_engine.search_url})
    run_ok(["fptrack", "add-work", WORK, "--author", "林岚", str(SAMPLES / "originals")], home)
    run_ok(["fptrack", "notify", "add", "--email", "rights@example.com", "--work", WORK], home)
    run_ok(["fptrack", "ingest", str(SAMPLES / "pages"), "--site", "biquge"], home)
    run_ok(["fptrack", "sites", "add", "sample", f"{sample_site.url}/book/1/", "--delay", "0"], home)
    run_ok(["fptrack", "crawl", "--site", "sample", "--delay", "0", "--timeout", "2", "--retries", "0",
            "--depth", "4", "-q"], home)
    run_ok(["fptrack", "set-status", "biquge-1", f"{WORK}/{WORK}-第一章", "takedown-sent"], home)
    crawled = run_ok(["fptrack", "matches", "--site", "sample", "--format", "csv"], home).splitlines()[1]
    page, chapter = crawled.split(",")[:2]
    run_ok(["fptrack", "set-status", page, chapter, "takedown-sent"], home)
    run_ok(["fptrack", "user", "add", "gone", "--password-stdin"], home, stdin="old-password-1\n")
    run_ok(["fptrack", "org", "add", "other"], home)
    made = run_ok(["fptrack", "token", "create", "--scope", "read", "--name", "ci"], home)
    w.facts["token"] = re.search(r"token (\w+)", made).group(1)
    return w


@pytest.fixture
def home(world: World, tmp_path: Path) -> Path:
    """A copy of the world's FPT_HOME for one test."""
    mine = tmp_path / "home"
    shutil.copytree(world.home, mine)
    return mine
