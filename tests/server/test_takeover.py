"""A dropped player's seat is played by a ``standard`` computer after the room's takeover
grace, and handed back when the owner returns with the seat token (issue 4)."""

from __future__ import annotations

import asyncio
import random

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
