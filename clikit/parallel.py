"""Run a function over many documents in worker processes, results in input order.

A simtool command that fingerprints a folder of chapters is CPU work on independent
documents: with `--jobs N` (default: one per core, at most 8) the documents go to N
worker processes in chunks, and the results come back in the order of the input, so
the output is the same byte for byte as with `--jobs 1`, which works in the command's
own process (as do small inputs, where starting workers would cost more than it saves).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
MAX_JOBS = 8
MIN_PER_JOB = 16  # fewer documents than this per worker: not worth a process


def default_jobs() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores))


def _quiet_worker() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the command, which stops its workers


def ordered_map(fn: Callable[[Any], T], items: Sequence[Any], jobs: int) -> Iterator[T]:
    """fn(item) for every item, in order; in `jobs` worker processes when that pays."""
    jobs = min(jobs, len(items) // MIN_PER_JOB)
    if jobs <= 1:
        yield from map(fn, items)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, min(64, len(items) // (jobs * 8)))
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                             initializer=_quiet_worker) as pool:
        yield from pool.map(fn, items, chunksize=chunk)


