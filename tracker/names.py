"""Names users and crawled data give that become folder names or keys: crawl jobs and sites.

A job name is joined into a path under FPT_HOME and that folder is deleted by
`--fresh`, so it must never climb out ("../../x") or start elsewhere ("/tmp/x").
Names are checked here, in one place, and every path made from one is resolved
and checked to stay inside its folder as well, in case a check is ever missed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fingerprint.errors import InputError

JOB_FORM = "job names are 1-120 letters, digits, '.', '_', '+' or '-', not starting with '.'"
SITE_FORM = "site names are 1-200 characters, without control characters"

_JOB = re.compile(r"[\w+-][\w.+-]{0,119}")
_NOT_JOB = re.compile(r"[^\w.+-]+")
_MAX_SITE = 200
# Characters that steer a terminal or reorder text: C0 but for the usual whitespace (collapsed
# instead), DEL, C1, bidi embeddings/overrides/isolates, and lone surrogates (they cannot be stored).
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def check_job(name: str) -> str:
    """`name` if it is a valid job name; InputError naming the allowed form otherwise."""
    if not isinstance(name, str) or not _JOB.fullmatch(name):
        raise InputError(f"bad job name {name!r}: {JOB_FORM}")
    return name


def job_for_sites(sites: Iterable[str]) -> str:
    """The default job name for crawling these sites: their names, made file-safe, joined by '+'."""
    name = _NOT_JOB.sub("_", "+".join(sorted(sites))).lstrip(".")[:120] or "crawl"
    return check_job(name)


def clean_site_name(raw: str) -> str:
    """A site name as stored: stripped, inner whitespace runs made one space. InputError when it is
    empty, too long or holds control characters (they would reach terminals and the admin)."""
    if not isinstance(raw, str):
        raise InputError(f"bad site name {raw!r}: {SITE_FORM}")
    bad = _CONTROL.search(raw)
    if bad:
        raise InputError(f"bad site name {raw!r}: it holds the control character U+{ord(bad.group()):04X}; "
                         f"{SITE_FORM}")
    name = " ".join(raw.split())
    if not name or len(name) > _MAX_SITE:
        raise InputError(f"bad site name {raw!r}: {SITE_FORM}")
    return name


def inside(folder: Path, name: str) -> Path:
    """folder/name, resolved, after checking that it is a folder's child and not the folder or above."""
    base = Path(folder).resolve()
    path = (base / name).resolve()
    if path == base or not path.is_relative_to(base):
        raise InputError(f"refusing {name!r}: it leads outside {base}")
    return path
