"""Presence frames are coalesced (issue 17): a seated connection doing leave/join in a loop
sent the other players about 20 ``presence`` frames a second.

Now a room's presence frames go out at most once per ``presence_frame_interval_seconds``
(0.5 s by default), each carrying the seat's state at that moment, none to a connection
that already knows it — and the final state always arrives. A real server (in memory and
on Redis), Bob leaving and joining again as fast as his frame budget allows, Ann counting
what she gets.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from crib_wire import seat_players

from protocol.client import Client

LOOP_SECONDS = 3.0
INTERVAL = 0.5


def presence_of(client: Client, seat: int, since: int) -> list[bool]:
    """The ``connected`` of every presence frame about ``seat`` received after frame
    number ``since``."""
    return [f["connected"] for f in client.frames[since:]
            if f["type"] == "presence" and f["seat"] == seat]


def told_of(client: Client, seat: int, since: int) -> list[tuple[bool, int | None]]:
    """``(connected, takeover_at)`` of every presence frame about ``seat`` received after
    frame number ``since``."""
    return [(f["connected"], f.get("takeover_at")) for f in client.frames[since:]
            if f["type"] == "presence" and f["seat"] == seat]


async def settle(client: Client, seat: int, connected: bool, timeout: float = 5.0) -> None:
    await client.wait_until(
        lambda c: any(s["seat"] == seat and s["connected"] is connected for s in c.seats),
        timeout)


async def leave_join(bob: Client, room: str, seconds: float) -> int:
    """Bob leaves and joins his seat again and again for ``seconds``; returns the cycles."""
    cycles = 0
    token = bob.seat_token
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await bob.request({"type": "leave"}, lambda f: f["type"] == "left")
        await bob.join(room, 1, token=token)
        cycles += 1
    return cycles


@pytest.mark.parametrize("redis", [False, True], ids=["memory", "redis"])
async def test_a_leave_join_loop_sends_few_presence_frames(make_server, redis):
    server = make_server(redis=redis)
    room, (ann, bob), _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        await settle(ann, 1, True)
        await asyncio.sleep(INTERVAL * 2)
        seen = len(ann.frames)
        cycles = await leave_join(bob, room, LOOP_SECONDS)  # ends joined
        await asyncio.sleep(INTERVAL * 3)
        got = presence_of(ann, 1, seen)
        changes = 2 * cycles
        # At most one frame per interval (plus the one sent at once), where there were
        # two changes per cycle; and the last one tells the truth: Bob is there.
        assert cycles >= 10, cycles
        assert len(got) <= LOOP_SECONDS / INTERVAL + 2, (len(got), changes)
        assert not got or got[-1] is True, got
        assert ann.seats[1]["connected"] is True
        # Never two frames in a row that say the same: nothing Ann already knew (a new
        # away spell is news: it tells a new takeover time).
        told = told_of(ann, 1, seen)
        assert all(a != b for a, b in zip(told, told[1:], strict=False)), told

        # The last change is a leave: it reaches Ann, within about one interval.
        seen = len(ann.frames)
        await leave_join(bob, room, 1.0)
        left_at = time.monotonic()
        await bob.request({"type": "leave"}, lambda f: f["type"] == "left")
        await settle(ann, 1, False, timeout=INTERVAL * 4)
        assert time.monotonic() - left_at < INTERVAL * 3
        assert presence_of(ann, 1, seen)[-1] is False
        summary = httpx.get(f"{server.http}/api/rooms/{room}").json()
        assert [s["connected"] for s in summary["seats"]] == [True, False]
        print(f"{'redis' if redis else 'memory'}: {cycles} leave/join cycles "
              f"({changes} presence changes) in {LOOP_SECONDS:.0f} s -> {len(got)} frames")
        assert not ann.problems, ann.problems
    finally:
        for c in (ann, bob):
            await c.close()


async def test_a_single_change_is_sent_at_once(make_server):
    """Coalescing never delays a lone change: after a quiet interval, a seat's change goes
    out at once, not at the interval's end."""
    server = make_server(redis=False, presence_frame_interval_seconds=2.0)
    room, (ann, bob), _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        await settle(ann, 1, True)
        await asyncio.sleep(2.2)  # quiet for longer than the interval
        started = time.monotonic()
        await bob.request({"type": "leave"}, lambda f: f["type"] == "left")
        await settle(ann, 1, False, timeout=5)
        assert time.monotonic() - started < 1.0
        # A second change right after is held for the rest of the interval, then sent.
        await bob.join(room, 1, token=bob.seat_token)
        await settle(ann, 1, True, timeout=5)
        assert time.monotonic() - started > 1.5
    finally:
        for c in (ann, bob):
            await c.close()
