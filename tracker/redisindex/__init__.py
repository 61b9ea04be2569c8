"""The candidate index on Redis: one instance or a Redis Cluster.

`wire` talks to the nodes (raw pipelines per node, MOVED/ASK), `layout` names the keys
and packs the postings, `state` keeps which documents are live under which id, and
`index` is the `RedisIndex` that the tracker uses.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
from ..redis_client import connect
from .index import BATCH, IndexMismatch, IndexUnavailable, RedisIndex
from .layout import FILL, MAX_BUCKET_BITS, bucket_bits, residual_bytes
from .state import ALIAS_BASE, FILTER_MASK

__all__ = ["ALIAS_BASE", "BATCH", "FILL", "FILTER_MASK", "MAX_BUCKET_BITS", "IndexMismatch", "IndexUnavailable",
           "RedisIndex", "bucket_bits", "connect", "redis_url", "residual_bytes"]


def redis_url(client) -> str:
    """The address a client talks to, for messages."""
    from ..redis_client import client_url

    return client_url(client)
