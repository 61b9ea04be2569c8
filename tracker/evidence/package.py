"""Evidence packages: a zip of files and a manifest with the SHA-256 of each, that anyone can
check with `fptrack evidence --verify FILE.zip`.

The zip is written the same way every time: its entries stored (not deflated: the WARC
files and screenshots are compressed already, and stored bytes do not depend on a zlib
version), in the manifest's order, with fixed dates and attributes, manifest.json last.
So `verify_package` checks three things: each file's bytes against the manifest, each WARC
file read back by warcio with its digests checked, and the zip itself against the zip that
its files make: a changed byte anywhere (a file, a header, the directory) is found.
The manifest itself is not in the manifest; its SHA-256, printed when the package is made
and by --verify, names the package.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from tracker.store import now

from .warc import WarcError, read_warc

FORMAT = "fptrack-evidence/1"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_ENTRIES = 10_000
_DATE = (1980, 1, 1, 0, 0, 0)  # every entry's date: the package's time is in the manifest
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}(/[A-Za-z0-9][A-Za-z0-9._-]{0,150}){0,3}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1024 * 1024


class PackageError(ValueError):
    """A package that cannot be made as asked."""


@dataclass
class Verified:
    """What --verify found: the problems (none: the package holds), what it checked."""
    problems: list[str]
    files: int = 0
    warc_records: int = 0
    manifest_sha256: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def check_name(name: str) -> str:
    """A file name inside a package: relative, plain ASCII, no "..", at most 4 levels."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name or name == MANIFEST:
        raise PackageError(f"bad file name in a package: {name!r}")
    return name


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = 3  # the same on every platform
    info.external_attr = 0o644 << 16
    return info


def manifest_bytes(files: Sequence[tuple[str, bytes]], info: dict[str, Any], created_at: datetime | None = None) -> bytes:
    entries = [{"name": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)} for name, data in files]
    manifest = {"format": FORMAT, "created_at": (created_at or now()).isoformat(), **info, "files": entries}
    return (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _zip(out: IO[bytes], files: Sequence[tuple[str, bytes]], manifest: bytes) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, data in files:
            z.writestr(_info(name), data)
        z.writestr(_info(MANIFEST), manifest)


def write_package(out: IO[bytes], files: Sequence[tuple[str, bytes]], info: dict[str, Any],
                  created_at: datetime | None = None) -> str:
    """Write the zip of `files` ((name, bytes), in order) and their manifest (with `info`'s keys);
    returns the manifest's SHA-256."""
    names = [check_name(n) for n, _ in files]
    if len(set(names)) != len(names):
        raise PackageError("two files of a package have the same name")
    manifest = manifest_bytes(files, info, created_at)
    _zip(out, files, manifest)
    return hashlib.sha256(manifest).hexdigest()


def _read(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes | None, str]:
    """An entry's bytes, or None and why they cannot be read (zipfile checks the CRC-32)."""
    try:
        with z.open(info) as f:
            return f.read(), ""
    except Exception as e:  # BadZipFile, zlib.error, EOFError, NotImplementedError, OverflowError...
        return None, f"{type(e).__name__}: {str(e)[:160]}"


def _manifest_files(manifest: Any) -> tuple[list[dict[str, Any]], list[str]]:
    problems: list[str] = []
    if not isinstance(manifest, dict):
        return [], ["manifest.json is not a JSON object"]
    if manifest.get("format") != FORMAT:
        problems.append(f"manifest.json: format is {str(manifest.get('format'))[:60]!r}, not {FORMAT!r}")
    files = manifest.get("files")
    if not isinstance(files, list):
        return [], [*problems, "manifest.json has no list of files"]
    out = []
    for n, f in enumerate(files, 1):
        if not (isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("sha256"), str)
                and _HEX64.fullmatch(f["sha256"]) and isinstance(f.get("size"), int)):
            problems.append(f"manifest.json: entry {n} is not {{name, sha256 (64 hex digits), size}}")
            continue
        try:
            check_name(f["name"])
        except PackageError as e:
            problems.append(f"manifest.json: entry {n}: {e}")
            continue
        out.append(f)
    return out, problems


