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
SITE_FORM = ("site names are 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter, a digit, "
             "'_' or ':', no '..' (a host name such as www.biquge.test or 127.0.0.1:8080 is one)")

_JOB = re.compile(r"[\w+-][\w.+-]{0,119}")
_NOT_JOB = re.compile(r"[^\w.+-]+")
_MAX_SITE = 200
_SITE = re.compile(r"[\w:][\w.:-]*")
_NOT_SITE = re.compile(r"[^\w.:-]+")
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


def job_for_urls(sites: Iterable[str], urls: Iterable[str]) -> str:
    """The default job name for crawling given start URLs: the sites' names and a digest of the URLs,
    so that a crawl of other URLs on the same host never resumes this one's frontier.

    job_for_urls(["b.test"], ["https://b.test/book/1/"]) -> "b.test-" + 10 hex digits"""
    import hashlib

    digest = hashlib.sha256("\n".join(sorted(set(urls))).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return check_job(job_for_sites(sites)[:109] + "-" + digest)


def clean_site_name(raw: str) -> str:
    """A site name as stored: stripped of surrounding whitespace, then checked to be a safe slug (it
    becomes part of job names, file names, Redis keys and URLs). InputError naming the rule and a
    valid name otherwise."""
    if not isinstance(raw, str):
        raise InputError(f"bad site name {raw!r}: {SITE_FORM}")
    bad = _CONTROL.search(raw)
    if bad:
        raise InputError(f"bad site name {raw!r}: it holds the control character U+{ord(bad.group()):04X}; "
                         f"{SITE_FORM}; e.g. {suggest_site_name(raw)!r}")
    name = raw.strip()
    if not name:
        raise InputError(f"bad site name {raw!r}: it is empty; {SITE_FORM}")
    if len(name) > _MAX_SITE or not _SITE.fullmatch(name) or ".." in name:
        raise InputError(f"bad site name {raw!r}: {SITE_FORM}; e.g. {suggest_site_name(name)!r}")
    return name


def suggest_site_name(raw: str) -> str:
    """A valid site name close to `raw`: 'bad name/../' -> 'bad-name'."""
    text = _CONTROL.sub("", raw) if isinstance(raw, str) else ""
    name = _NOT_SITE.sub("-", text).strip(".-")
    name = re.sub(r"\.{2,}", ".", name).strip(".-")[:_MAX_SITE].rstrip(".-")
    return name if name and _SITE.fullmatch(name) else "my-site"


def inside(folder: Path, name: str) -> Path:
    """folder/name, resolved, after checking that it is a folder's child and not the folder or above."""
    base = Path(folder).resolve()
    path = (base / name).resolve()
    if path == base or not path.is_relative_to(base):
        raise InputError(f"refusing {name!r}: it leads outside {base}")
    return path
