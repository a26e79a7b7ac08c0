"""The computer processes take people's work first (``server.workers.priority``): real
spawned processes, the order in which jobs reach them, the handicap's bound, cancellation
and a process that dies."""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from crib_wire import kill_pool_worker

from server.workers.priority import COMPUTERS_ONLY_HANDICAP_SECONDS, PriorityPool


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Gate:
    """A job that holds the one process until the test opens the gate: the process reads
    a named pipe, which blocks until the test writes to it."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "gate"
        os.mkfifo(self.path)

    async def hold(self, pool: PriorityPool, urgent: bool) -> str:
        return await pool.run(Path.read_text, self.path, urgent=urgent)

    async def open(self) -> None:
        await asyncio.to_thread(self.path.write_text, "open")

    def release(self) -> None:
        """Open the gate if a process is held at it (a test that failed before opening it
        must not leave the pool's shutdown waiting for ever)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody reads it
            return
        os.write(fd, b"open")
        os.close(fd)


async def _settle(pool: PriorityPool, waiting: int) -> None:
    for _ in range(200):
        if pool.waiting == waiting:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pool.waiting} waiting, expected {waiting}")


class Jobs:
    """Jobs on a one-process pool with a test clock, in the order they ended."""

    def __init__(self, tmp_path: Path) -> None:
        self.gate = Gate(tmp_path)
        self.clock = Clock()
        self.pool = PriorityPool(1, clock=self.clock)
        self.order: list[str] = []

    async def job(self, name: str, urgent: bool) -> None:
        await self.pool.run(time.sleep, 0.05, urgent=urgent)
        self.order.append(name)

    async def busy(self, urgent: bool) -> None:
        """Holds the process until the gate opens."""
        assert await self.gate.hold(self.pool, urgent) == "open"
        self.order.append("busy")


async def test_urgent_jobs_go_before_other_jobs_asked_earlier(tmp_path):
    """One process busy; three jobs of rooms of computers only wait, then a person's:
    the person's job is the next to run, the others follow in the order asked."""
    jobs = Jobs(tmp_path)
    pool = jobs.pool
    try:
        busy = asyncio.create_task(jobs.busy(False))
        await asyncio.sleep(0.05)
        assert pool.running == 1
        tasks = []
        for n in range(3):
            jobs.clock.now += 1
            tasks.append(asyncio.create_task(jobs.job(f"other{n}", False)))
            await _settle(pool, n + 1)
        jobs.clock.now += 1
        tasks.append(asyncio.create_task(jobs.job("person", True)))
        await _settle(pool, 4)
        await jobs.gate.open()
        await asyncio.wait_for(asyncio.gather(busy, *tasks), 20)
        assert jobs.order == ["busy", "person", "other0", "other1", "other2"]
        assert pool.started == {"urgent": 1, "other": 4}
        assert pool.running == 0 and pool.waiting == 0
    finally:
        jobs.gate.release()
        await pool.close()


async def test_other_jobs_are_never_starved(tmp_path):
    """A job of a room of computers only asked more than the handicap before a person's
    goes first: it waits at most the handicap plus the urgent work asked before it."""
    jobs = Jobs(tmp_path)
    pool = jobs.pool
    try:
        busy = asyncio.create_task(jobs.busy(True))
        await asyncio.sleep(0.05)
        old = asyncio.create_task(jobs.job("old", False))
        await _settle(pool, 1)
        jobs.clock.now += COMPUTERS_ONLY_HANDICAP_SECONDS + 1
        late = asyncio.create_task(jobs.job("person", True))
        await _settle(pool, 2)
        await jobs.gate.open()
        await asyncio.wait_for(asyncio.gather(busy, old, late), 20)
        assert jobs.order == ["busy", "old", "person"]
    finally:
        jobs.gate.release()
        await pool.close()


async def test_a_cancelled_waiter_gives_up_its_place(tmp_path):
    """A job cancelled while it waits (its room moved on, the server stops) takes no
    process: the next one runs, and the count of running jobs comes back to 0."""
    gate = Gate(tmp_path)
    pool = PriorityPool(1)
    try:
        busy = asyncio.create_task(gate.hold(pool, True))
        await asyncio.sleep(0.05)
        gone = asyncio.create_task(pool.run(time.sleep, 5, urgent=True))
        kept = asyncio.create_task(pool.run(os.getpid, urgent=False))
        await _settle(pool, 2)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        assert pool.waiting == 1
        await gate.open()
        await asyncio.wait_for(busy, 20)
        assert await asyncio.wait_for(kept, 20) != os.getpid()  # ran in a process
        for _ in range(100):
            if pool.running == 0:
                break
            await asyncio.sleep(0.01)
        assert pool.running == 0 and pool.waiting == 0
    finally:
        gate.release()
        await pool.close()


async def test_a_process_that_dies_fails_its_jobs_and_the_next_job_starts_a_new_one():
    pool = PriorityPool(1)
    try:
        first = await pool.run(os.getpid)
        with pytest.raises(BrokenProcessPool):
            await asyncio.wait_for(pool.run(os._exit, 3), 20)
        second = await asyncio.wait_for(pool.run(os.getpid), 20)
        assert second != first
        for _ in range(100):
            if pool.running == 0:
                break
            await asyncio.sleep(0.01)
        assert pool.running == 0
    finally:
        await pool.close()


async def test_grading_gives_way_to_the_tables_and_the_computer_players():
    """The grading processes run ``GRADING_NICENESS`` below the server; the computer
    players' processes at the server's own priority."""
    from server.archive.grader import Grader
    from server.workers import GRADING_NICENESS

    grader = Grader(db=None)  # type: ignore[arg-type]  # only its pool is used here
    pool = PriorityPool(1)
    try:
        mine = os.nice(0)
        graders = await asyncio.wrap_future(grader._executor().submit(os.nice, 0))
        assert graders == min(19, mine + GRADING_NICENESS)
        assert await pool.run(os.nice, 0) == mine
    finally:
        await grader.stop()
        await pool.close()


async def test_a_process_that_dies_idle_is_replaced_at_the_next_job():
    """A computer process killed while it had no job (an operator, the OOM killer): the
    next job starts a new one and runs there, never refused (it had not started)."""
    pool = PriorityPool(1)
    try:
        first = await pool.run(os.getpid)
        await kill_pool_worker(pool._pool, first)
        second = await asyncio.wait_for(pool.run(os.getpid), 20)
        assert second not in (first, os.getpid())
        assert await asyncio.wait_for(pool.run(os.getpid), 20) == second
    finally:
        await pool.close()
