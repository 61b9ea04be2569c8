"""RFC 3161 timestamps: a time-stamping authority (TSA) signs "this SHA-256 existed at this
time", so a package's manifest is dated by someone other than its maker.

    request_token(url, manifest)   TimeStampReq ─POST─▶ TSA ─▶ TimeStampResp: granted? the token
    verify_token(token, manifest)  messageImprint = SHA-256(manifest), nonce, signed attributes'
                                   message-digest = hash of the TSTInfo, the TSA's signature over them

The request is built here (asn1crypto): version 1, messageImprint {sha256, the hash}, a random
nonce, certReq TRUE (so the token carries the TSA's certificate to check it by). Anyone can check
the token with openssl alone (docs/evidence.md):

    openssl ts -verify -data manifest.json -in manifest.tsr -token_in -CAfile tsa-ca.pem
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from asn1crypto import cms, tsp, x509
from cryptography import x509 as cx509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from tracker.egress import EgressPolicy, FetchError, fetch

MEDIA_REQUEST = "application/timestamp-query"
MEDIA_REPLY = "application/timestamp-reply"
MAX_REPLY_BYTES = 256 * 1024
_HASHES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512, "sha1": hashes.SHA1}


class TimestampError(ValueError):
    """No usable timestamp: the TSA cannot be reached, refused, or its token does not hold."""


@dataclass
class Stamp:
    """What a verified token says."""
    time: datetime
    tsa: str  # the TSA certificate's subject
    serial: int
    hash: str  # the SHA-256 it dates (hex)


def make_request(digest: bytes, nonce: int) -> bytes:
    """The DER of a TimeStampReq for a SHA-256 `digest`."""
    return tsp.TimeStampReq({
        "version": "v1",
        "message_imprint": {"hash_algorithm": {"algorithm": "sha256"}, "hashed_message": digest},
        "nonce": nonce,
        "cert_req": True,
    }).dump()


def _post(url: str, body: bytes, timeout: float, policy: EgressPolicy | None) -> bytes:
    """POST the request through the egress policy (a TSA on a private or loopback address needs
    FPT_FETCH_ALLOW), within `timeout` seconds in all."""
    try:
        r = fetch(url, policy=policy or EgressPolicy.load(), method="POST", body=body, deadline=timeout,
                  headers={"Content-Type": MEDIA_REQUEST, "Accept": MEDIA_REPLY}, max_bytes=MAX_REPLY_BYTES)
    except FetchError as e:
        raise TimestampError(f"{e} (the time-stamping authority: check FPT_TSA_URL, or unset it to make packages "
                             "without a timestamp)") from None
    if r.status != 200:
        raise TimestampError(f"the time-stamping authority {url} answered HTTP {r.status}")
    if r.truncated:
        raise TimestampError(f"the time-stamping authority {url} answered more than {MAX_REPLY_BYTES} bytes")
    return r.body


def request_token(url: str, data: bytes, *, timeout: float = 15.0, ca: bytes | None = None,
                  policy: EgressPolicy | None = None) -> bytes:
    """The timestamp token (DER) of SHA-256(`data`) from the TSA at `url`, checked. Raises TimestampError."""
    digest = hashlib.sha256(data).digest()
    nonce = secrets.randbits(63)
    reply = _post(url, make_request(digest, nonce), timeout, policy)
    try:
        response = tsp.TimeStampResp.load(reply)
        status = response["status"]["status"].native
    except (ValueError, TypeError, KeyError) as e:
        raise TimestampError(f"the time-stamping authority {url} answered something that is not a timestamp reply "
                             f"({type(e).__name__})") from None
    if status not in ("granted", "granted_with_mods"):
        text = response["status"]["status_string"].native if response["status"]["status_string"] else None
        raise TimestampError(f"the time-stamping authority {url} refused the request: {status}"
                             + (f" ({'; '.join(text)[:160]})" if text else ""))
    token = response["time_stamp_token"].dump()
    verify_token(token, data, nonce=nonce, ca=ca)
    return token


def verify_token(token: bytes, data: bytes, *, nonce: int | None = None, ca: bytes | None = None) -> Stamp:
    """Check a timestamp token over SHA-256(`data`): the hash it dates, the nonce (when given), the
    message-digest of its signed attributes, and the TSA certificate's signature over them; with
    `ca` (PEM or DER), that the certificate was issued by it. Raises TimestampError."""
    try:
        return _verify(token, data, nonce, ca)
    except TimestampError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise TimestampError(f"the timestamp token cannot be read: {type(e).__name__}: {str(e)[:120]}") from None


def _verify(token: bytes, data: bytes, nonce: int | None, ca: bytes | None) -> Stamp:
    info = cms.ContentInfo.load(token)
    if info["content_type"].native != "signed_data":
        raise TimestampError("the timestamp token is not CMS signed data")
    signed = info["content"]
    encap = signed["encap_content_info"]
    if encap["content_type"].native != "tst_info":
        raise TimestampError("the timestamp token does not hold a TSTInfo")
    tst_der = encap["content"].contents  # the OCTET STRING's bytes: the DER of the TSTInfo, as signed
    tst = tsp.TSTInfo.load(tst_der)
    imprint = tst["message_imprint"]
    if imprint["hash_algorithm"]["algorithm"].native != "sha256":
        raise TimestampError(f"the timestamp dates a {imprint['hash_algorithm']['algorithm'].native} hash, not SHA-256")
    digest = hashlib.sha256(data).digest()
    if imprint["hashed_message"].native != digest:
        raise TimestampError("the timestamp is of another file: its hash is not the SHA-256 of manifest.json")
    if nonce is not None and tst["nonce"].native != nonce:
        raise TimestampError("the timestamp reply does not answer this request (another nonce)")
    if len(signed["signer_infos"]) != 1:
        raise TimestampError("the timestamp token has no single signer")
    signer = signed["signer_infos"][0]
    cert = _signer_cert(signed, signer)
    hash_name = signer["digest_algorithm"]["algorithm"].native
    if hash_name not in _HASHES:
        raise TimestampError(f"the timestamp token is signed with {hash_name}, which is not checked here")
    attrs = {a["type"].native: a["values"] for a in signer["signed_attrs"]}
    if "message_digest" not in attrs or "content_type" not in attrs:
        raise TimestampError("the timestamp token's signature has no message-digest or content-type attribute")
    if attrs["content_type"][0].native != "tst_info":
        raise TimestampError("the timestamp token's signed content-type is not TSTInfo")
    h = hashes.Hash(_HASHES[hash_name]())
    h.update(tst_der)
    if attrs["message_digest"][0].native != h.finalize():
        raise TimestampError("the timestamp token's TSTInfo was changed after it was signed (message-digest)")
    # The signature is over the signed attributes' DER as a SET (RFC 5652 5.4), not as the [0] they are sent in:
    # the same bytes but the first (0xA0 -> 0x31).
    sent = signer["signed_attrs"].dump()
    signed_attrs = b"\x31" + sent[1:]
    _check_signature(cert, signer, signed_attrs, _HASHES[hash_name]())
    crypto_cert = cx509.load_der_x509_certificate(cert.dump())
    if ca is not None:
        _check_issuer(crypto_cert, ca)
    return Stamp(time=tst["gen_time"].native, tsa=cert.subject.human_friendly, serial=tst["serial_number"].native,
                 hash=digest.hex())


def _signer_cert(signed: cms.SignedData, signer: cms.SignerInfo) -> x509.Certificate:
    sid = signer["sid"]
    for choice in signed["certificates"] or []:
        if choice.name != "certificate":
            continue
        cert = choice.chosen
        if sid.name == "issuer_and_serial_number":
            if (cert.issuer == sid.chosen["issuer"]
                    and cert.serial_number == sid.chosen["serial_number"].native):
                return cert
        elif cert.key_identifier == sid.chosen.native:
            return cert
    raise TimestampError("the timestamp token does not carry the TSA's certificate (it was asked for: certReq)")


def _check_signature(cert: x509.Certificate, signer: cms.SignerInfo, message: bytes,
                     hash_algorithm: hashes.HashAlgorithm) -> None:
    public = cx509.load_der_x509_certificate(cert.dump()).public_key()
    signature = signer["signature"].native
    algorithm = signer["signature_algorithm"]["algorithm"].native
    try:
        if isinstance(public, rsa.RSAPublicKey):
            if algorithm == "rsassa_pss":
                params = signer["signature_algorithm"]["parameters"]
                pss_hash = _HASHES[params["hash_algorithm"]["algorithm"].native]()
                public.verify(signature, message, padding.PSS(padding.MGF1(pss_hash), params["salt_length"].native),
                              pss_hash)
            else:
                public.verify(signature, message, padding.PKCS1v15(), hash_algorithm)
        elif isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(signature, message, ec.ECDSA(hash_algorithm))
        else:
            raise TimestampError(f"the TSA's key is {type(public).__name__}, which is not checked here")
    except InvalidSignature:
        raise TimestampError("the timestamp token's signature does not match the TSA's certificate") from None


def _check_issuer(cert: cx509.Certificate, ca: bytes) -> None:
    try:
        authority = (cx509.load_pem_x509_certificate(ca) if ca.lstrip().startswith(b"-----")
                     else cx509.load_der_x509_certificate(ca))
    except ValueError as e:
        raise TimestampError(f"the TSA's CA certificate cannot be read: {str(e)[:120]}") from None
    if cert.fingerprint(hashes.SHA256()) == authority.fingerprint(hashes.SHA256()):
        return
    try:
        cert.verify_directly_issued_by(authority)
    except (ValueError, TypeError, InvalidSignature):
        raise TimestampError(f"the TSA's certificate ({cert.subject.rfc4514_string()}) was not issued by the CA "
                             f"given ({authority.subject.rfc4514_string()})") from None

