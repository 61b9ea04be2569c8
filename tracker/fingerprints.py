"""Stored fingerprints: IndexKeys packed to bytes, under a hash of the parameters
that made them, so `fptrack reindex` rebuilds an index without re-reading texts
and never mixes keys made with different parameters.

Two record formats are read: FPK2 (written now) carries the translation keys, FPK1
(written before the translation channel existed) does not and unpacks with none.
"""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import asdict

import numpy as np

from fingerprint.engine import EngineConfig
from fingerprint.index import IndexKeys, IndexParams
from fingerprint.translation import index_keys as translation_keys

# magic, flags, simhash, simhash bits, counts of winnow, pinyin, bands (FPK1) ...
_HEADER_1 = struct.Struct("<4sBQHIII")
# ... and of the translation keys an original posts and those a page asks for (FPK2)
_HEADER = struct.Struct("<4sBQHIIIII")
_MAGIC_1 = b"FPK1"
_MAGIC = b"FPK2"
# The channels whose keys the index held before the translation channel: a deployment
# that indexes exactly these keeps the hash it had (its stored FPK1 records still load).
_SAME_LANGUAGE = ("simhash", "minhash", "pinyin", "winnow")
# Bump when the translation keys change in a way the constants below do not show
# (the dictionary's reading, the name or number keys).
_TRANSLATION_KEYS = 1


def params_of(config: EngineConfig, params: IndexParams) -> dict:
    """Everything that changes the keys (not the verdict thresholds).

    The translation channel is named, with the constants that pick its keys, whenever it
    is on. So an index of all five channels has a hash of its own, stable from run to
    run, but not the hash an index of the same store had before the channel existed:
    those fingerprints (FPK1, no translation keys) are not loaded under the new hash,
    and `fptrack reindex` fingerprints every chapter again, this time with its
    translation keys (nothing mixes keys with and without the channel).
    """
    c = asdict(config)
    for k in ("min_run", "min_copied", "min_containment", "min_page_share", "min_long_run", "whole_share",
              "part_share", "channels"):
        c.pop(k, None)
    index = {"winnow_sample": params.winnow_sample, "pinyin_sample": params.pinyin_sample}
    same = tuple(ch for ch in config.channels if ch in _SAME_LANGUAGE)
    if same != _SAME_LANGUAGE:  # named only when a subset is indexed: full indexes keep their hash
        index["channels"] = list(same)
    if "translation" in config.channels:
        index["translation"] = {"keys": _TRANSLATION_KEYS, "idf_min": translation_keys.KEY_IDF_MIN,
                                "max_concepts": translation_keys.MAX_CONCEPTS,
                                "max_names": translation_keys.MAX_NAMES}
    return {"engine": c, "index": index}


def params_hash(config: EngineConfig, params: IndexParams) -> str:
    return hashlib.sha256(json.dumps(params_of(config, params), sort_keys=True).encode()).hexdigest()[:16]


def pack_keys(keys: IndexKeys) -> bytes:
    """IndexKeys as bytes: a fixed header (FPK2), then the five uint64 arrays."""
    arrays = (keys.winnow, keys.pinyin, keys.bands, keys.translation, keys.translation_query)
    head = _HEADER.pack(_MAGIC, int(keys.empty), keys.simhash, keys.simhash_bits, *(len(a) for a in arrays))
    return head + b"".join(a.astype("<u8").tobytes() for a in arrays)


def unpack_keys(data: bytes) -> IndexKeys:
    """The IndexKeys of an FPK2 record, or of an FPK1 one (with no translation keys)."""
    magic = bytes(data[:4])
    header = {_MAGIC: _HEADER, _MAGIC_1: _HEADER_1}.get(magic)
    if header is None or len(data) < header.size:
        raise ValueError("not a packed fingerprint (bad header); run `fptrack reindex --refingerprint`")
    _, empty, sim, bits, *counts = header.unpack_from(data)
    if len(data) != header.size + 8 * sum(counts):
        raise ValueError("truncated packed fingerprint; run `fptrack reindex --refingerprint`")
    arr = np.frombuffer(data, dtype="<u8", offset=header.size).astype(np.uint64)
    ends = np.cumsum([0] + counts).tolist()
    parts = [arr[a:b] for a, b in zip(ends[:-1], ends[1:])]
    parts += [np.empty(0, dtype=np.uint64)] * (5 - len(parts))  # FPK1: no translation keys
    winnow, pinyin, bands, translation, query = parts
    return IndexKeys(winnow=winnow, pinyin=pinyin, simhash=sim, simhash_bits=bits, bands=bands,
                     empty=bool(empty), translation=translation, translation_query=query)
