"""Deadlines are written by the commit that makes them due (one atomic step), in Redis and
in memory; a double claim of a computer seat's deadline applies its action once."""

from __future__ import annotations

import asyncio
import time

import pytest
from crib_wire import REDIS_URL
from redis.asyncio import Redis

from server.broker import MemoryBroker
from server.computer_seats import ComputerSeats
from server.deadline_plan import COMPUTER_TURN
from server.rooms import RoomService
from server.settings import Settings
from server.store.base import Commit, Deadline
from server.store.memory import MemoryStore
from server.store.redis import RedisStore
from server.timers import Sweeper


@pytest.fixture(params=["redis", "memory"])
async def store(request, redis_prefix):
    if request.param == "redis":
        s = RedisStore(Redis.from_url(REDIS_URL, decode_responses=True), redis_prefix)
    else:
        s = MemoryStore(MemoryBroker())
    yield s
    await s.close()


async def test_commit_writes_and_clears_deadlines_atomically(store):
    service = RoomService(store, Settings(bot_delay_seconds=5))
    record, _ = await service.create_room({"players": 2})
    due = time.time() + 60
    d1 = Deadline(record.id, "x", due, "1", {"a": 1})
    d2 = Deadline(record.id, "y", due + 1, "", {})
    v1 = record.evolve(version=1)
    ok = await store.commit(Commit(v1, 0, None, {}, [], deadlines=(d1, d2)))
    assert ok.status == "ok"
    # A conflicting commit writes nothing, deadlines included.
    d3 = Deadline(record.id, "z", time.time() - 1, "", {})
    bad = await store.commit(Commit(record.evolve(version=1), 0, None, {}, [], deadlines=(d3,)))
    assert bad.status == "conflict"
    assert await store.claim_due(time.time(), time.time() + 30) == []
    # Due ones are claimed once (a lease), then completed.
    claims = await store.claim_due(due + 0.5, due + 30)
    assert [c.deadline for c in claims] == [d1]
    assert await store.claim_due(due + 0.5, due + 30) == []
    await store.complete(claims[0])
    # The next commit clears the other one: nothing is left to claim, ever.
    ok = await store.commit(Commit(v1.evolve(version=2), 1, None, {}, [], clear=("y|",)))
    assert ok.status == "ok"
    assert await store.claim_due(due + 1000, due + 2000) == []
    if isinstance(store, RedisStore):
        assert await store.redis.zscore(store._dl_index, record.id) is None


async def test_a_claim_left_uncompleted_comes_back_after_its_lease(store):
    service = RoomService(store, Settings())
    record, _ = await service.create_room({"players": 2})
    now = time.time()
    d = Deadline(record.id, "x", now - 1)
    assert (await store.commit(Commit(record.evolve(version=1), 0, None, {}, [],
                                      deadlines=(d,)))).status == "ok"
    assert len(await store.claim_due(now, now + 10)) == 1
    assert await store.claim_due(now + 5, now + 20) == []
    again = await store.claim_due(now + 11, now + 40)  # the first claimer died
    assert [c.deadline for c in again] == [d]


async def test_computer_seats_commit_their_next_deadline(store):
    """Seating computers commits their first ``computer_turn`` deadlines with the deal."""
    service = RoomService(store, Settings(bot_delay_seconds=0.25))
    before = time.time()
    record, _ = await service.create_room({"players": 2}, computers={0: "easy", 1: "standard"})
    assert record.state is not None
    claims = await store.claim_due(before + 0.2, before + 30)
    assert claims == []
    claims = await store.claim_due(time.time() + 0.3, time.time() + 30)
    assert sorted(c.deadline.key for c in claims) == ["0", "1"]
    assert {c.deadline.kind for c in claims} == {COMPUTER_TURN}


async def test_a_double_claim_acts_once(store):
    """Two sweepers running the same computer deadline at once: one action lands; the
    others find the room moved past the version the deadline was planned at and do
    nothing — nothing is applied twice."""
    settings = Settings(bot_delay_seconds=60)
    service = RoomService(store, settings)
    seats = ComputerSeats(service, Sweeper(store, service, settings))
    record, _ = await service.create_room({"players": 2}, computers={0: "standard", 1: "easy"})
    deadline = next(d for d in await store.deadlines(record.id)
                    if d.kind == COMPUTER_TURN and d.key == "0")
    assert deadline.payload == {"version": record.version}
    await asyncio.gather(seats.turn(deadline), seats.turn(deadline), seats.turn(deadline))
    log = await store.log(record.id)
    acts = [e for e in log if "action" in e]
    assert len(acts) == 1 and acts[0]["seat"] == 0 and acts[0]["action"]["type"] == "discard"
    # Running it again later finds nothing to do for seat 0 (it has discarded).
    await seats.turn(deadline)
    assert len([e for e in await store.log(record.id) if "action" in e]) == 1


