"""Signed and time-stamped evidence packages (tracker.evidence.signing, .timestamp, and their
checks in package.verify_package): a changed file with its manifest rewritten to match no
longer verifies, another organisation's key is refused, an RFC 3161 token from a local
time-stamping authority (openssl ts -reply) is checked here and by openssl, and checking a
package with a huge entry takes little memory."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from tests.conftest import need
from tracker.evidence.package import MANIFEST, PackageError, verify_package, write_package
from tracker.evidence.signing import (
    SIGNATURE,
    TIMESTAMP,
    Seal,
    SigningError,
    fingerprint,
    load_public_key,
    make_seal,
    org_signer,
    package_org,
    public_pem,
    tsa_from_env,
)
from tracker.evidence.timestamp import TimestampError, request_token, verify_token
from tracker.store.sqlite import SQLiteStore

from .tsa import POLICY, LocalTsa, openssl

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
FILES = [("report.html", "<p>陈守义坐在茶馆靠窗的位置</p>".encode()), ("notice.txt", b"NOTICE\n")]
SECRET = "s3cret-for-tests"


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def package(seal=None, files=FILES) -> bytes:
    out = io.BytesIO()
    write_package(out, files, {"selection": {"page": "p"}}, T0, seal=seal)
    return out.getvalue()


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def rewrite(data: bytes, changes: dict[str, bytes | None]) -> bytes:
    """What a forger does: change files, write a manifest that matches them, and pack it all with
    the same deterministic writer; manifest.sig and manifest.tsr kept as found unless changed."""
    old = entries(data)
    info = json.loads(old[MANIFEST])
    files = [(f["name"], changes.get(f["name"], old[f["name"]])) for f in info["files"]]
    extra = {k: v for k, v in info.items() if k not in ("format", "created_at", "files")}
    seals = [(n, changes.get(n, old.get(n))) for n in (SIGNATURE, TIMESTAMP) if changes.get(n, old.get(n))]

    class Forged:
        signed_by = info.get("signed_by")

        def entries(self, manifest: bytes) -> list[tuple[str, bytes]]:
            return seals

    out = io.BytesIO()
    if extra.get("signed_by"):
        extra.pop("signed_by")
        write_package(out, files, extra, datetime.fromisoformat(info["created_at"]), seal=Forged())
    else:
        write_package(out, files, extra, datetime.fromisoformat(info["created_at"]))
    return out.getvalue()


# ---- signing ------------------------------------------------------------------------------

def test_a_signed_package_verifies_and_names_its_key_and_organisation(store):
    signer = org_signer(store, "north", SECRET)
    data = package(Seal(signer))
    result = verify_package(io.BytesIO(data))
    assert result.ok, result.problems
    assert (result.signed_by, result.org, result.files) == (signer.fingerprint, "north", 2)
    assert result.notes == [] and result.timestamp == ""
    found = entries(data)
    assert list(found)[-2:] == [MANIFEST, SIGNATURE]
    envelope = json.loads(found[SIGNATURE])
    assert envelope["key"] == signer.fingerprint and envelope["org"] == "north"
    assert json.loads(found[MANIFEST])["signed_by"] == {"org": "north", "key": signer.fingerprint,
                                                        "algorithm": "Ed25519"}
    # Trusting the organisation's published key (PEM) holds too.
    assert verify_package(io.BytesIO(data), trusted=[load_public_key(public_pem(signer.public_key).encode())]).ok


def test_the_key_is_made_once_kept_encrypted_and_the_same_on_every_use(store):
    first = org_signer(store, "north", SECRET)
    again = org_signer(store, "north", SECRET)
    assert first.public_key == again.public_key and first.sign(b"x") == again.sign(b"x")
    kept = store.signing_key("north")
    assert kept.public_key == first.public_key and b"ENCRYPTED PRIVATE KEY" in kept.private_key
    with pytest.raises(TypeError):  # no password: the store's copy alone does not open it
        serialization.load_pem_private_key(kept.private_key, None)
    with pytest.raises(SigningError, match="FPT_SECRET_KEY"):
        org_signer(store, "north", "another secret")
    assert org_signer(store, "east", SECRET).public_key != first.public_key


def test_a_changed_file_with_its_manifest_rewritten_fails(store):
    data = package(Seal(org_signer(store, "north", SECRET)))
    forged = rewrite(data, {"notice.txt": b"NOTICE, changed\n"})
    assert entries(forged)[SIGNATURE] == entries(data)[SIGNATURE]
    result = verify_package(io.BytesIO(forged))
    assert not result.ok
    assert any(p.startswith("bad signature: manifest.json is not the one key") for p in result.problems)


def test_a_package_re_signed_with_another_key_fails_against_the_published_one(store, tmp_path):
    north = org_signer(store, "north", SECRET)
    data = package(Seal(north))
    other = SQLiteStore(tmp_path / "forger.db")
    forger = org_signer(other, "north", "the forger's")  # the same organisation's name, another key
    other.close()
    out = io.BytesIO()
    write_package(out, [("report.html", b"<p>forged</p>"), FILES[1]], {"selection": {"page": "p"}}, T0,
                  seal=Seal(forger))
    forged = out.getvalue()
    alone = verify_package(io.BytesIO(forged))  # holds in itself, and says whose key it is
    assert alone.ok and alone.signed_by == forger.fingerprint != north.fingerprint
    result = verify_package(io.BytesIO(forged), trusted=[north.public_key])
    assert result.problems == [f"signed by key {forger.fingerprint} (organisation 'north'), not by the key given "
                               f"({north.fingerprint})"]
    assert verify_package(io.BytesIO(data), trusted=[north.public_key]).ok


def test_another_organisations_key_fails(store):
    data = package(Seal(org_signer(store, "north", SECRET)))
    east = org_signer(store, "east", SECRET)
    result = verify_package(io.BytesIO(data), trusted=[east.public_key])
    assert not result.ok and "not by the key given" in result.problems[0] and east.fingerprint in result.problems[0]


def test_the_signer_named_in_the_manifest_must_be_the_one_that_signed(store):
    north, east = org_signer(store, "north", SECRET), org_signer(store, "east", SECRET)

    class Lying(Seal):  # signs with east's key but names north in the manifest
        @property
        def signed_by(self):
            return {"org": "north", "key": north.fingerprint, "algorithm": "Ed25519"}

    result = verify_package(io.BytesIO(package(Lying(east))))
    assert any("does not name the key that signed it" in p for p in result.problems)


def test_an_unsigned_package_verifies_its_hashes_and_says_it_is_unsigned(store):
    data = package()
    result = verify_package(io.BytesIO(data))
    assert result.ok and result.signed_by == "" and result.files == 2
    assert result.notes and result.notes[0].startswith("unsigned: this package carries no signature")
    trusted = verify_package(io.BytesIO(data), trusted=[org_signer(store, "north", SECRET).public_key])
    assert not trusted.ok and trusted.problems[0].startswith("unsigned:")


def test_a_removed_signature_or_a_changed_one_fails(store):
    data = package(Seal(org_signer(store, "north", SECRET)))
    old = entries(data)
    info = json.loads(old[MANIFEST])

    class Without:
        signed_by = info["signed_by"]

        def entries(self, manifest):
            return []

    out = io.BytesIO()
    write_package(out, FILES, {"selection": {"page": "p"}}, T0, seal=Without())
    stripped = verify_package(io.BytesIO(out.getvalue()))
    assert any(p.startswith(f"missing file: {SIGNATURE}") for p in stripped.problems)
    envelope = json.loads(old[SIGNATURE])
    envelope["signature"] = envelope["signature"][:10] + ("A" if envelope["signature"][10] != "A" else "B") \
        + envelope["signature"][11:]
    changed = rewrite(data, {SIGNATURE: json.dumps(envelope).encode()})
    assert any(p.startswith("bad signature") for p in verify_package(io.BytesIO(changed)).problems)
    garbage = rewrite(data, {SIGNATURE: b"\xff not json"})
    assert any(p.startswith(f"{SIGNATURE} cannot be read") for p in verify_package(io.BytesIO(garbage)).problems)


def test_file_names_of_the_seal_are_reserved():
    for name in (SIGNATURE, TIMESTAMP):
        with pytest.raises(PackageError):
            package(files=[(name, b"x")])


def test_fingerprints_and_public_keys():
    raw = bytes(range(32))
    digest = base64.b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")
    assert fingerprint(raw) == f"ed25519:SHA256:{digest}" != fingerprint(bytes(32))
    pem = public_pem(raw)
    assert pem.startswith("-----BEGIN PUBLIC KEY-----") and load_public_key(pem.encode()) == raw
    assert load_public_key(b"# organisation: north\n" + pem.encode()) == raw  # as --public-key prints it
    der = serialization.load_pem_public_key(pem.encode()).public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert load_public_key(der) == raw
    with pytest.raises(SigningError, match="not a public key"):
        load_public_key(b"nonsense")


def test_the_organisation_of_a_package_is_its_works_owner(store):
    store.set_owner("work", "山城旧事", "north")
    store.set_owner("work", "海上", "east")
    assert package_org(store, ["山城旧事", "山城旧事"]) == "north"
    assert package_org(store, ["山城旧事", "海上"]) == "default"  # works of two organisations
    assert package_org(store, ["无主"]) == "default"


# ---- timestamps ---------------------------------------------------------------------------

@pytest.fixture
def tsa(tmp_path):
    need(openssl() is not None, "openssl is not installed (the local time-stamping authority runs `openssl ts`): "
                                "run scripts/system-deps")
    with LocalTsa(tmp_path / "tsa") as t:
        yield t


def test_a_timestamp_token_from_the_local_tsa_is_checked_here_and_by_openssl(store, tsa, tmp_path):
    data = package(make_seal(store, "north", SECRET, environ=tsa.env))
    result = verify_package(io.BytesIO(data), tsa_ca=tsa.ca_pem)
    assert result.ok, result.problems
    assert "by Organization: fptrack tests, Common Name: Test TSA" in result.timestamp
    stamped = datetime.fromisoformat(result.timestamp.split(" by ")[0])
    assert abs((stamped - datetime.now(UTC)).total_seconds()) < 300
    found = entries(data)
    assert list(found)[-3:] == [MANIFEST, SIGNATURE, TIMESTAMP]
    # openssl, on its own, agrees (the commands docs/evidence.md gives a recipient).
    (tmp_path / "manifest.json").write_bytes(found[MANIFEST])
    (tmp_path / "manifest.tsr").write_bytes(found[TIMESTAMP])
    ok = subprocess.run([openssl(), "ts", "-verify", "-data", str(tmp_path / "manifest.json"), "-in",
                         str(tmp_path / "manifest.tsr"), "-token_in", "-CAfile", str(tsa.dir / "ca.pem")],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "Verification: OK" in ok.stdout, ok.stdout + ok.stderr
    (tmp_path / "manifest.json").write_bytes(found[MANIFEST] + b" ")
    bad = subprocess.run([openssl(), "ts", "-verify", "-data", str(tmp_path / "manifest.json"), "-in",
                          str(tmp_path / "manifest.tsr"), "-token_in", "-CAfile", str(tsa.dir / "ca.pem")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0


def test_a_token_of_another_manifest_or_another_tsa_fails(store, tsa, tmp_path):
    data = package(make_seal(store, "north", SECRET, environ=tsa.env))
    other = request_token(tsa.url, b"another manifest", policy=POLICY)
    swapped = verify_package(io.BytesIO(rewrite(data, {TIMESTAMP: other})))
    assert any(p.startswith(f"bad timestamp: {TIMESTAMP}: the timestamp is of another file") for p in swapped.problems)
    with LocalTsa(tmp_path / "other-ca") as stranger:
        elsewhere = verify_package(io.BytesIO(data), tsa_ca=stranger.ca_pem)
    assert any("was not issued by the CA given" in p for p in elsewhere.problems)
    token = entries(data)[TIMESTAMP]
    flipped = bytearray(token)
    flipped[len(flipped) - 10] ^= 0x01  # in the signature at the end of the token
    with pytest.raises(TimestampError):
        verify_token(bytes(flipped), entries(data)[MANIFEST])


def test_the_tsa_reply_is_checked_when_the_package_is_made(store, tsa):
    assert verify_token(request_token(tsa.url, b"m", ca=tsa.ca_pem, policy=POLICY), b"m", ca=tsa.ca_pem).hash == \
        hashlib.sha256(b"m").hexdigest()
    tsa.mode = "other"  # a genuine token, of another request
    with pytest.raises(TimestampError, match="another file"):
        request_token(tsa.url, b"m", policy=POLICY)
    tsa.mode = "garbage"
    with pytest.raises(TimestampError, match="not a timestamp reply"):
        request_token(tsa.url, b"m", policy=POLICY)
    tsa.mode = "http-error"
    seal = make_seal(store, "north", SECRET, environ=tsa.env)
    with pytest.raises(SigningError, match="answered HTTP 500"):
        package(seal)


def test_the_tsa_is_asked_through_the_egress_policy(store, tsa):
    refused = tsa_from_env({"FPT_TSA_URL": tsa.url})  # a loopback TSA, not allowed
    with pytest.raises(SigningError, match="loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.1/32"):
        refused(b"m")
    assert tsa.requests == 0
    allowed = tsa_from_env(tsa.env)
    assert verify_token(allowed(b"m"), b"m").hash == hashlib.sha256(b"m").hexdigest() and tsa.requests == 1


def test_an_unreachable_tsa_or_unreadable_ca_is_one_line_with_the_fix(store, tmp_path):
    stamp = tsa_from_env({"FPT_TSA_URL": "http://127.0.0.1:9/tsa", "FPT_FETCH_ALLOW": "127.0.0.1/32"})
    with pytest.raises(SigningError, match="connection refused.*check FPT_TSA_URL"):
        stamp(b"m")
    with pytest.raises(SigningError, match="FPT_TSA_CA=.*cannot read"):
        tsa_from_env({"FPT_TSA_URL": "http://127.0.0.1:9/tsa", "FPT_TSA_CA": str(tmp_path / "none.pem")})
    assert tsa_from_env({}) is None


# ---- memory ---------------------------------------------------------------------------------

BIG = 320 * 1024 * 1024
_CHILD = textwrap.dedent("""
    import hashlib, json, sys, zipfile
    from tracker.evidence import package as p

    def peak_kb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    path, size = sys.argv[1], int(sys.argv[2])
    chunk = bytes(range(256)) * 4096  # 1 MiB
    # The package written as write_package writes it, streamed: the entry never whole in memory.
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
    before = peak_kb()
    result = p.verify_package(path)
    print(json.dumps({"ok": result.ok, "problems": result.problems, "files": result.files,
                      "growth_kb": peak_kb() - before}))
