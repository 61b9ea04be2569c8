"""Shared fixtures. Tests that need ../shared or a service skip locally with a
message, and fail instead when FPT_REQUIRE_SERVICES=1 (as .ci/run sets it)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("FPT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
REQUIRED = os.environ.get("FPT_REQUIRE_SERVICES") == "1"


def need(condition: bool, why: str) -> None:
    """Skip with `why` when `condition` is false; fail instead where services are required."""
    if condition:
        return
    if REQUIRED:
        pytest.fail(f"{why} (FPT_REQUIRE_SERVICES=1, so this is an error, not a skip)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus folder (../shared/corpus)."""
    need(CORPUS.is_dir(), f"the shared corpus is not at {CORPUS}; set FPT_SHARED or check out ../shared")
    return CORPUS


@pytest.fixture(scope="session")
def buaa_dir(corpus: Path) -> Path:
    d = corpus / "buaa_simtool"
    need((d / "article.txt").is_file(), f"the BUAA data set is missing from {d}")
    return d