async def test_a_lease_is_renewed_while_its_handler_runs(store):
    """A handler that runs longer than the lease keeps its deadline: another sweeper finds
    nothing to claim meanwhile, and the deadline is gone once the handler is done."""
    settings = Settings(deadline_lease_seconds=0.3)
    service = RoomService(store, settings)
    record, _ = await service.create_room({"players": 2})
    runs: list[str] = []

    async def slow(deadline: Deadline) -> None:
        runs.append(deadline.key)
        await asyncio.sleep(1.0)

    mine, other = Sweeper(store, service, settings), Sweeper(store, service, settings)
    for sweeper in (mine, other):
        sweeper.register("slow", slow)
    await store.schedule(Deadline(record.id, "slow", time.time(), "k"))
    task = asyncio.create_task(mine.sweep_once())
    for _ in range(6):
        await asyncio.sleep(0.15)
        assert await other.sweep_once() == 0  # never claimable while renewed
    await task
    assert runs == ["k"]
    assert await store.deadlines(record.id) == []


async def test_a_dead_claimers_deadline_runs_elsewhere_within_one_lease(store):
    settings = Settings()
    assert settings.deadline_lease_seconds <= 5
    service = RoomService(store, settings)
    record, _ = await service.create_room({"players": 2})
    now = time.time()
    await store.schedule(Deadline(record.id, "x", now, "1"))
    claims = await store.claim_due(now, now + settings.deadline_lease_seconds)
    assert len(claims) == 1  # ... and the claimer dies without completing it
    assert await store.claim_due(now + 1, now + 10) == []
    again = await store.claim_due(now + settings.deadline_lease_seconds + 0.01, now + 20)
    assert [c.deadline.member for c in again] == [claims[0].deadline.member]
    # The dead claimer's late completion (an old lease) does not remove the new claim.
    await store.complete(claims[0])
    assert await store.extend(again[0], now + 30) is not None


async def test_a_detached_handler_does_not_hold_up_the_sweep(store):
    """A kind registered ``detached`` (a computer move waiting for a computer process) runs
    in its own task: the sweep returns at once, other deadlines keep firing meanwhile, the
    running one is not claimed again while its lease is renewed, and its claim is completed
    when it ends."""
    settings = Settings(deadline_lease_seconds=0.3)
    service = RoomService(store, settings)
    record, _ = await service.create_room({"players": 2})
    gate = asyncio.Event()
    runs: list[str] = []

    async def slow(deadline: Deadline) -> None:
        runs.append(deadline.key)
        await gate.wait()

    async def quick(deadline: Deadline) -> None:
        runs.append(deadline.key)

    sweeper = Sweeper(store, service, settings)
    sweeper.register("slow", slow, detached=True)
    sweeper.register("quick", quick)
    await store.schedule(Deadline(record.id, "slow", time.time(), "s"))
    assert await asyncio.wait_for(sweeper.sweep_once(), 2.0) == 1
    for n in range(5):  # the slow one waits; the others of the process go on
        await store.schedule(Deadline(record.id, "quick", time.time(), f"q{n}"))
        await asyncio.sleep(0.15)
        assert await asyncio.wait_for(sweeper.sweep_once(), 2.0) == 1
    assert runs == ["s", "q0", "q1", "q2", "q3", "q4"]
    gate.set()
    for _ in range(100):
        if not sweeper._own_tasks:
            break
        await asyncio.sleep(0.02)
    assert not sweeper._own_tasks
    assert await store.deadlines(record.id) == []  # completed, never run twice
    assert sweeper.fired == 6
    await sweeper.stop()


async def test_stop_cancels_a_detached_handler_and_its_lease_brings_it_back(store):
    """Stopping a process in the middle of a detached handler leaves the claim to its
    lease: another process runs the deadline once the lease ends (nothing lost)."""
    settings = Settings(deadline_lease_seconds=0.3)
    service = RoomService(store, settings)
    record, _ = await service.create_room({"players": 2})
    runs: list[str] = []

    async def forever(deadline: Deadline) -> None:
        runs.append("first")
        await asyncio.Event().wait()

    async def done(deadline: Deadline) -> None:
        runs.append("again")

    mine, other = Sweeper(store, service, settings), Sweeper(store, service, settings)
    mine.register("slow", forever, detached=True)
    other.register("slow", done)
    await store.schedule(Deadline(record.id, "slow", time.time(), "k"))
    await mine.sweep_once()
    await asyncio.sleep(0.05)
    await mine.stop()
    assert await other.sweep_once() == 0  # still leased
    await asyncio.sleep(0.4)
    assert await other.sweep_once() == 1
    assert runs == ["first", "again"]
    assert await store.deadlines(record.id) == []
