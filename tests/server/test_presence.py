"""Presence that cannot leak: absolute per-process counts, heartbeats, reaping of dead
processes — on Redis and in memory, with a fake clock (no sleeps)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from crib_wire import REDIS_URL
from redis.asyncio import Redis

from server.broker import MemoryBroker, channel_name
from server.deadline_plan import TAKEOVER
from server.presence import Presence
from server.rooms import RoomService
from server.settings import Settings
from server.store.base import Deadline, park, takeover_times
from server.store.memory import MemoryStore
from server.store.redis import RedisStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Published:
    """Presence messages of one room, as published."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def presence(self) -> list[tuple[int, bool]]:
        return [(m["seat"], m["connected"]) for m in self.messages if m.get("t") == "p"]


@pytest.fixture(params=["memory", "redis"])
async def setup(request, redis_prefix):
    """``(store, clock, listen)``: ``listen(room) -> Published`` starts recording."""
    clock = FakeClock()
    if request.param == "memory":
        broker = MemoryBroker()
        store = MemoryStore(broker, clock=clock)

        async def listen(room: str) -> Published:
            seen = Published()
            await broker.subscribe(room, seen.messages.append)
            return seen

        yield store, clock, listen
        return
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    store = RedisStore(redis, redis_prefix)
    pubsub = redis.pubsub()
    recorders: dict[str, Published] = {}
    reader: asyncio.Task[None] | None = None

    async def read() -> None:
        while True:
            msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
            if msg and msg["type"] == "message":
                for room, seen in recorders.items():
                    if msg["channel"] == channel_name(redis_prefix, room):
                        seen.messages.append(json.loads(msg["data"]))

    async def listen(room: str) -> Published:
        nonlocal reader
        seen = recorders[room] = Published()
        await pubsub.subscribe(channel_name(redis_prefix, room))
        await pubsub.get_message(timeout=1)  # the subscribe confirmation
        if reader is None:
            reader = asyncio.create_task(read())
        return seen

    yield store, clock, listen
    if reader is not None:
        reader.cancel()
    await pubsub.aclose()
    await store.close()


async def settle() -> None:
    await asyncio.sleep(0.15)  # let the pub/sub reader catch the messages


async def playing_room(service: RoomService) -> tuple[str, list[str]]:
    record, _ = await service.create_room({"players": 2}, room={"takeover_grace": 30})
    tokens = [service.tokens.issue(), service.tokens.issue()]
    for seat, token in enumerate(tokens):
        await service.join(record.id, seat, token, f"p{seat}")
    return record.id, tokens


async def test_counts_are_absolute_per_owner_and_summed(setup):
    store, clock, listen = setup
    service = RoomService(store, Settings(), clock=clock)
    room, _ = await playing_room(service)
    seen = await listen(room)
    assert await store.set_presence(room, "A", {0: 2}) == {0: 2}
    assert await store.set_presence(room, "B", {0: 1, 1: 1}) == {0: 3, 1: 1}
    # Writing the same absolute count again changes nothing (no drift, no message).
    assert await store.set_presence(room, "A", {0: 2}) == {0: 3, 1: 1}
    assert await store.set_presence(room, "B", {0: 0}) == {0: 2, 1: 1}
    # full=True: what B lists is all it holds; its other entries go.
    assert await store.set_presence(room, "B", {}, full=True) == {0: 2}
    assert await store.presence(room) == {0: 2}
    assert await store.presence_owners(room) == {"A": {0: 2}}
    await settle()
    assert seen.presence() == [(0, True), (1, True), (1, False)]
    assert await store.set_presence("no-such-room", "A", {0: 1}) is None


async def test_a_seat_left_empty_gets_its_takeover_atomically(setup):
    store, clock, listen = setup
    service = RoomService(store, Settings(), clock=clock)
    room, _ = await playing_room(service)
    record, _ = await store.load(room)
    await store.set_presence(room, "A", {1: 1})
    deadline = service.takeover_deadline(record, 1, clock.now)
    assert deadline is not None and deadline.due == clock.now + 30
    await store.set_presence(room, "A", {1: 0}, takeovers={1: deadline})
    assert [(d.kind, d.key, d.due) for d in await store.deadlines(room)
            if d.kind == TAKEOVER] == [(TAKEOVER, "1", clock.now + 30)]
    # A connection comes back: the takeover goes, in the same write.
    await store.set_presence(room, "B", {1: 1})
    assert [d for d in await store.deadlines(room) if d.kind == TAKEOVER] == []


