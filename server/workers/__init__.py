"""Worker processes of a server process: the pools in which expert computer players decide
and hint (``server.computer_seats``, through :class:`server.workers.priority.PriorityPool`:
people's work first) and finished games are graded (``server.archive.grader``, at
:data:`GRADING_NICENESS`), off the event loop.

:func:`process_pool` makes such a pool: ``spawn`` processes (a fresh interpreter: nothing
of the server's state or locks is copied), each of which ends by itself when the server
process that made it is gone (:func:`exit_with_parent`).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PARENT_CHECK_SECONDS = 1.0
"""How often a worker checks that its server process is still there."""


GRADING_NICENESS = 10
"""How much lower than its server process's the grading processes' CPU priority is (``nice``
increment): on a machine short of cores, grading finished games gives way to the tables and
to the computer players, who have people waiting."""


def exit_with_parent(niceness: int = 0) -> None:
    """A worker process's initializer: end the worker when the server process that made it
    is gone. Killed with SIGKILL, a server never shuts its pools down, and a worker left
    alone would live on holding the server's standard output and error open.

    Args:
        niceness: added to the worker's ``nice`` value (0: the server's priority).
    """
    if niceness:
        os.nice(niceness)
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def process_pool(workers: int, niceness: int = 0) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that end with their server process, run at
    ``niceness`` (a ``nice`` increment) below it."""
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=exit_with_parent, initargs=(niceness,))