""")


def test_verifying_a_huge_entry_takes_little_memory(tmp_path):
    need(Path("/proc/self/status").exists(), "peak memory is read from /proc/self/status (Linux only)")
    path = tmp_path / "big.zip"
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(BIG)], capture_output=True, text=True,
                       timeout=600, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr[-2000:]
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert found["ok"] and found["files"] == 1, found["problems"]
    assert found["growth_kb"] < 48 * 1024, f"verify grew the peak memory by {found['growth_kb']} KB for a " \
                                           f"{BIG // 2**20} MiB entry"
    # A changed byte deep inside is still found, by the same streamed pass.
    with open(path, "r+b") as f:
        f.seek(BIG // 2)
        byte = f.read(1)
        f.seek(BIG // 2)
        f.write(bytes([byte[0] ^ 1]))
    result = verify_package(str(path))
    assert not result.ok and result.problems[0].startswith("changed file: pages/001/big.bin")
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_warc_file_that_inflates_to_gigabytes_is_hashed_not_read_back():
    import gzip
    import tracemalloc

    from tracker.evidence.package import MAX_WARC_CHECK

    bomb = gzip.compress(bytes(MAX_WARC_CHECK + 1024 * 1024), compresslevel=9)  # about 65 MiB of zeros, 64 KB packed
    small = [("pages/001/a.warc.gz", bomb)]
    data = package(files=small)
    tracemalloc.start()
    try:
        result = verify_package(io.BytesIO(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok and result.files == 1 and result.warc_records == 0, result.problems
    assert result.notes[0].startswith("pages/001/a.warc.gz: more than") and "too large to read" in result.notes[0]
    assert peak < 16 * 1024 * 1024, f"verify allocated {peak} bytes at its peak for a {len(bomb)}-byte WARC file"
