"""A dropped player's seat is played by a ``standard`` computer after the room's takeover
grace, and handed back when the owner returns with the seat token (issue 4); a table left by
everyone waits for its people (issue 17)."""

from __future__ import annotations

import asyncio
import random
import time

import httpx
import pytest
from crib_wire import audit_frames, events_of, play_seat, replay_room

from protocol.client import Client


def seat_state(client: Client, seat: int) -> tuple[bool, bool]:
    """``(connected, computer_standin)`` of ``seat`` as the client knows it now (from its
    snapshot, updates' ``seats`` and presence frames: a presence frame is sent only when
    the connection does not know it yet, and coalesced; docs/protocol.md "presence")."""
    info = client.seats[seat]
    return info["connected"], info["computer_standin"]


def presence_of(client: Client, seat: int) -> list[tuple[bool, bool]]:
    """``(connected, computer_standin)`` of every presence frame about ``seat``."""
    return [(f["connected"], f["computer_standin"]) for f in client.frames
            if f["type"] == "presence" and f["seat"] == seat]


async def test_takeover_after_grace_and_hand_back_on_return(make_server):
    server = make_server(bot_delay_seconds=0, sweep_interval_seconds=0.05)
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    bob_again: Client | None = None
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2, "target": 121},
             "room": {"takeover_grace": 0.5}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        room = created["room"]
        assert created["room_settings"]["takeover_grace"] == 0.5
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.status == "playing")
        await ann.wait_until(lambda c: seat_state(c, 1) == (True, False))

        # Bob's connection dies mid-deal, before he discards.
        loop = asyncio.get_running_loop()
        dropped = loop.time()
        await bob.abort()
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, False))
        # Ann discards; then the game waits for Bob for the grace period ...
        hand = ann.view["hand"]
        assert (await ann.act({"type": "discard", "cards": hand[:2]}))["type"] == "ack"
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, True), 5)
        assert loop.time() - dropped >= 0.45
        # ... and then a standard computer plays his seat: it discards for him.
        await ann.wait_until(lambda c: c.view["discarded"][1], 5)
        standin = [f for f in ann.frames if f["type"] == "update"
                   and any(e["type"] == "computer_standin" for e in f["events"])]
        assert standin[0]["seats"][1]["computer_standin"] is True
        assert standin[0]["seats"][1]["level"] == "standard"
        assert standin[0]["seats"][1]["kind"] == "human"
        assert standin[0]["events"] == [{"type": "computer_standin", "seat": 1, "name": "Bob",
                                         "active": True}]
        await ann.wait_until(lambda c: c.view["phase"] == "play")
        if ann.view["turn"] == 1:  # the computer leads for him too
            await ann.wait_until(lambda c: c.view["turn"] == 0, 5)

        # Bob comes back with his token: the stand-in ends at once.
        bob_again = await Client.connect(server.ws, name="Bob", token=bob.player_token)
        snap = await bob_again.join(room, 1)
        assert snap["seats"][1]["computer_standin"] is False
        assert snap["seats"][1]["kind"] == "human" and snap["seats"][1]["level"] is None
        await ann.wait_until(lambda c: seat_state(c, 1) == (True, False), 5)
        # (the stand-in's end reached Ann in the update that ended it, the seat's connection
        # in a presence frame or that update's seats)
        # Both play on to the end; the computer no longer acts for seat 1.
        before = ann.version
        await asyncio.wait_for(asyncio.gather(
            play_seat(ann, random.Random(1)), play_seat(bob_again, random.Random(2))
        ), 90)
        for c in (ann, bob_again):
            assert not c.problems
            assert c.view["result"] is not None
        seats = replay_room(server, room)
        audit_frames(ann, seats)
        audit_frames(bob_again, seats)

        log = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
            server.app.state.services.store.log(room), server.loop))
        seat1 = [e for e in log if e.get("seat") == 1 and "action" in e]
        auto = [e for e in seat1 if str(e["id"]).startswith("auto-")]
        assert auto and all(e["v"] <= before for e in auto)
        assert any(e["v"] > before for e in seat1)
        standins = [e["standin"] for e in log if "standin" in e]
        assert standins == [True, False]
        assert events_of(ann, "computer_standin") == [
            {"type": "computer_standin", "seat": 1, "name": "Bob", "active": True},
            {"type": "computer_standin", "seat": 1, "name": "Bob", "active": False},
        ]
    finally:
        for c in (ann, bob, bob_again):
            if c is not None:
                await c.close()


