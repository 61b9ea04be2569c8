"""`fptrack evidence` and signatures: a package is signed with its organisation's key, whose
public half --public-key prints; --verify names the key, checks it against --key, and checks
the timestamp of a local time-stamping authority (tests/tracker/tsa.py)."""
from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime
from pathlib import Path

from tests.conftest import need
from tests.tracker.tsa import LocalTsa, openssl
from tracker.evidence.package import MANIFEST, verify_package, write_package
from tracker.evidence.signing import SIGNATURE, fingerprint, load_public_key
from tracker.store.open import store_at
from tracker.store.tenancy import Organisation

from .test_evidence_package import PAGE, home, keep_warc, run  # noqa: F401 (home: a fixture)
from .test_orgs import east, signed_in  # noqa: F401 (east: a fixture)


def make(home, tmp_path, name="p.zip") -> Path:
    out = tmp_path / name
    made = run([PAGE, "-o", str(out), "--no-pdf"], home)
    assert made.exit_code == 0, made.output
    return out


def public_key(home, tmp_path, org=None) -> tuple[Path, str]:
    r = run(["--public-key", *(["--org", org] if org else [])], home)
    assert r.exit_code == 0, r.output
    path = tmp_path / f"{org or 'default'}.pem"
    path.write_text(r.output)
    (line,) = [x for x in r.output.splitlines() if x.startswith("# fingerprint: ")]
    return path, line.removeprefix("# fingerprint: ")


def test_a_package_is_signed_and_verify_names_the_key_the_organisation_publishes(home, tmp_path):
    out = make(home, tmp_path)
    pem, key = public_key(home, tmp_path)
    assert "-----BEGIN PUBLIC KEY-----" in pem.read_text() and key.startswith("ed25519:SHA256:")
    ok = run(["--verify", str(out)], home)
    assert ok.exit_code == 0, ok.output
    assert f"signed: by organisation 'default', key {key} (compare it with the key the organisation publishes)" \
        in ok.output
    trusted = run(["--verify", str(out), "--key", str(pem)], home)
    assert trusted.exit_code == 0 and f"key {key} (the key given)" in trusted.output
    assert public_key(home, tmp_path)[1] == key  # the same key every time


def test_a_rewritten_manifest_fails_with_a_clear_line(home, tmp_path):
    out = make(home, tmp_path)
    with zipfile.ZipFile(out) as z:
        found = {n: z.read(n) for n in z.namelist()}
    info = json.loads(found[MANIFEST])
    files = [(f["name"], found[f["name"]]) for f in info["files"]]
    files = [(n, b"NOTICE: changed\n" if n == "notice.txt" else d) for n, d in files]

    class Kept:  # the forger keeps the signature and the manifest's signer as found
        signed_by = info["signed_by"]

        def entries(self, manifest):
            return [(SIGNATURE, found[SIGNATURE])]

    extra = {k: v for k, v in info.items() if k not in ("format", "created_at", "files", "signed_by")}
    buf = io.BytesIO()
    write_package(buf, files, extra, datetime.fromisoformat(info["created_at"]), seal=Kept())
    out.write_bytes(buf.getvalue())
    bad = run(["--verify", str(out)], home)
    assert bad.exit_code == 1
    assert bad.output.splitlines()[0].startswith("FAIL: bad signature: manifest.json is not the one key")
    assert bad.output.rstrip().endswith("this package is not as it was made")


def test_another_organisations_key_fails(home, tmp_path):
    s = store_at(None, Path(home["FPT_HOME"]))
    s.upsert_org(Organisation("north"))
    s.close()
    out = make(home, tmp_path)
    north, north_key = public_key(home, tmp_path, "north")
    _, default_key = public_key(home, tmp_path)
    assert north_key != default_key
    r = run(["--verify", str(out), "--key", str(north)], home)
    assert r.exit_code == 1
    assert f"FAIL: signed by key {default_key} (organisation 'default'), not by the key given ({north_key})" \
        in r.output
    assert run(["--public-key", "--org", "nowhere"], home).output == "Error: not found: no organisation 'nowhere'\n"


def test_an_unsigned_package_verifies_and_says_so(home, tmp_path):
    out = tmp_path / "old.zip"
    with open(out, "wb") as f:
        write_package(f, [("notice.txt", b"NOTICE\n")], {})
    r = run(["--verify", str(out)], home)
    assert r.exit_code == 0 and r.output.startswith("ok: ")
    assert "note: unsigned: this package carries no signature" in r.output and "signed: by" not in r.output
    pem, _ = public_key(home, tmp_path)
    refused = run(["--verify", str(out), "--key", str(pem)], home)
    assert refused.exit_code == 1 and "FAIL: unsigned:" in refused.output


