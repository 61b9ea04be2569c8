"""Forged evidence against `fptrack evidence --verify`: a package whose notice is changed and
whose manifest is rewritten to match with the package's own deterministic writer, either without
its signature or re-signed with another key, fails against the organisation's published key
(--key), and without the key says what is wrong; a package with a 1 GiB entry is verified in
bounded memory by the installed command."""
from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import textwrap
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from tests.cli.terminal import clean_env, program
from tests.conftest import ROOT, need
from tests.web.test_evidence_package import PAGE, home, run  # noqa: F401 (home: a fixture)
from tests.web.test_evidence_seal import make, public_key
from tracker.evidence.package import MANIFEST, write_package
from tracker.evidence.signing import SIGNATURE, Seal, org_signer
from tracker.store.sqlite import SQLiteStore

FORGED_NOTICE = b"NOTICE: the copy is on another site entirely\n"


def forge(package: Path, seal=None) -> None:
    """Change notice.txt and rewrite the manifest to match, as write_package writes it."""
    with zipfile.ZipFile(package) as z:
        found = {n: z.read(n) for n in z.namelist()}
    info = json.loads(found[MANIFEST])
    files = [(f["name"], FORGED_NOTICE if f["name"] == "notice.txt" else found[f["name"]]) for f in info["files"]]
    extra = {k: v for k, v in info.items() if k not in ("format", "created_at", "files", "signed_by")}
    buf = io.BytesIO()
    write_package(buf, files, extra, datetime.fromisoformat(info["created_at"]), seal=seal)
    package.write_bytes(buf.getvalue())


def test_a_forgery_without_its_signature_fails_with_the_key_and_says_unsigned_without(home, tmp_path):
    out = make(home, tmp_path)
    pem, _ = public_key(home, tmp_path)
    forge(out)
    with zipfile.ZipFile(out) as z:
        assert SIGNATURE not in z.namelist() and z.read("notice.txt") == FORGED_NOTICE
    keyed = run(["--verify", str(out), "--key", str(pem)], home)
    assert keyed.exit_code == 1, keyed.output
    assert "unsigned: this package carries no signature, so it cannot be checked against the key given" \
        in keyed.output
    alone = run(["--verify", str(out)], home)
    assert "unsigned: this package carries no signature" in alone.output
    assert "nothing outside the zip vouches for the manifest" in alone.output


def test_a_forgery_re_signed_with_another_key_fails_against_the_published_key(home, tmp_path):
    out = make(home, tmp_path)
    pem, key = public_key(home, tmp_path)
    other = SQLiteStore(tmp_path / "forger.db")
    forger = org_signer(other, "default", "the forger's secret")  # the same organisation's name, another key
    other.close()
    forge(out, seal=Seal(forger))
    keyed = run(["--verify", str(out), "--key", str(pem)], home)
    assert keyed.exit_code == 1, keyed.output
    assert f"not by the key given ({key})" in keyed.output and forger.fingerprint in keyed.output
    alone = run(["--verify", str(out)], home)  # no key: it names the key, which is not the published one
    assert forger.fingerprint in alone.output and key not in alone.output


GIB = 1024 ** 3
_MAKE_BIG = textwrap.dedent("""
    import hashlib, json, sys, zipfile
    from tracker.evidence import package as p

    path, size = sys.argv[1], int(sys.argv[2])
    chunk = bytes(range(256)) * 4096  # 1 MiB
    h = hashlib.sha256()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        info = p._info("pages/001/big.bin")
        info.file_size = size
        with z.open(info, "w") as f:
            for _ in range(size // len(chunk)):
                f.write(chunk)
                h.update(chunk)
        manifest = {"format": p.FORMAT, "created_at": "2026-03-01T08:00:00+00:00",
                    "files": [{"name": "pages/001/big.bin", "sha256": h.hexdigest(), "size": size}]}
        z.writestr(p._info(p.MANIFEST), (json.dumps(manifest, indent=2) + "\\n").encode())
""")
_PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "print(r.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
         "print(r.stdout[-2000:] + r.stderr[-2000:])")


@pytest.mark.slow
def test_verify_of_a_1_gib_entry_stays_bounded(tmp_path):
    need(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0, "peak memory is read from getrusage (Linux)")
    path = tmp_path / "big.zip"
    made = subprocess.run([sys.executable, "-c", _MAKE_BIG, str(path), str(GIB)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert made.returncode == 0, made.stderr[-2000:]
    try:
        r = subprocess.run([sys.executable, "-c", _PEAK, program("fptrack"), "evidence", "--verify", str(path)],
                           capture_output=True, text=True, timeout=600, cwd=ROOT,
                           env=clean_env(FPT_HOME=str(tmp_path / "home")))
    finally:
        path.unlink()
    code, peak_kb, output = r.stdout.split("\n", 2)
    assert int(code) == 0 and output.startswith("ok: "), output
    print(f"peak RSS of fptrack evidence --verify on a 1 GiB entry: {int(peak_kb) // 1024} MB")
    assert int(peak_kb) < 200 * 1024, f"fptrack evidence --verify peaked at {int(peak_kb) // 1024} MB for a 1 GiB entry"
