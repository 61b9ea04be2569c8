"""A pause in every process_page task of a worker the tests start, so that a test can kill the worker in
the middle of a task. The worker's process calls `install()` before it starts; FPT_TEST_TASK_DELAY
says when and how long: "N" waits N seconds before the task runs, "after:N" after it has written
its results and before its message is acknowledged. Celery's own task signals carry the pause, so
the production task knows nothing of it."""
from __future__ import annotations

import os
import time

from celery.signals import task_postrun, task_prerun

from tracker.workers.task_names import PROCESS_PAGE

ENV = "FPT_TEST_TASK_DELAY"
#: The code a worker subprocess runs first: `python -c PRELUDE + "..."`.
PRELUDE = "import tests.task_delay as _delay; _delay.install()\n"


def install(spec: str | None = None) -> None:
    when, _, delay = (os.environ.get(ENV, "") if spec is None else spec).rpartition(":")
    if not delay:
        return
    seconds = float(delay)
    signal = task_postrun if when == "after" else task_prerun

    def pause(sender=None, task=None, **_) -> None:
        if getattr(task or sender, "name", "") == PROCESS_PAGE:
            time.sleep(seconds)

    signal.connect(pause, weak=False)
