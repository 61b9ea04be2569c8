"""Keep the C allocator's memory warm while ratio tests (tests.linear) run.

By default glibc maps every large array afresh and gives the heap back after a large free,
so the run on the 8x input pays a page fault per fresh 4 kB on every call while the small
run reuses memory it already touched. A linear numpy path then measures 13-15x instead of
8x (normalize: 17 ns per character at 400,000 characters, 29 at 3,200,000, all of the
difference first-touch faults). With fixed, high thresholds both runs reuse the heap and
the ratio shows the algorithm. Elsewhere than glibc this does nothing.
"""
from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
MMAP_MAX = 32 * 1024 * 1024  # the largest mmap threshold glibc accepts on 64-bit systems
DEFAULT = 128 * 1024  # glibc's initial thresholds


def _glibc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextlib.contextmanager
def steady_allocator() -> Iterator[None]:
    """Within the block, freed memory stays in the process and arrays under 32 MB come from the heap."""
    libc = _glibc()
    if libc is None:
        yield
        return
    libc.mallopt(M_MMAP_THRESHOLD, MMAP_MAX)
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_THRESHOLD, DEFAULT)
        libc.mallopt(M_TRIM_THRESHOLD, DEFAULT)
        libc.malloc_trim(0)  # give back what the tests kept
