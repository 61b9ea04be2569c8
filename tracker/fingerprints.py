"""Stored fingerprints: IndexKeys packed to bytes, under a hash of the parameters
that made them, so `fptrack reindex` rebuilds an index without re-reading texts
and never mixes keys made with different parameters."""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import asdict

import numpy as np

from fingerprint.engine import CHANNELS, EngineConfig
from fingerprint.index import IndexKeys, IndexParams

_HEADER = struct.Struct("<4sBQHIII")  # magic, flags, simhash, simhash bits, counts of winnow, pinyin, bands
_MAGIC = b"FPK1"


def params_of(config: EngineConfig, params: IndexParams) -> dict:
    """Everything that changes the keys (not the verdict thresholds)."""
    c = asdict(config)
    for k in ("min_run", "min_copied", "min_containment", "min_page_share", "min_long_run", "whole_share",
              "part_share", "channels"):
        c.pop(k, None)
    index = {"winnow_sample": params.winnow_sample, "pinyin_sample": params.pinyin_sample}
    if config.channels != CHANNELS:  # named only when a subset is indexed: full indexes keep their hash
        index["channels"] = list(config.channels)
    return {"engine": c, "index": index}


def params_hash(config: EngineConfig, params: IndexParams) -> str:
    return hashlib.sha256(json.dumps(params_of(config, params), sort_keys=True).encode()).hexdigest()[:16]


def pack_keys(keys: IndexKeys) -> bytes:
    """IndexKeys as bytes: a fixed header, then the three uint64 arrays."""
    head = _HEADER.pack(_MAGIC, int(keys.empty), keys.simhash, keys.simhash_bits,
                        len(keys.winnow), len(keys.pinyin), len(keys.bands))
    return head + b"".join(a.astype("<u8").tobytes() for a in (keys.winnow, keys.pinyin, keys.bands))


def unpack_keys(data: bytes) -> IndexKeys:
    if len(data) < _HEADER.size or data[:4] != _MAGIC:
        raise ValueError("not a packed fingerprint (bad header); run `fptrack reindex --refingerprint`")
    magic, empty, sim, bits, nw, npy, nb = _HEADER.unpack_from(data)
    if len(data) != _HEADER.size + 8 * (nw + npy + nb):
        raise ValueError("truncated packed fingerprint; run `fptrack reindex --refingerprint`")
    arr = np.frombuffer(data, dtype="<u8", offset=_HEADER.size)
    if arr.shape[0] != nw + npy + nb:
        raise ValueError("truncated packed fingerprint; run `fptrack reindex --refingerprint`")
    return IndexKeys(winnow=arr[:nw].astype(np.uint64), pinyin=arr[nw:nw + npy].astype(np.uint64),
                     simhash=sim, simhash_bits=bits, bands=arr[nw + npy:].astype(np.uint64), empty=bool(empty))
