"""The fptrack fingerprint engine: pure algorithms on text and numbers.

No database, network or framework is imported here, so the same functions run
in the offline `simtool`, in the tracker's workers, and in tests.

May import: fingerprint only.
"""
__version__ = "0.1.0"
