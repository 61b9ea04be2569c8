"""The tracking system: stores, Redis indexes, matching and workers (built on `fingerprint`).

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""

