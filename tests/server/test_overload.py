"""Admission control (server/overload.py, docs/protocol.md "Limits"): at most
``max_inflight_actions`` client actions run at once, ``max_waiting_actions`` wait their turn
for up to ``action_queue_seconds``, none is admitted while the event loop runs later than
``overload_lag_seconds``, and the rest are refused ``busy`` with ``retry_after``, changing
nothing; sent again, they are applied once. The server's own work (the turn clock) never
waits at the gate."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from crib_wire import events_of, seat_players

from protocol.client import Client
from server.overload import ActionGate


async def test_gate_turns_queue_and_refusals():
    gate = ActionGate(max_inflight=2, max_wait=0.2, max_waiting=2)
    assert await gate.enter() and await gate.enter()  # two turns at once
    assert gate.inflight == 2
    order: list[str] = []

    async def wait(name: str) -> bool:
        admitted = await gate.enter()
        order.append(f"{name}:{admitted}")
        return admitted

    first = asyncio.create_task(wait("first"))
    second = asyncio.create_task(wait("second"))
    await asyncio.sleep(0.01)
    assert gate.waiting == 2
    assert not await gate.enter()  # the queue is full: refused without waiting
    assert gate.refused == {"queue_full": 1}
    gate.leave()  # the longest-waiting action gets the turn
    assert await first and order == ["first:True"]
    assert gate.inflight == 2 and gate.waiting == 1
    started = time.monotonic()
    assert not await second  # nobody leaves: refused after max_wait
    assert 0.15 <= time.monotonic() - started <= 0.5
    assert gate.refused == {"queue_full": 1, "waited": 1}
    assert gate.waiting == 0 and gate.queued_total == 2
    # A waiter cancelled in the queue gives nothing back and leaves the counts right.
    cancelled = asyncio.create_task(gate.enter())
    await asyncio.sleep(0.01)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert gate.waiting == 0
    gate.leave()
    gate.leave()
    assert gate.inflight == 0
    assert await gate.enter() and gate.inflight == 1  # the fast path again
    off = ActionGate(max_inflight=0, max_wait=1.0)
    assert not off.enabled


async def test_gate_shuts_while_the_loop_is_late():
    gate = ActionGate(max_inflight=0, max_wait=0.3, max_lag=0.25)
    assert gate.enabled
    now = time.monotonic()
    gate.observe(0.2, now)  # late, but within the bound
    assert await gate.enter()
    gate.leave()
    gate.observe(0.4, time.monotonic())
    assert not await gate.enter() and gate.refused == {"loop_late": 1}
    await asyncio.sleep(0.35)  # max_wait after the late probe
    assert await gate.enter()
    gate.leave()
    assert gate.inflight == 0


async def test_actions_past_the_bound_are_refused_busy_and_change_nothing(make_server,
                                                                           own_redis):
    """One action in flight at a time, one waiting: Redis is frozen under Ann's discard, so
    Cid's and Dee's (another room) cannot have a turn. One waits 0.3 s and is refused, the
    other is refused at once; both are applied once when sent again."""
    server = make_server(redis_url=own_redis.url, max_inflight_actions=1,
                         max_waiting_actions=1, action_queue_seconds=0.3)
    _, (ann, bob), _ = await seat_players(server.ws, {"players": 2, "target": 61})
    room, (cid, dee), _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        for c in (ann, cid, dee):
            await c.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard",
                               5)
        before = httpx.get(f"{server.http}/api/rooms/{room}").json()["version"]

        def discard(c: Client) -> dict[str, object]:
            return {"type": "discard", "cards": c.view["hand"][:2]}

        async def timed(c: Client, action_id: str) -> tuple[dict[str, object], float]:
            t = time.monotonic()
            answer = await c.act(discard(c), action_id=action_id, retry=False)
            return answer, time.monotonic() - t

        own_redis.freeze()
        try:
            stuck = asyncio.create_task(ann.act(discard(ann), action_id="ann-1"))
            await asyncio.sleep(0.1)
            answers = await asyncio.gather(timed(cid, "cid-1"), timed(dee, "dee-1"))
        finally:
            own_redis.thaw()
        assert (await stuck)["type"] == "ack"
        assert [a["code"] for a, _ in answers] == ["busy", "busy"], answers
        assert all(a["retry_after"] == 0.3 for a, _ in answers)
        waited = sorted(t for _, t in answers)
        assert waited[0] < 0.2 and 0.25 <= waited[1] < 1.0, waited  # at once; after 0.3 s
        assert httpx.get(f"{server.http}/api/rooms/{room}").json()["version"] == before
        # Sent again with the same ids, each is applied once.
        for c, action_id in ((cid, "cid-1"), (dee, "dee-1")):
            ack = await c.act(discard(c), action_id=action_id)
            assert ack["type"] == "ack" and not ack["duplicate"], ack
        assert httpx.get(f"{server.http}/api/rooms/{room}").json()["version"] == before + 2
        metrics = httpx.get(f"{server.http}/metrics").text
        assert 'cribbage_overload_refused_total{reason="waited"} 1.0' in metrics
        assert 'cribbage_overload_refused_total{reason="queue_full"} 1.0' in metrics
        assert "cribbage_actions_queued_total 1.0" in metrics
        assert 'cribbage_action_rejects_total{code="busy"} 2.0' in metrics
        assert "cribbage_actions_in_flight 0.0" in metrics
    finally:
        for c in (ann, bob, cid, dee):
            await c.close()


def _block_loop(server, seconds: float) -> None:
    """Keep the server's event loop busy for ``seconds`` (as a backlog of work would)."""
    assert server.loop is not None
    server.loop.call_soon_threadsafe(time.sleep, seconds)


