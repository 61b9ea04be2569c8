"""The "seen this text before?" gate of page processing. A page whose text was judged before
(the same exact key, fingerprint.textkeys) against the same registered chapters gets that
judgement's matches by lookup instead of being judged again: what a mirror site reposting a
chapter on dozens of domains costs is one key and one store read a copy. `filters` keeps the
Bloom filter over the judged texts' keys (in Redis when Redis holds the index, else in the
process and saved in the store); `gate` looks a page up and records a judgement.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
from __future__ import annotations

from .filters import ERROR_RATE, RedisFilter, StoreFilter, capacity_for
from .gate import Judged, SeenTexts, settings_hash, stamp

__all__ = ["ERROR_RATE", "Judged", "RedisFilter", "SeenTexts", "StoreFilter", "capacity_for", "open_gate",
           "settings_hash", "stamp"]


def open_gate(ctx) -> SeenTexts:
    """The gate of `ctx`: its filter in Redis when FPT_REDIS_URL is set, else in the process."""
    s = ctx.settings
    if s.redis_url:
        from ..redis_client import connect

        return SeenTexts(ctx, RedisFilter(connect(s.redis_url), ctx.store, prefix=s.redis_prefix))
    return SeenTexts(ctx, StoreFilter(ctx.store))
