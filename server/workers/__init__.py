"""Worker processes of a server process: the pools in which expert computer players decide
and hint (``server.computer_seats``) and finished games are graded
(``server.archive.grader``), off the event loop.

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


def exit_with_parent() -> None:
    """A worker process's initializer: end the worker when the server process that made it
    is gone. Killed with SIGKILL, a server never shuts its pools down, and a worker left
    alone would live on holding the server's standard output and error open."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that end with their server process."""
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=exit_with_parent)