async def test_a_deadline_parked_while_nobody_is_there_wakes_with_the_first_connection(setup):
    """Parking checks presence and the claim in one step; the first connection to the empty
    room makes every parked deadline due again (``now`` + its ``parked`` seconds, the payload
    kept and marked ``woken``) and announces a woken takeover with its ``takeover_at``."""
    store, clock, listen = setup
    service = RoomService(store, Settings(), clock=clock)
    room, _ = await playing_room(service)
    record, _ = await store.load(room)
    seen = await listen(room)
    await store.set_presence(room, "A", {0: 1, 1: 1})
    takeover = service.takeover_deadline(record, 1, clock.now)
    await store.set_presence(room, "A", {1: 0}, takeovers={1: takeover}, now=clock.now)
    clock.now += 30
    (claim,) = [c for c in await store.claim_due(clock.now, clock.now + 5)
                if c.deadline.kind == TAKEOVER]
    far = clock.now + 86400
    # Seat 0 is still connected: nothing is parked, the handler goes on.
    assert await store.park_unless_present(claim, park(claim.deadline, 30, far)) == "present"
    await store.set_presence(room, "A", {0: 0}, now=clock.now)
    # Rescheduled since the claim (another takeover stored): not parked over it.
    other = Deadline(room, TAKEOVER, clock.now + 1, "1", {"grace": 30.0})
    await store.schedule(other)
    assert await store.park_unless_present(claim, park(claim.deadline, 30, far)) == "moved"
    (claim,) = [c for c in await store.claim_due(clock.now + 1, clock.now + 6)
                if c.deadline.kind == TAKEOVER]
    assert await store.park_unless_present(claim, park(claim.deadline, 30, far)) == "parked"
    await store.complete(claim)  # the sweeper completes the claim: the parked copy stays
    # (The room's other deadline, the game's abandonment 23 h on, is not the seat's.)
    (parked,) = [d for d in await store.deadlines(room) if d.kind == TAKEOVER]
    assert parked.payload["parked"] == 30 and parked.payload["grace"] == 30.0
    assert not [c for c in await store.claim_due(clock.now + 3600, clock.now + 3605)
                if c.deadline.kind == TAKEOVER]
    # Someone comes back at the empty table: due again, 30 s from now, announced.
    clock.now += 1000
    await store.set_presence(room, "B", {0: 1}, now=clock.now)
    (again,) = [d for d in await store.deadlines(room) if d.kind == TAKEOVER]
    assert (again.kind, again.key, again.due) == (TAKEOVER, "1", clock.now + 30)
    assert again.payload == {"grace": 30.0, "woken": True}
    await settle()
    told = [m for m in seen.messages if m.get("t") == "p" and m["seat"] == 1
            and not m["connected"]]
    assert told[0]["takeover_at"] == round((clock.now - 1000) * 1000)
    assert told[-1] == {"t": "p", "room": room, "seat": 1, "connected": False,
                        "takeover_at": round((clock.now + 30) * 1000)}
    # A second connection wakes nothing more (the room was not empty).
    await store.set_presence(room, "C", {0: 1}, now=clock.now + 5)
    assert [d.due for d in await store.deadlines(room) if d.kind == TAKEOVER] == [clock.now + 30]
    assert takeover_times(await store.deadlines(room)) == {1: round((clock.now + 30) * 1000)}


async def test_a_dead_process_is_reaped_and_a_stalled_one_comes_back(setup):
    store, clock, listen = setup
    settings = Settings(presence_lease_seconds=6)
    service = RoomService(store, settings, clock=clock)
    room, _ = await playing_room(service)
    seen = await listen(room)
    alive, dying = Presence(store, service, settings), Presence(store, service, settings)
    await alive.start()
    await dying.start()
    await alive.connect(room, 0)
    await dying.connect(room, 1)
    await dying.connect(room, 1)
    assert await store.presence(room) == {0: 1, 1: 2}
    # Seven seconds pass; only `alive` beats. `dying` stopped (kill -9).
    clock.now += 7
    await alive.heartbeat()
    assert await alive.reap() == 1
    assert await store.presence(room) == {0: 1}
    assert [(d.kind, d.key) for d in await store.deadlines(room)
            if d.kind == TAKEOVER] == [(TAKEOVER, "1")]
    await settle()
    assert seen.presence()[-1] == (1, False)
    # Reaping twice is harmless.
    assert await alive.reap() == 0
    # `dying` was only stalled: at its next beat it finds itself reaped and re-asserts its
    # connections under a new owner id; the seat is present again, its takeover gone.
    old = dying.owner
    await dying.heartbeat()
    assert dying.owner != old
    assert await store.presence(room) == {0: 1, 1: 2}
    assert [d for d in await store.deadlines(room) if d.kind == TAKEOVER] == []
    await settle()
    assert seen.presence()[-1] == (1, True)


async def test_a_clean_stop_removes_presence_at_once(setup):
    store, clock, listen = setup
    settings = Settings()
    service = RoomService(store, settings, clock=clock)
    room, _ = await playing_room(service)
    presence = Presence(store, service, settings)
    await presence.start()
    await presence.connect(room, 0)
    await presence.connect(room, 1)
    record, _ = await store.load(room)
    await presence.disconnect(room, 1, record)
    assert await store.presence(room) == {0: 1}
    await presence.close()
    assert await store.presence(room) == {}
    assert sorted(d.key for d in await store.deadlines(room) if d.kind == TAKEOVER) == [
        "0", "1"]
    assert await store.expired_owners(clock.now + 3600) == []