def test_mistakes_are_one_line(home, tmp_path):
    out = make(home, tmp_path)
    missing = run(["--verify", str(out), "--key", str(tmp_path / "none.pem")], home)
    assert missing.exit_code == 2 and "cannot read the public key" in missing.output
    (tmp_path / "junk.pem").write_text("not a key")
    junk = run(["--verify", str(out), "--key", str(tmp_path / "junk.pem")], home)
    assert junk.exit_code == 2 and "not a public key" in junk.output
    assert run([PAGE, "-o", str(out), "--key", str(tmp_path / "junk.pem")], home).exit_code == 2
    assert run(["--public-key", "--verify", str(out)], home).exit_code == 2
    env = {**home, "FPT_TSA_URL": "http://127.0.0.1:9/tsa", "FPT_FETCH_ALLOW": "127.0.0.1/32"}
    unreachable = run([PAGE, "-o", str(tmp_path / "q.zip"), "--no-pdf"], env)
    assert unreachable.exit_code == 1 and unreachable.output.startswith("Error: no timestamp for the package: ")
    assert "FPT_TSA_URL" in unreachable.output and not (tmp_path / "q.zip").exists()


def test_a_time_stamped_package(home, tmp_path):
    need(openssl() is not None, "openssl is not installed (the local time-stamping authority runs `openssl ts`): "
                                "run scripts/system-deps")
    with LocalTsa(tmp_path / "tsa") as tsa:
        out = make({**home, **tsa.env}, tmp_path)
    ca = tsa.dir / "ca.pem"
    r = run(["--verify", str(out), "--tsa-ca", str(ca)], home)
    assert r.exit_code == 0, r.output
    assert "time-stamped: " in r.output and "Common Name: Test TSA" in r.output
    unchecked = run(["--verify", str(out)], home)
    assert "note: the timestamp's TSA certificate was not checked against a CA" in unchecked.output


# ---- the admin ------------------------------------------------------------------------------

def test_the_admin_download_is_signed_with_the_key_the_api_publishes(app, east, viewer, store, monkeypatch):
    keep_warc(store)
    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")
    published = viewer.get("/api/evidence/public-key").get_json()
    assert published["org"] == "default" and published["algorithm"] == "Ed25519"
    default_key = load_public_key(published["public_key"].encode())
    assert fingerprint(default_key) == published["fingerprint"]
    body = viewer.get("/evidence/package", query_string={"page_key": PAGE}).get_data()
    result = verify_package(io.BytesIO(body), trusted=[default_key])
    assert result.ok and (result.org, result.signed_by) == ("default", published["fingerprint"])
    # Another organisation publishes its own key, signs its own packages with it, and its key
    # does not vouch for the default organisation's package.
    ed = signed_in(app, "ed")
    east_key = ed.get("/api/evidence/public-key").get_json()
    assert east_key["org"] == "east" and east_key["fingerprint"] != published["fingerprint"]
    assert ed.get("/api/evidence/public-key").get_json() == east_key
    east_body = ed.get("/evidence/package", query_string={"page_key": "https://dc.example/1"}).get_data()
    east_result = verify_package(io.BytesIO(east_body), trusted=[load_public_key(east_key["public_key"].encode())])
    assert east_result.ok and east_result.org == "east"
    refused = verify_package(io.BytesIO(body), trusted=[load_public_key(east_key["public_key"].encode())])
    assert not refused.ok and "not by the key given" in refused.problems[0]


def test_a_tsa_that_fails_is_a_503_with_the_reason(viewer, store, monkeypatch):
    keep_warc(store)
    monkeypatch.setenv("FPT_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("FPT_TSA_URL", "http://127.0.0.1:9/tsa")
    r = viewer.get("/evidence/package", query_string={"page_key": PAGE})
    assert r.status_code == 503 and "FPT_TSA_URL" in r.get_data(as_text=True)


def test_the_command_asks_the_tsa_through_the_configured_egress_policy(home, tmp_path):
    need(openssl() is not None, "openssl is not installed (the local time-stamping authority runs `openssl ts`): "
                                "run scripts/system-deps")
    config = tmp_path / "fptrack.toml"
    config.write_text('[fptrack]\nfetch_allow = "127.0.0.1/32"\n')
    with LocalTsa(tmp_path / "tsa") as tsa:
        env = {**home, "FPT_TSA_URL": tsa.url, "FPT_FETCH_ALLOW": None}  # None: unset (the tests allow loopback)
        refused = run([PAGE, "-o", str(tmp_path / "refused.zip"), "--no-pdf"], env)
        assert refused.exit_code == 1 and "allow it with FPT_FETCH_ALLOW=127.0.0.1/32" in refused.output
        out = make({**env, "FPT_CONFIG": str(config)}, tmp_path)
    assert "time-stamped: " in run(["--verify", str(out)], home).output
