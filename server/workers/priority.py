"""A process pool that takes people's work first: :class:`PriorityPool`.

The expert computer players of a server process decide, and its hints are made, in one
pool of computer processes (``computer_processes``). A ``ProcessPoolExecutor`` runs what it
is given in the order given, so a queue of moves for rooms nobody is at (a room of
computers only plays on by itself) would make a person's expert opponent wait behind all
of them. This pool hands the executor at most one job per process at a time and keeps the
rest here, ordered by when they were asked for, with a job that is not **urgent** counted
as asked :data:`COMPUTERS_ONLY_HANDICAP_SECONDS` later than it was. So urgent work (a move
in a room where a person plays, a hint) goes before any other work asked less than that
long before it, and other work still always runs: a job waits at most the handicap plus
the urgent work asked before it (no starvation; each room of computers only has at most one
move waiting, so the wait is bounded by the rooms, not by time).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import process_pool

COMPUTERS_ONLY_HANDICAP_SECONDS = 30.0
"""How much later than it was asked a job that is not urgent is taken (seconds)."""


class PriorityPool:
    """At most ``workers`` jobs in ``workers`` spawned processes; the rest wait here, urgent
    ones first (see the module docstring).

    Args:
        workers: the processes (made at the first job; at least 1).
        handicap: seconds added to a non-urgent job's place in the queue.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, workers: int, handicap: float = COMPUTERS_ONLY_HANDICAP_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.workers = max(1, workers)
        self.handicap = handicap
        self.clock = clock
        self._pool: ProcessPoolExecutor | None = None
        self._running = 0
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.started = {"urgent": 0, "other": 0}
        """Jobs handed to the processes since start, by urgency."""

    @property
    def running(self) -> int:
        """Jobs handed to the processes and not finished."""
        return self._running

    @property
    def waiting(self) -> int:
        """Jobs waiting for a process."""
        return sum(1 for *_, f in self._waiting if not f.done())

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = process_pool(self.workers)
        return self._pool

    async def run(self, fn: Callable[..., Any], *args: Any, urgent: bool = True) -> Any:
        """``fn(*args)`` in a computer process, once a process is free and no job before it
        in the order waits.

        Args:
            fn: a module-level function (it is pickled to the process), and its arguments.
            urgent: a person waits for it (a move in a room where a person plays: a seat the
                computer does not play; a hint).

        Returns:
            What ``fn`` returned.

        Raises:
            BrokenProcessPool: the processes died (the next job starts new ones).
            Whatever ``fn`` raised.
        """
        loop = asyncio.get_running_loop()
        if self._running < self.workers and not self.waiting:
            self._running += 1
        else:
            turn: asyncio.Future[None] = loop.create_future()
            key = self.clock() + (0.0 if urgent else self.handicap)
            heapq.heappush(self._waiting, (key, next(self._order), turn))
            try:
                await turn  # the slot is handed over by _release, already counted
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self._release()  # handed a slot it will not use
                raise
        try:
            pool, job = self._submit(fn, args)
        except BaseException:
            self._release()
            raise
        job.add_done_callback(lambda _: self._release_from_thread(loop))
        self.started["urgent" if urgent else "other"] += 1
        try:
            return await asyncio.wrap_future(job)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            raise

    def _submit(self, fn: Callable[..., Any], args: tuple[Any, ...]
                ) -> tuple[ProcessPoolExecutor, Future[Any]]:
        """Hand ``fn(*args)`` to the processes. A pool found broken here (a process died
        while it had no job: nothing failed to tell us) is replaced once: the job has not
        started, so giving it to new processes is safe."""
        pool = self._executor()
        try:
            return pool, pool.submit(fn, *args)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            pool = self._executor()
            return pool, pool.submit(fn, *args)

    def _release_from_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing waits
            loop.call_soon_threadsafe(self._release)

    def _release(self) -> None:
        """A job ended: hand its slot to the first job waiting, or free it."""
        while self._waiting:
            *_, turn = heapq.heappop(self._waiting)
            if not turn.done():
                turn.set_result(None)
                return
        self._running -= 1

    async def close(self) -> None:
        """Stop the processes (jobs not finished are cancelled)."""
        pool, self._pool = self._pool, None
        for *_, turn in self._waiting:
            turn.cancel()
        self._waiting.clear()
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, True, cancel_futures=True)