async def test_a_late_event_loop_refuses_acts_busy(make_server):
    """In memory (no action is ever in flight for long): the server's event loop is kept
    busy for 0.5 s; the next act is refused busy, and applied once when sent again."""
    server = make_server(redis=False, overload_lag_seconds=0.2, action_queue_seconds=1.5)
    room, (ann, bob), _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        await ann.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard", 5)
        before = httpx.get(f"{server.http}/api/rooms/{room}").json()["version"]
        discard = {"type": "discard", "cards": ann.view["hand"][:2]}
        _block_loop(server, 0.5)
        await asyncio.sleep(0.7)  # the block is over and the late probe has woken
        refused = await ann.act(discard, action_id="late-1", retry=False)
        assert refused["type"] == "reject" and refused["code"] == "busy", refused
        assert refused["retry_after"] == 1.5
        assert (await ann.ping("alive"))["nonce"] == "alive"  # only acts are refused
        assert httpx.get(f"{server.http}/api/rooms/{room}").json()["version"] == before
        # The Python client sends a busy act again after its retry_after by itself.
        started = time.monotonic()
        ack = await ann.act(discard, action_id="late-1")
        assert ack["type"] == "ack" and not ack["duplicate"], ack
        assert time.monotonic() - started >= 1.0  # it was refused again, then waited
        assert httpx.get(f"{server.http}/api/rooms/{room}").json()["version"] == before + 1
        metrics = httpx.get(f"{server.http}/metrics").text
        assert 'cribbage_overload_refused_total{reason="loop_late"} 2.0' in metrics
    finally:
        await ann.close()
        await bob.close()


async def test_the_turn_clock_does_not_wait_at_the_gate(make_server):
    """The one turn for client actions is held (taken from the test, as an action stuck on
    the store would hold it): Ann's discard is refused busy, yet the 1-second turn clock
    discards for both seats; the server's own work never waits at the gate."""
    server = make_server(max_inflight_actions=1,
                         max_waiting_actions=0, action_queue_seconds=0.3)
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2}, "room": {"turn_seconds": 1}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        room = created["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard", 5)
        gate = server.app.state.services.actions
        assert await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
            gate.enter(), server.loop))  # the only turn, held from here on
        try:
            refused = await ann.act({"type": "discard", "cards": ann.view["hand"][:2]},
                                   retry=False)
            assert refused["type"] == "reject" and refused["code"] == "busy", refused
            await ann.wait_until(
                lambda c: {e["seat"] for e in events_of(c, "timed_out")} == {0, 1}, 5
            )
            assert ann.view["phase"] == "play"
        finally:
            server.loop.call_soon_threadsafe(gate.leave)
    finally:
        await ann.close()
        await bob.close()
