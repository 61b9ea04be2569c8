"""Prove that a text path runs in linear time, by a ratio rather than a wall clock.

`assert_linear(fn, make, n)` times `fn(make(n))` and `fn(make(8 * n))`, each the
best of a few runs, in CPU time of the calling thread (so other processes on a
busy machine do not count, and a burst of load only slows both), and fails when the
larger input costs more than `max_ratio` times the smaller one. Linear code
gives a ratio near 8 (often less, as fixed costs amortise); quadratic code gives
about 64, so the default bound of 12 separates them with room for noise, caches
and allocation. Pick `n` so the
small run takes at least a few milliseconds: below that, fixed costs hide the
shape of the curve.
"""
from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

FACTOR = 8
MAX_RATIO = 12.0
ATTEMPTS = 5  # measurements at most before a path is called super-linear


_frozen = 0  # how many _heap_frozen blocks are open (growth_ratio's holds best_time's)


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Within the block, the objects that lived before it (the test run's modules and collected
    tests, garbage included) sit in gc's permanent generation: gc.collect() before each timed call
    then empties what the calls left behind without walking the whole heap of the process each
    time (a tenth of a second per collection in a full run, longer than most timed calls), and a
    collection the interpreter starts during a timed call costs the same for the small input as
    for the large one. Everything is handed back to gc when the outermost block ends."""
    global _frozen
    if _frozen == 0:
        gc.freeze()
    _frozen += 1
    try:
        yield
    finally:
        _frozen -= 1
        if _frozen == 0:
            gc.unfreeze()


def best_time(fn: Callable[[Any], Any], arg: Any, repeats: int = 3) -> float:
    """The fastest of `repeats` calls of fn(arg), in seconds of this thread's CPU time."""
    best = float("inf")
    with _heap_frozen():
        for _ in range(repeats):
            gc.collect()
            t0 = time.thread_time()
            fn(arg)
            best = min(best, time.thread_time() - t0)
    return best


def growth_ratio(fn: Callable[[Any], Any], make: Callable[[int], Any], n: int, *, factor: int = FACTOR,
                 repeats: int = 3) -> float:
    """time(fn(make(factor * n))) / time(fn(make(n)))."""
    small, large = make(n), make(factor * n)
    with _heap_frozen():
        fn(small)  # warm caches and lazy tables outside the timing
        t_small = best_time(fn, small, repeats)
        t_large = best_time(fn, large, repeats)
    return t_large / max(t_small, 1e-6)


def assert_linear(fn: Callable[[Any], Any], make: Callable[[int], Any], n: int, *, what: str = "",
                  factor: int = FACTOR, max_ratio: float = MAX_RATIO, repeats: int = 3) -> float:
    """Fail unless growing the input `factor` times grows the time at most `max_ratio` times."""
    ratio = growth_ratio(fn, make, n, factor=factor, repeats=repeats)
    # Up to ATTEMPTS measurements, the lowest kept: a burst of load, or another test worker sharing
    # the core's caches, can slow the large run alone. Quadratic code stays near 64x in every one.
    for _ in range(ATTEMPTS - 1):
        if ratio <= max_ratio:
            break
        ratio = min(ratio, growth_ratio(fn, make, n, factor=factor, repeats=repeats))
    label = what or getattr(fn, "__name__", "the function")
    assert ratio <= max_ratio, (
        f"{label}: {factor}x the input took {ratio:.1f}x the time (linear is about {factor}x); "
        "something in this path is super-linear"
    )
    return ratio
