"""A time-stamping authority on a loopback port for the tests: `openssl ts -reply` with a
throwaway CA and TSA certificate, behind a small http.server that pipes each request to it.

    with LocalTsa(tmp_path) as tsa:
        token = request_token(tsa.url, b"...", ca=tsa.ca_pem, policy=POLICY)

`mode` makes it misbehave: "ok", "http-error" (HTTP 500), "garbage" (not a reply), "other"
(a genuine reply, but to another request: another hash and nonce).
"""
from __future__ import annotations

import shutil
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tracker.egress import EgressPolicy
from tracker.evidence.timestamp import make_request

#: The egress policy that lets the tests reach it (a loopback address is refused by default).
ALLOW = "127.0.0.1/32"
POLICY = EgressPolicy.from_text(ALLOW)

CONFIG = """
[ tsa ]
default_tsa = tsa_config1

[ tsa_config1 ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/ca.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def openssl() -> str | None:
    return shutil.which("openssl")


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "fptrack tests")])


def make_ca(folder: Path, name: str = "Test TSA CA") -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed CA, written to folder/ca.pem."""
    key = ec.generate_private_key(ec.SECP256R1())
    start = datetime.now(UTC) - timedelta(days=1)
    cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    (folder / "ca.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def make_tsa_cert(folder: Path, ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate) -> None:
    """The TSA's key and certificate (extendedKeyUsage timeStamping, critical, as RFC 3161 asks)."""
    key = ec.generate_private_key(ec.SECP256R1())
    start = datetime.now(UTC) - timedelta(days=1)
    cert = (x509.CertificateBuilder().subject_name(_name("Test TSA")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
            .sign(ca_key, hashes.SHA256()))
    (folder / "tsa.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "tsa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                       serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))


class LocalTsa:
    def __init__(self, folder: Path):
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        ca_key, ca = make_ca(self.dir)
        make_tsa_cert(self.dir, ca_key, ca)
        (self.dir / "serial").write_text("01\n")
        (self.dir / "tsa.cnf").write_text(CONFIG.format(dir=self.dir))
        self.ca_pem = (self.dir / "ca.pem").read_bytes()
        self.mode = "ok"
        self.requests = 0
        self._lock = threading.Lock()
        tsa = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, reply = tsa.answer(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/timestamp-reply")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/tsa"
        self.env = {"FPT_TSA_URL": self.url, "FPT_FETCH_ALLOW": ALLOW}  # what makes packages time-stamped by it
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def reply(self, query: bytes) -> bytes:
        """`openssl ts -reply` to a DER TimeStampReq."""
        with self._lock:  # one openssl at a time: they share the serial file
            self.requests += 1
            q, r = self.dir / f"q{self.requests}.tsq", self.dir / f"r{self.requests}.tsr"
            q.write_bytes(query)
            subprocess.run([openssl() or "openssl", "ts", "-reply", "-config", str(self.dir / "tsa.cnf"),
                            "-queryfile", str(q), "-out", str(r)], check=True, capture_output=True, timeout=60)
            return r.read_bytes()

    def answer(self, query: bytes) -> tuple[int, bytes]:
        if self.mode == "http-error":
            return 500, b"broken"
        if self.mode == "garbage":
            return 200, b"\x30\x03\x02\x01\x00not a reply"
        if self.mode == "other":
            return 200, self.reply(make_request(bytes(32), 42))
        return 200, self.reply(query)

    def __enter__(self) -> LocalTsa:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
