"""The record of an organisation's signing key: the Ed25519 key its evidence packages are
signed with (tracker.evidence.signing). The store keeps the private key only encrypted
(PKCS#8, with a password made of the installation's secret key), the public key as is."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .records import now

ALGORITHMS = ("ed25519",)


@dataclass
class SigningKey:
    """One per organisation; never replaced, so every package it signed stays checkable."""
    org: str  # Organisation.name
    public_key: bytes  # the raw Ed25519 public key (32 bytes)
    private_key: bytes  # encrypted PKCS#8 PEM
    algorithm: str = "ed25519"
    created_at: datetime = field(default_factory=now)


def check_signing_key(key: SigningKey) -> SigningKey:
    """Raise ValueError for a key no backend should keep."""
    if key.algorithm not in ALGORITHMS:
        raise ValueError(f"signing key algorithm must be one of {', '.join(ALGORITHMS)}, not {key.algorithm!r}")
    if not key.org:
        raise ValueError("a signing key belongs to an organisation: give its name")
    if len(key.public_key) != 32 or not key.private_key.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"):
        raise ValueError("a signing key is a 32-byte public key and an encrypted PKCS#8 PEM private key")
    return key
