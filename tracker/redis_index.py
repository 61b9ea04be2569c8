"""The Redis candidate index, under the name the rest of fptrack imports it by.

The code lives in the package `tracker.redisindex` (wire protocol per node, key layout,
document state, the index class); see its modules.
"""
from .redisindex import (  # noqa: F401
    ALIAS_BASE,
    BATCH,
    FILL,
    FILTER_MASK,
    MAX_BUCKET_BITS,
    IndexMismatch,
    IndexUnavailable,
    RedisIndex,
    bucket_bits,
    connect,
    redis_url,
    residual_bytes,
)