def verify_package(source: str | IO[bytes]) -> Verified:
    """Check a package; every problem is one line in `problems` (nothing raises on a bad file)."""
    try:
        z = zipfile.ZipFile(source)
    except FileNotFoundError:
        return Verified([f"no such file: {source}"])
    except IsADirectoryError:
        return Verified([f"{source} is a folder, not a zip file"])
    except Exception as e:  # BadZipFile, OSError, ValueError, struct.error, OverflowError...
        return Verified([f"not a readable zip file: {type(e).__name__}: {str(e)[:160]}"])
    with z:
        return _verify(z, source)


def _verify(z: zipfile.ZipFile, source: str | IO[bytes]) -> Verified:
    problems: list[str] = []
    infos = z.infolist()
    if len(infos) > MAX_ENTRIES:
        return Verified([f"the zip holds {len(infos)} entries, more than a package ({MAX_ENTRIES})"])
    seen: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if info.filename in seen:
            problems.append(f"the zip holds {info.filename!r} twice")
        seen[info.filename] = info
    m = seen.get(MANIFEST)
    if m is None:
        return Verified([*problems, "missing file: manifest.json (not an evidence package, or it was removed)"])
    if m.file_size > MAX_MANIFEST_BYTES:
        return Verified([*problems, f"manifest.json is {m.file_size} bytes, too large for a manifest"])
    raw, why = _read(z, m)
    if raw is None:
        return Verified([*problems, f"changed file: manifest.json cannot be read ({why})"])
    manifest_sha = hashlib.sha256(raw).hexdigest()
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return Verified([*problems, f"manifest.json is not valid JSON: {str(e)[:120]}"], manifest_sha256=manifest_sha)
    listed, bad = _manifest_files(manifest)
    problems += bad
    result = Verified(problems, manifest_sha256=manifest_sha)
    names = {f["name"] for f in listed}
    contents: list[tuple[str, bytes]] = []
    for f in listed:
        info = seen.get(f["name"])
        if info is None:
            problems.append(f"missing file: {f['name']}")
            continue
        data, why = _read(z, info)
        if data is None:
            problems.append(f"changed file: {f['name']} cannot be read ({why})")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != f["sha256"] or len(data) != f["size"]:
            problems.append(f"changed file: {f['name']} has SHA-256 {digest} ({len(data)} bytes), the manifest says "
                            f"{f['sha256']} ({f['size']} bytes)")
            continue
        result.files += 1
        contents.append((f["name"], data))
        if f["name"].endswith((".warc.gz", ".warc")):
            try:
                records = read_warc(data)
            except WarcError as e:
                problems.append(f"bad WARC file: {f['name']}: {e}")
                continue
            result.warc_records += len(records)
    for name in seen:
        if name != MANIFEST and name not in names:
            problems.append(f"extra file: {name} (not in the manifest)")
    if not problems:
        # Every file holds: the zip around them must be the one they make, byte for byte.
        with tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024) as rebuilt:
            _zip(rebuilt, contents, raw)
            rebuilt.seek(0)
            differs = _first_difference(source, rebuilt)
        if differs is not None:
            problems.append(f"changed zip structure: byte {differs} of the file differs from the package its files "
                            "make (a header, date or the directory was changed)")
    return result


def _first_difference(source: str | IO[bytes], rebuilt: IO[bytes]) -> int | None:
    """The offset of the first byte where the file and the rebuilt zip differ (None: they are equal)."""
    try:
        f = open(source, "rb") if not hasattr(source, "read") else source
    except OSError:
        return 0
    try:
        if f is source:
            f.seek(0)
        at = 0
        while True:
            a, b = f.read(_CHUNK), rebuilt.read(_CHUNK)
            if a != b:
                return at + next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            if not a:
                return None
            at += len(a)
    except (OSError, ValueError):
        return 0
    finally:
        if f is not source:
            f.close()