async def test_no_takeover_when_the_player_returns_in_time(make_server):
    server = make_server(bot_delay_seconds=0, sweep_interval_seconds=0.05)
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    bob_again: Client | None = None
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2}, "room": {"takeover_grace": 0.6}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        await ann.join(created["room"], 0)
        await bob.join(created["room"], 1)
        await ann.wait_until(lambda c: seat_state(c, 1) == (True, False))
        await bob.abort()
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, False))
        bob_again = await Client.connect(server.ws, name="Bob", token=bob.player_token)
        await bob_again.join(created["room"], 1)
        await asyncio.sleep(1.0)
        assert all(not standin for _, standin in presence_of(ann, 1))
        assert not ann.view["discarded"][1]
        assert not events_of(ann, "computer_standin")
    finally:
        for c in (ann, bob, bob_again):
            if c is not None:
                await c.close()


# -- a table left by everyone waits for its people (issue 17) ----------------------------------

def _on_loop(server, coro):
    """Run a coroutine on the server's own event loop (its store) and wait for it."""
    return asyncio.run_coroutine_threadsafe(coro, server.loop).result(10)


def _room_now(server, room: str):
    store = server.app.state.services.store
    record, _ = _on_loop(server, store.load(room))
    deadlines = _on_loop(server, store.deadlines(room))
    return record, deadlines


async def _two_at_a_table(server, settings: dict) -> tuple[Client, Client, str]:
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    created = await ann.request(
        {"type": "create_room", "options": {"players": 2, "target": 121}, "room": settings},
        lambda f: f["type"] in ("room_created", "error"),
    )
    room = created["room"]
    await ann.join(room, 0)
    await bob.join(room, 1)
    await ann.wait_until(lambda c: c.status == "playing")
    return ann, bob, room


@pytest.mark.parametrize("redis", [True, False], ids=["redis", "memory"])
async def test_a_table_left_by_everyone_waits_for_its_people(make_server, redis):
    """Bob drops: Ann is told when the computer takes his seat over (``takeover_at``, the
    room's grace from now). Ann leaves too before that: nobody is at the table, so nothing
    happens — no takeover, no move — for many times the grace (the deadline is parked).
    Ann comes back: Bob's grace starts again from her return (a new ``takeover_at``), then
    the computer plays his seat and the game goes on."""
    server = make_server(redis=redis, bot_delay_seconds=0, sweep_interval_seconds=0.05)
    ann, bob, room = await _two_at_a_table(server, {"takeover_grace": 0.6})
    ann_again = None
    try:
        await ann.wait_until(lambda c: seat_state(c, 1) == (True, False))
        dropped = time.time()
        await bob.abort()
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, False))
        away = [f for f in ann.frames if f["type"] == "presence" and f["seat"] == 1][-1]
        assert dropped * 1000 + 400 <= away["takeover_at"] <= time.time() * 1000 + 700, away
        await ann.abort()  # everyone has left
        left = time.time()
        record, _ = _room_now(server, room)
        version = record.version
        await asyncio.sleep(3.0)  # five times the grace
        record, deadlines = _room_now(server, room)
        assert record.version == version, "the game went on with nobody at the table"
        assert not record.seats[1].standin and not record.seats[0].standin
        parked = [d for d in deadlines if d.kind == "takeover"]
        assert sorted(d.key for d in parked) == ["0", "1"]
        assert all("parked" in d.payload for d in parked)
        summary = httpx.get(f"{server.http}/api/rooms/{room}").json()
        assert [s["connected"] for s in summary["seats"]] == [False, False]
        assert summary["seats"][1]["takeover_at"] is None  # waiting: no time runs

        ann_again = await Client.connect(server.ws, name="Ann", token=ann.player_token)
        back = time.time()
        snap = await ann_again.join(room, 0)
        assert back - left >= 3.0
        # Bob's grace starts again now: the snapshot or the presence frame after it says when.
        def told(c: Client) -> int | None:
            frames = [f for f in c.frames if f["type"] == "presence" and f["seat"] == 1]
            if frames and frames[-1].get("takeover_at"):
                return frames[-1]["takeover_at"]
            return snap["seats"][1]["takeover_at"]

        await ann_again.wait_until(lambda c: told(c) is not None, 5)
        assert back * 1000 + 400 <= told(ann_again) <= time.time() * 1000 + 700
        await ann_again.wait_until(lambda c: seat_state(c, 1) == (False, True), 5)
        assert time.time() - back >= 0.5
        await ann_again.wait_until(lambda c: c.view["discarded"][1], 5)
        assert not ann_again.problems
    finally:
        for c in (ann, bob, ann_again):
            if c is not None:
                await c.close()


