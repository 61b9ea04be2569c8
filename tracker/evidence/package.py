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

A package made with a Seal (tracker.evidence.signing) also holds manifest.sig, the Ed25519
signature of the manifest's exact bytes by its organisation's key, and, with a time-stamping
authority, manifest.tsr, an RFC 3161 timestamp token of them (tracker.evidence.timestamp); both
come after manifest.json and are checked by --verify. Entries are hashed and compared in
chunks, never read whole, so checking a package of any size takes little memory.
"""
from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any

from tracker.store import now

from .signing import SIGNATURE, TIMESTAMP, check_signature
from .timestamp import TimestampError, verify_token
from .warc import WarcError, read_warc

FORMAT = "fptrack-evidence/1"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_ENTRIES = 10_000
_DATE = (1980, 1, 1, 0, 0, 0)  # every entry's date: the package's time is in the manifest
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}(/[A-Za-z0-9][A-Za-z0-9._-]{0,150}){0,3}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1024 * 1024
MAX_SEAL_BYTES = 256 * 1024  # manifest.sig is under 1 KB, a timestamp token a few KB
# A WARC file is read back whole (warcio): one larger than this, decompressed, is hashed only.
MAX_WARC_CHECK = 64 * 1024 * 1024
_SEALS = (SIGNATURE, TIMESTAMP)


class PackageError(ValueError):
    """A package that cannot be made as asked."""


@dataclass
class Verified:
    """What --verify found: the problems (none: the package holds), what it checked."""
    problems: list[str]
    files: int = 0
    warc_records: int = 0
    manifest_sha256: str = ""
    signed_by: str = ""  # the fingerprint of the key that signed the manifest ("": unsigned)
    org: str = ""  # the organisation it names
    timestamp: str = ""  # when a TSA dated the manifest, and which ("": no timestamp)
    notes: list[str] = field(default_factory=list)  # what holds but a reader should know
    # No package to check at all (no such file, not a zip, no manifest.json): one line saying which,
    # never "not as it was made", which would claim that something was changed.
    unopened: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def check_name(name: str) -> str:
    """A file name inside a package: relative, plain ASCII, no "..", at most 4 levels."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name or name in (MANIFEST, *_SEALS):
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


def _zip(out: IO[bytes], files: Sequence[tuple[str, bytes]], manifest: bytes,
         seals: Sequence[tuple[str, bytes]] = ()) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, data in files:
            z.writestr(_info(name), data)
        z.writestr(_info(MANIFEST), manifest)
        for name, data in seals:
            z.writestr(_info(name), data)


def write_package(out: IO[bytes], files: Sequence[tuple[str, bytes]], info: dict[str, Any],
                  created_at: datetime | None = None, seal: Any = None) -> str:
    """Write the zip of `files` ((name, bytes), in order) and their manifest (with `info`'s keys),
    signed and time-stamped by `seal` (a signing.Seal) when given; returns the manifest's SHA-256."""
    names = [check_name(n) for n, _ in files]
    if len(set(names)) != len(names):
        raise PackageError("two files of a package have the same name")
    if seal is not None:
        info = {**info, "signed_by": seal.signed_by}
    manifest = manifest_bytes(files, info, created_at)
    _zip(out, files, manifest, seal.entries(manifest) if seal is not None else ())
    return hashlib.sha256(manifest).hexdigest()


def _read(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes | None, str]:
    """A small entry's bytes (the caller checks its size first), or None and why they cannot be read
    (zipfile checks the CRC-32)."""
    try:
        with z.open(info) as f:
            return f.read(), ""
    except Exception as e:  # BadZipFile, zlib.error, EOFError, NotImplementedError, OverflowError...
        return None, f"{type(e).__name__}: {str(e)[:160]}"


