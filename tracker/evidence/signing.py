"""Signed evidence packages: an Ed25519 signature over the exact bytes of manifest.json, made
with the key of the organisation whose evidence it is, so a package whose file and manifest
were both changed to match no longer verifies: the change needs the organisation's key.

Each organisation has one key, made on first use and kept in the store (tracker.store.signing_keys):
the private key only as encrypted PKCS#8, its password derived from the installation's secret
key (FPT_SECRET_KEY, or the one kept in FPT_HOME). A recipient checks a package against the
public key the organisation publishes (`fptrack evidence --public-key`), named by a short
fingerprint:

    >>> fingerprint(bytes(32))
    'ed25519:SHA256:Zmh6rfhivXdsj8GLjp+OIAiXFIVu4jOzkCpZHQ1fKSU'

The signature travels in the zip as manifest.sig, a small JSON file; the manifest names the
organisation and key (its "signed_by"), so they are signed too.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tracker.egress import EgressPolicy
from tracker.store.records import NotFound
from tracker.store.signing_keys import SigningKey
from tracker.store.tenancy import DEFAULT_ORG

from .timestamp import TimestampError, request_token

SIGNATURE = "manifest.sig"
TIMESTAMP = "manifest.tsr"
SIGNATURE_FORMAT = "fptrack-evidence-signature/1"
TSA_URL_VAR = "FPT_TSA_URL"  # a time-stamping authority: every package made gets a timestamp from it
TSA_CA_VAR = "FPT_TSA_CA"  # its CA certificate (a PEM file): the TSA's certificate must be issued by it


class SigningError(ValueError):
    """A key that cannot be used or read; the message says the fix."""


def fingerprint(public_key: bytes) -> str:
    """The short name of a raw Ed25519 public key: SHA-256 of its 32 bytes, base64 without padding."""
    digest = base64.b64encode(hashlib.sha256(public_key).digest()).decode("ascii").rstrip("=")
    return f"ed25519:SHA256:{digest}"


def public_pem(public_key: bytes) -> str:
    """The public key as PEM (SubjectPublicKeyInfo), as openssl and every library read it."""
    key = Ed25519PublicKey.from_public_bytes(public_key)
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def load_public_key(data: bytes) -> bytes:
    """A raw Ed25519 public key from PEM or DER; SigningError when it is not one."""
    begin = data.find(b"-----BEGIN")  # PEM may follow comment lines (as --public-key prints them)
    try:
        key = (serialization.load_pem_public_key(data[begin:]) if begin >= 0
               else serialization.load_der_public_key(data))
    except (ValueError, TypeError) as e:
        raise SigningError(f"not a public key in PEM or DER: {str(e)[:120]}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"the key is {type(key).__name__.removeprefix('_')}, not Ed25519: give the key printed by "
                           "`fptrack evidence --public-key`")
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _password(secret: str, org: str) -> bytes:
    # One password per organisation, derived from the installation's secret key: a copy of the
    # store alone does not give the private keys away.
    return hmac.new(secret.encode("utf-8"), b"fptrack evidence signing key\0" + org.encode("utf-8"),
                    hashlib.sha256).hexdigest().encode("ascii")


@dataclass
class Signer:
    """The organisation's key, ready to sign."""
    org: str
    private: Ed25519PrivateKey
    public_key: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


def new_key(org: str, secret: str) -> SigningKey:
    """A new Ed25519 key for `org`, its private half encrypted with the secret key."""
    private = Ed25519PrivateKey.generate()
    return SigningKey(
        org=org,
        public_key=private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw),
        private_key=private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.BestAvailableEncryption(_password(secret, org))))


def org_signer(store: Any, org: str, secret: str) -> Signer:
    """The signer of `org`, its key made and stored on first use."""
    if not secret:
        raise SigningError("no secret key to protect the signing key: set FPT_SECRET_KEY")
    try:
        key = store.signing_key(org)
    except NotFound:
        key = store.add_signing_key(new_key(org, secret))  # of two made at once, the stored one is used
    try:
        private = serialization.load_pem_private_key(key.private_key, _password(secret, org))
    except (ValueError, TypeError):
        raise SigningError(f"the signing key of organisation {org!r} cannot be opened with this installation's secret "
                           "key: set FPT_SECRET_KEY (or FPT_HOME) to the one it was made with") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningError(f"the signing key of organisation {org!r} is not an Ed25519 key")
    return Signer(org, private, key.public_key)


def org_public_key(store: Any, org: str) -> bytes | None:
    """The raw public key of `org` (None: it has signed nothing yet)."""
    try:
        return store.signing_key(org).public_key
    except NotFound:
        return None