async def test_a_stand_in_stops_while_nobody_is_there(make_server):
    """Bob is away and a computer plays for him; then Ann leaves too: the stand-in makes no
    move while nobody is at the table, and plays on once Ann is back."""
    server = make_server(bot_delay_seconds=0.4, sweep_interval_seconds=0.05)
    ann, bob, room = await _two_at_a_table(server, {"takeover_grace": 0.3})
    ann_again = None
    try:
        hand = ann.view["hand"]
        assert (await ann.act({"type": "discard", "cards": hand[:2]}))["type"] == "ack"
        await bob.abort()
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, True), 5)
        await ann.abort()  # before the stand-in's discard (the bot delay, 0.4 s)
        await asyncio.sleep(2.0)
        record, deadlines = _room_now(server, room)
        assert record.seats[1].standin
        assert not record.state["discards"][1], "the stand-in played with nobody there"
        turn = [d for d in deadlines if d.kind == "computer_turn"]
        assert [d.key for d in turn] == ["1"] and "parked" in turn[0].payload
        ann_again = await Client.connect(server.ws, name="Ann", token=ann.player_token)
        await ann_again.join(room, 0)
        back = time.time()
        await ann_again.wait_until(lambda c: c.view["discarded"][1], 5)
        assert time.time() - back >= 0.3  # the bot delay, from her return
        assert not ann_again.problems
    finally:
        for c in (ann, bob, ann_again):
            if c is not None:
                await c.close()


async def test_the_turn_clock_waits_too(make_server):
    """A 1-second turn clock, and both players leave before it runs out: no move is made
    for them while the table is empty. When Ann is back every clock starts again from its
    full time (a version with no events), and then runs out as usual."""
    server = make_server(bot_delay_seconds=0, sweep_interval_seconds=0.05)
    ann, bob, room = await _two_at_a_table(server, {"turn_seconds": 1, "takeover_grace": 600})
    ann_again = None
    try:
        await bob.abort()
        await ann.abort()
        record, _ = _room_now(server, room)
        version = record.version
        await asyncio.sleep(2.5)
        record, deadlines = _room_now(server, room)
        assert record.version == version, "a turn clock ran out with nobody at the table"
        clocks = [d for d in deadlines if d.kind == "turn_clock"]
        assert sorted(d.key for d in clocks) == ["0", "1"]
        assert all("parked" in d.payload for d in clocks)
        ann_again = await Client.connect(server.ws, name="Ann", token=ann.player_token)
        await ann_again.join(room, 0)
        back = time.time()
        await ann_again.wait_until(lambda c: c.version > version, 5)
        restarted = [f for f in ann_again.frames if f["type"] == "update"][0]
        assert restarted["events"] == []
        assert min(ann_again.view["turn_clock"].values()) >= back * 1000 + 700
        await ann_again.wait_until(
            lambda c: {e["seat"] for e in events_of(c, "timed_out")} == {0, 1}, 5)
        assert time.time() - back >= 0.8
        assert not ann_again.problems
    finally:
        for c in (ann, bob, ann_again):
            if c is not None:
                await c.close()