def _hash(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[str | None, int, str]:
    """An entry's SHA-256 and size, read in chunks; None and why when it cannot be read."""
    h, size = hashlib.sha256(), 0
    try:
        with z.open(info) as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                size += len(chunk)
    except Exception as e:  # as _read
        return None, size, f"{type(e).__name__}: {str(e)[:160]}"
    return h.hexdigest(), size, ""


def _unpacked_size(z: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> int:
    """An entry's size once gunzipped (every member; a file that is not gzip: its size), counted in
    chunks and given up past `limit`, so a small file that would inflate to gigabytes costs nothing."""
    total = 0
    try:
        with z.open(info) as f:
            head = f.read(2)
            if head != b"\x1f\x8b":
                return info.file_size
            d, pending = zlib.decompressobj(31), head
            while True:
                chunk = pending or f.read(_CHUNK)
                pending = b""
                if not chunk:
                    return total
                while True:
                    out = d.decompress(chunk, _CHUNK)
                    total += len(out)
                    if total > limit:
                        return total
                    if d.eof:  # the next gzip member starts in what is left
                        chunk, d = d.unused_data, zlib.decompressobj(31)
                        if not chunk:
                            break
                        continue
                    chunk = d.unconsumed_tail
                    if not chunk and len(out) < _CHUNK:  # a full chunk out may have more to give
                        break
    except Exception:  # a damaged stream (zlib.error, BadZipFile...): read_warc says what is wrong with it
        return total


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


def verify_package(source: str | IO[bytes], *, trusted: Sequence[bytes] = (), tsa_ca: bytes | None = None) -> Verified:
    """Check a package; every problem is one line in `problems` (nothing raises on a bad file).
    `trusted`: raw Ed25519 public keys, one of which must have signed it; `tsa_ca`: the CA
    certificate (PEM or DER) that must have issued the certificate of the TSA that dated it."""
    try:
        z = zipfile.ZipFile(source)
    except FileNotFoundError:
        return Verified([f"no such file: {source}"], unopened=True)
    except IsADirectoryError:
        return Verified([f"{source} is a folder, not a zip file"], unopened=True)
    except Exception as e:  # BadZipFile, OSError, ValueError, struct.error, OverflowError...
        return Verified([f"not a zip file: {source} ({type(e).__name__}: {str(e)[:160]}); an evidence package is "
                         "the .zip that `fptrack evidence -o` wrote"], unopened=True)
    with z:
        return _verify(z, source, trusted, tsa_ca)


def _verify(z: zipfile.ZipFile, source: str | IO[bytes], trusted: Sequence[bytes], tsa_ca: bytes | None) -> Verified:
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
        return Verified([*problems, f"not an evidence package: no manifest.json in {source} (or it was removed)"],
                        unopened=not problems)
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
    kept: list[zipfile.ZipInfo] = []
    for f in listed:
        info = seen.get(f["name"])
        if info is None:
            problems.append(f"missing file: {f['name']}")
            continue
        digest, size, why = _hash(z, info)
        if digest is None:
            problems.append(f"changed file: {f['name']} cannot be read ({why})")
            continue
        if digest != f["sha256"] or size != f["size"]:
            problems.append(f"changed file: {f['name']} has SHA-256 {digest} ({size} bytes), the manifest says "
                            f"{f['sha256']} ({f['size']} bytes)")
            continue
        result.files += 1
        kept.append(info)
        if f["name"].endswith((".warc.gz", ".warc")):
            if _unpacked_size(z, info, MAX_WARC_CHECK) > MAX_WARC_CHECK:
                result.notes.append(f"{f['name']}: more than {MAX_WARC_CHECK} bytes once decompressed, too large to "
                                    "read its WARC records back here (its SHA-256 matches the manifest)")
                continue
            data, why = _read(z, info)
            try:
                records = read_warc(data or b"")
            except WarcError as e:
                problems.append(f"bad WARC file: {f['name']}: {e}")
                continue
            result.warc_records += len(records)
    for name in seen:
        if name != MANIFEST and name not in names and name not in _SEALS:
            problems.append(f"extra file: {name} (not in the manifest)")
    seals = _check_seals(z, seen, raw, manifest, result, trusted, tsa_ca)
    if not problems:
        # Every file holds: the zip around them must be the one they make, byte for byte.
        differs = _rebuilt_difference(z, source, kept, raw, seals)
        if differs is not None:
            problems.append(f"changed zip structure: byte {differs} of the file differs from the package its files "
                            "make (a header, date or the directory was changed)")
    return result


def _check_seals(z: zipfile.ZipFile, seen: dict[str, zipfile.ZipInfo], raw: bytes, manifest: Any,
                 result: Verified, trusted: Sequence[bytes], tsa_ca: bytes | None) -> list[tuple[str, bytes]]:
    """Check manifest.sig and manifest.tsr into `result`; returns them (name, bytes) as found."""
    found: list[tuple[str, bytes]] = []
    for name in _SEALS:
        info = seen.get(name)
        if info is None:
            continue
        if info.file_size > MAX_SEAL_BYTES:
            result.problems.append(f"{name} is {info.file_size} bytes, too large for a {name.split('.')[1]} file")
            continue
        data, why = _read(z, info)
        if data is None:
            result.problems.append(f"changed file: {name} cannot be read ({why})")
            continue
        found.append((name, data))
    seals = dict(found)
    signed_by = manifest.get("signed_by") if isinstance(manifest, dict) else None
    if SIGNATURE in seals:
        check = check_signature(seals[SIGNATURE], raw, signed_by, trusted)
        result.problems += check.problems
        if not check.problems:
            result.signed_by, result.org = check.key, check.org
    elif SIGNATURE not in seen:
        if signed_by is not None:
            result.problems.append(f"missing file: {SIGNATURE} (the manifest says it was signed: "
                                   f"{str(signed_by)[:120]})")
        elif trusted:
            result.problems.append("unsigned: this package carries no signature, so it cannot be checked against the "
                                   "key given")
        else:
            result.notes.append("unsigned: this package carries no signature (made before packages were signed): its "
                                "files match its manifest, but nothing outside the zip vouches for the manifest")
    if TIMESTAMP in seals:
        try:
            stamp = verify_token(seals[TIMESTAMP], raw, ca=tsa_ca)
        except TimestampError as e:
            result.problems.append(f"bad timestamp: {TIMESTAMP}: {e}")
        else:
            result.timestamp = f"{stamp.time.isoformat()} by {stamp.tsa} (serial {stamp.serial})"
            if tsa_ca is None:
                result.notes.append("the timestamp's TSA certificate was not checked against a CA (give --tsa-ca)")
    return found


class _Comparer:
    """A file to write a zip into that keeps nothing: each write is compared with the same bytes of
    `source`. zipfile writes an entry's header, its data, then seeks back to write the header again
    with the CRC-32 and sizes; a write that covers an earlier one replaces its verdict."""

    def __init__(self, source: IO[bytes]):
        self.source, self.pos, self.end = source, 0, 0
        self.differs: dict[int, tuple[int, int]] = {}  # offset of a write -> (its length, first byte that differs)

    def write(self, data: bytes | memoryview) -> int:
        data = bytes(data)
        start, stop = self.pos, self.pos + len(data)
        for at in [a for a, (n, _) in self.differs.items() if start <= a and a + n <= stop]:
            del self.differs[at]
        self.source.seek(start)
        there = self.source.read(len(data))
        if there != data:
            first = next((i for i, (x, y) in enumerate(zip(there, data)) if x != y), min(len(there), len(data)))
            self.differs[start] = (len(data), start + first)
        self.pos = stop
        self.end = max(self.end, stop)
        return len(data)

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.end + pos
        return self.pos

    def flush(self) -> None:
        pass

    def first_difference(self, size: int) -> int | None:
        firsts = [first for _, first in self.differs.values()]
        if self.end != size:
            firsts.append(min(self.end, size))
        return min(firsts) if firsts else None


def _rebuilt_difference(z: zipfile.ZipFile, source: str | IO[bytes], kept: Sequence[zipfile.ZipInfo],
                        manifest: bytes, seals: Sequence[tuple[str, bytes]]) -> int | None:
    """The offset of the first byte where the file differs from the zip its entries make (None: equal),
    each entry streamed from the file into the rebuilt zip in chunks."""
    try:
        f = open(source, "rb") if not hasattr(source, "read") else source
    except OSError:
        return 0
    try:
        f.seek(0, 2)
        size = f.tell()
        out = _Comparer(f)
        writer = zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True)  # type: ignore[arg-type]
        with writer as rebuilt:
            for info in kept:
                entry = _info(info.filename)
                entry.file_size = info.file_size  # as writestr sets it: it decides the zip64 header
                with z.open(info) as src, rebuilt.open(entry, "w") as dst:
                    while chunk := src.read(_CHUNK):
                        dst.write(chunk)
            rebuilt.writestr(_info(MANIFEST), manifest)
            for name, data in seals:
                rebuilt.writestr(_info(name), data)
        return out.first_difference(size)
    except (OSError, ValueError, zipfile.BadZipFile):
        return 0
    finally:
        if f is not source:
            f.close()