@dataclass
class Seal:
    """What package.write_package adds to a package: the signature of its manifest and, with a
    time-stamping authority, its RFC 3161 timestamp token (tracker.evidence.timestamp)."""
    signer: Signer
    timestamper: Callable[[bytes], bytes] | None = None  # manifest bytes -> timestamp token (DER)

    @property
    def signed_by(self) -> dict[str, str]:
        return {"org": self.signer.org, "key": self.signer.fingerprint, "algorithm": "Ed25519"}

    def entries(self, manifest: bytes) -> list[tuple[str, bytes]]:
        envelope = {"format": SIGNATURE_FORMAT, "algorithm": "Ed25519", "org": self.signer.org,
                    "key": self.signer.fingerprint, "public_key": public_pem(self.signer.public_key),
                    "signed": "manifest.json", "signature": base64.b64encode(self.signer.sign(manifest)).decode()}
        out = [(SIGNATURE, (json.dumps(envelope, indent=2) + "\n").encode("utf-8"))]
        if self.timestamper is not None:
            out.append((TIMESTAMP, self.timestamper(manifest)))
        return out


@dataclass
class SignatureCheck:
    """What the signature check found: problems (none: it holds), and whose key signed."""
    problems: list[str] = field(default_factory=list)
    key: str = ""  # fingerprint
    org: str = ""
    public_key: bytes = b""


def check_signature(envelope_bytes: bytes, manifest: bytes, signed_by: Any,
                    trusted: Sequence[bytes] = ()) -> SignatureCheck:
    """Check manifest.sig against the manifest's bytes and its "signed_by"; with `trusted` keys
    (raw), the key that signed must be one of them."""
    out = SignatureCheck()
    try:
        env = json.loads(envelope_bytes.decode("utf-8"))
        public = load_public_key(env["public_key"].encode("ascii"))
        signature = base64.b64decode(env["signature"], validate=True)
    except (UnicodeError, ValueError, KeyError, TypeError, AttributeError, binascii.Error) as e:
        out.problems.append(f"{SIGNATURE} cannot be read: {type(e).__name__}: {str(e)[:120]}")
        return out
    out.public_key, out.key = public, fingerprint(public)
    out.org = str(env.get("org", ""))[:64]
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, manifest)
    except InvalidSignature:
        out.problems.append(f"bad signature: manifest.json is not the one key {out.key} signed (a file and the "
                            "manifest were changed, or the signature was)")
        return out
    if not isinstance(signed_by, dict) or signed_by.get("key") != out.key or signed_by.get("org") != out.org:
        out.problems.append(f"manifest.json does not name the key that signed it ({out.key}, organisation "
                            f"{out.org!r})")
    if trusted and public not in trusted:
        names = ", ".join(fingerprint(k) for k in trusted)
        out.problems.append(f"signed by key {out.key} (organisation {out.org!r}), not by the key given ({names})")
    return out


def package_org(store: Any, works: Iterable[str]) -> str:
    """The organisation whose key signs a package of these works' matches: their owner when they
    have one, else the default organisation."""
    owners = {store.owner("work", w) for w in works}
    return owners.pop() if len(owners) == 1 else DEFAULT_ORG


def tsa_from_env(environ: Mapping[str, str] | None = None, policy: EgressPolicy | None = None
                 ) -> Callable[[bytes], bytes] | None:
    """The timestamper of FPT_TSA_URL (None when unset): manifest bytes -> a checked token, asked
    through the egress policy (default: the one of FPT_FETCH_ALLOW)."""
    env = os.environ if environ is None else environ
    url = env.get(TSA_URL_VAR, "").strip()
    if not url:
        return None
    ca: bytes | None = None
    if env.get(TSA_CA_VAR, "").strip():
        path = Path(env[TSA_CA_VAR].strip()).expanduser()
        try:
            ca = path.read_bytes()
        except OSError as e:
            raise SigningError(f"{TSA_CA_VAR}={path}: cannot read the TSA's CA certificate ({e.strerror}); "
                               "give a PEM file, or unset it") from None

    def stamp(manifest: bytes) -> bytes:
        try:
            return request_token(url, manifest, ca=ca, policy=policy or EgressPolicy.load(environ=env))
        except TimestampError as e:
            raise SigningError(f"no timestamp for the package: {e}") from None

    return stamp


def make_seal(store: Any, org: str, secret: str, environ: Mapping[str, str] | None = None,
              policy: EgressPolicy | None = None) -> Seal:
    """The seal of `org`'s packages: its signature, and a timestamp when FPT_TSA_URL is set."""
    return Seal(org_signer(store, org, secret), tsa_from_env(environ, policy))
