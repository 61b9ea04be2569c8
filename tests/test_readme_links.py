"""The README is a front door: short, and every link from it and from docs/ leads somewhere.

Relative links in README.md and docs/*.md must name a file of the checkout, and a
`#fragment` a heading of that file (GitHub's anchors: lower case, punctuation dropped,
spaces to hyphens); every page in docs/ is linked from the README.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def links(page: Path) -> list[str]:
    """The link targets of a Markdown page, outside fenced code blocks."""
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: `## Sizing: 10M chapters` -> `sizing-10m-chapters`."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_anchor_follows_githubs_rule():
    assert anchor("Sizing: 10M chapters, 100M pages a month") == "sizing-10m-chapters-100m-pages-a-month"
    assert anchor("Organisations and API tokens") == "organisations-and-api-tokens"
    assert anchor("Docker compose") == "docker-compose"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    assert not broken, f"broken links in {page.name}:\n" + "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(README) if t.startswith("docs/")}
    unlinked = [p.name for p in DOCS if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}; add each to its Documentation table"


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    for command in ("$ scripts/demo", "$ scripts/test"):
        assert command in text
    for page in ("admin.md", "api.md", "deployment.md", "scale.md", "benchmarks.md", "design.md",
                 "simtool.md", "cli.md", "crawler.md"):
        assert f"](docs/{page})" in text, f"the README links docs/{page}"


def test_the_walkthrough_puts_fptrack_on_path_before_using_it():
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- walkthrough -->", 1)[1].split("<!-- /walkthrough -->", 1)[0]
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("```")]
    first_fptrack = next(i for i, line in enumerate(lines) if line.startswith("fptrack "))
    assert any('export PATH="$PWD/.venv/bin:$PATH"' in line or "source .venv/bin/activate" in line
               for line in lines[:first_fptrack])


def test_the_api_page_lists_every_route_with_its_methods(tmp_path, monkeypatch):
    monkeypatch.setenv("FPT_HOME", str(tmp_path))
    for var in ("FPT_MONGO_URL", "FPT_REDIS_URL", "FPT_BROKER_URL", "FPT_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    from web import create_app
    from web.api.openapi import description

    with create_app({"TESTING": True}).app_context():
        spec = description()
    listed = {}
    for line in (ROOT / "docs" / "api.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(/api/[^`]+)` \| ([A-Z, ]+) \|", line)
        if m:
            listed[m.group(1)] = set(m.group(2).replace(" ", "").split(","))
    methods = {"get", "post", "patch", "put", "delete"}
    described = {path: {m.upper() for m in ops if m in methods} for path, ops in spec["paths"].items()}
    wrong = {path: (listed.get(path), described.get(path)) for path in listed.keys() | described.keys()
             if listed.get(path) != described.get(path)}
    assert not wrong, ("docs/api.md's route table differs from /api/openapi.json (route: (listed, described)); "
                       f"give each route a row with its methods and summary: {wrong}")
