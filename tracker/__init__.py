"""The tracking system: stores, Redis indexes, matching and workers (built on `fingerprint`)."""
