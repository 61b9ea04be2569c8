"""The tracking system: stores, Redis indexes, matching and workers (built on `fingerprint`).

May import: fingerprint and tracker (never crawler or web).
"""

