"""Spectators (issue 17): a cap per room (``max_spectators_per_room``), counted per process
and across processes on Redis, and a fan-out that serves them apart from the players — one
shared frame per version, slow spectators brought up to date by a snapshot with what they
missed instead of a queue of stale updates. (How much the players' latency moves with 4,000
spectators is measured by ``bench/spectators.py``, docs/performance.md.)"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
import pytest
from crib_wire import REDIS_URL, ProcessServer, play_game, seat_players, start_all

from protocol.client import Client, ClientError
from protocol.codec import Codec
from server.spectators import MAX_LAG, SpectatorFeed
from server.store.base import RoomRecord
from server.views import VersionData


async def _watch(url: str, room: str, name: str) -> Client:
    client = await Client.connect(url, name=name)
    await client.join(room, None)
    return client


async def _refused(url: str, room: str) -> str:
    client = await Client.connect(url, name="one-too-many")
    try:
        with pytest.raises(ClientError) as refused:
            await client.join(room, None)
        return refused.value.code
    finally:
        await client.close()


async def test_spectators_per_room_are_capped(make_server, clients):
    server = make_server(redis=False, max_spectators_per_room=3)
    room = httpx.post(f"{server.http}/api/rooms", json={}).json()["room"]
    other = httpx.post(f"{server.http}/api/rooms", json={}).json()["room"]
    for i in range(3):
        clients.append(await _watch(server.ws, room, f"w{i}"))
    assert await _refused(server.ws, room) == "too_many_spectators"
    clients.append(await _watch(server.ws, other, "elsewhere"))  # another room: its own cap
    # Seats are not spectators: the players still sit down.
    for seat in (0, 1):
        player = await Client.connect(server.ws, name=f"p{seat}")
        clients.append(player)
        await player.join(room, seat)
    # A spectator that leaves, or whose connection closes, frees its place.
    await clients[0].request({"type": "leave"}, lambda f: f["type"] == "left")
    clients.append(await _watch(server.ws, room, "w3"))
    await clients[1].close()
    end = time.monotonic() + 5
    while True:
        try:
            clients.append(await _watch(server.ws, room, "w4"))
            break
        except ClientError:
            assert time.monotonic() < end
            await asyncio.sleep(0.05)
    assert await _refused(server.ws, room) == "too_many_spectators"
    metrics = httpx.get(f"{server.http}/metrics").text
    assert 'cribbage_limited_total{code="too_many_spectators"} 2.0' in metrics
    assert "\ncribbage_spectators 4.0\n" in metrics  # 3 here, 1 in the other room


async def test_the_spectator_cap_holds_across_processes_and_dead_ones_are_reaped(
        redis_prefix, clients):
    env = {"CRIBBAGE_MAX_SPECTATORS_PER_ROOM": "3", "CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5"}
    a, b = start_all([ProcessServer(REDIS_URL, redis_prefix, **env) for _ in range(2)])
    try:
        room = httpx.post(f"{a.http}/api/rooms", json={}).json()["room"]
        clients.append(await _watch(a.ws, room, "a0"))
        clients.append(await _watch(a.ws, room, "a1"))
        clients.append(await _watch(b.ws, room, "b0"))
        # Each process holds fewer than 3, but the room has 3: both refuse a fourth.
        assert await _refused(b.ws, room) == "too_many_spectators"
        assert await _refused(a.ws, room) == "too_many_spectators"
        await clients[0].close()  # a's count goes down: b may take one more
        end = time.monotonic() + 5
        while True:
            try:
                clients.append(await _watch(b.ws, room, "b1"))
                break
            except ClientError:
                assert time.monotonic() < end
                await asyncio.sleep(0.05)
        assert await _refused(a.ws, room) == "too_many_spectators"
        # b dies holding two: they count until b is reaped (a lease), then not.
        b.kill()
        assert await _refused(a.ws, room) == "too_many_spectators"
        end = time.monotonic() + 15
        watchers = []
        while len(watchers) < 2:
            try:
                watchers.append(await _watch(a.ws, room, f"a{2 + len(watchers)}"))
            except ClientError as exc:
                assert exc.code == "too_many_spectators"
                assert time.monotonic() < end, "b's spectators were never reaped"
                await asyncio.sleep(0.2)
        clients.extend(watchers)
        assert await _refused(a.ws, room) == "too_many_spectators"  # a holds all 3 now
    finally:
        a.stop()
        b.stop()


def _feed(server: Any, room: str) -> Any:
    return server.app.state.services.rooms.rooms[room].feed


async def test_spectators_share_one_frame_per_version(make_server, clients):
    """120 spectators watch a whole game: each ends with the room's last version and the
    view a newcomer gets, having seen every version in order or caught up by a snapshot,
    and the server encoded each version's frame once for all of them, not 120 times."""
    server = make_server(redis=False, max_spectators_per_room=0, max_connections_per_address=0,
                         connections_per_minute=0)
    room = httpx.post(f"{server.http}/api/rooms", json={"options": {"players": 2,
                                                                    "target": 61}}).json()["room"]
    watchers = []
    for i in range(120):
        watcher = await Client.connect(server.ws, name=f"w{i}", validate=False)
        watchers.append(watcher)
        clients.append(watcher)
        await watcher.join(room, None)
    players = []
    for seat in (0, 1):
        player = await Client.connect(server.ws, name=f"p{seat}")
        players.append(player)
        clients.append(player)
        await player.join(room, seat)
    await play_game(players, seed=3)
    final = httpx.get(f"{server.http}/api/rooms/{room}").json()["version"]
    for watcher in watchers:
        await watcher.wait_until(lambda c: c.version == final, 10)
    late = await Client.connect(server.ws, name="late")
    clients.append(late)
    snap = await late.join(room, None)
    for watcher in watchers:
        assert not watcher.problems, watcher.problems[:3]
        assert watcher.view == snap["view"]
        kinds = [f["type"] for f in watcher.frames if f["type"] in ("update", "snapshot")]
        assert kinds[0] == "snapshot" and kinds.count("update") > 0
    feed = _feed(server, room)
    assert all(s._prepared is not None for s in feed.watchers)  # written straight to sockets
    assert feed.frames_sent >= 120 * 20  # every spectator got frames ...
    assert feed.encodings * 40 < feed.frames_sent  # ... encoded once for many


async def test_a_slow_spectator_gets_a_snapshot_of_what_it_missed(make_server, clients):
    """A spectator whose connection takes no frames (its queue full) is skipped, not
    queued stale updates; when it reads again it gets one snapshot of the newest version
    with the public events of every version it missed, then updates again."""
    server = make_server(redis=False)
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    clients.extend(players)
    slow = await _watch(server.ws, room, "slow")
    steady = await _watch(server.ws, room, "steady")
    clients += [slow, steady]
    [session] = [s for s in _feed(server, room).watchers if s.name == "slow"]
    stalled = threading.Event()
    stalled.set()
    take = session.send_shared
    session.send_shared = lambda *frame: not stalled.is_set() and take(*frame)
    before = slow.version
    for p in players:  # both discard: two versions the slow spectator misses
        await p.wait_until(lambda c: c.view is not None and c.view["hand"], 5)
        answer = await p.act({"type": "discard", "cards": p.view["hand"][:2]})
        assert answer["type"] == "ack"
    await steady.wait_until(lambda c: c.version >= before + 2, 5)
    await asyncio.sleep(0.3)
    assert slow.version == before  # nothing was queued for it meanwhile
    stalled.clear()
    await slow.wait_until(lambda c: c.version == steady.version, 5)
    caught_up = [f for f in slow.frames if f["type"] in ("update", "snapshot")
                 and f["version"] > before]
    assert [f["type"] for f in caught_up] == ["snapshot"]
    missed = caught_up[0]["missed"]
    assert [m["version"] for m in missed] == list(range(before + 1, steady.version + 1))
    assert [e["type"] for m in missed for e in m["events"]][:2] == ["discard", "discard"]
    assert all(e.get("cards") is None for m in missed for e in m["events"]
               if e["type"] == "discard")  # the public view of the discards
    assert slow.view == steady.view
    # From here on it follows by updates again.
    await play_game(players, seed=5)
    await slow.wait_until(lambda c: c.status == "game_over", 10)
    # (the two read on their own: the steady one may still be a frame behind)
    await steady.wait_until(lambda c: c.version == slow.version, 10)
    assert not slow.problems and slow.view == steady.view
    assert [f["type"] for f in slow.frames if f["type"] in ("update", "snapshot")
            and f["version"] > caught_up[0]["version"]].count("snapshot") == 0


class _Watcher:
    """A stand-in for a spectator's session: what the feed hands it, decoded."""

    def __init__(self, version: int, take: bool = True) -> None:
        self.codec = Codec("json")
        self.last_version = version
        self.last_view: dict[str, Any] | None = None
        self.take = take
        self.got: list[dict[str, Any]] = []

    def send_shared(self, frame: str, wire: bytes, backlog: int) -> bool:
        assert wire.endswith(frame.encode())  # the same frame, framed for the socket
        if self.take:
            self.got.append(json.loads(frame))
        return self.take

    def watched(self, version: int, view: dict[str, Any] | None) -> None:
        self.last_version = version
        self.last_view = view


def _version(v: int) -> VersionData:
    record = RoomRecord("room", v, {}, (), None, "seed", "creator", 0.0, 0.0)
    return VersionData(record, [{"type": "seat_taken", "seat": 0, "name": f"n{v}"}], False)


async def test_the_feed_serves_versions_in_order_and_skips_ahead_when_behind():
    feed = SpectatorFeed("room", lambda record: {}, lambda record: [])
    watchers = [_Watcher(0) for _ in range(150)] + [_Watcher(0, take=False)]
    for w in watchers:
        feed.add(w)  # type: ignore[arg-type]
    for v in (1, 2):  # the feed keeps up: one update each, in order
        feed.offer(_version(v))
        for _ in range(300):  # given the loop until it has (a loaded machine is slower)
            await asyncio.sleep(0.01)
            if all(w.last_version == v for w in watchers[:-1]):
                break
    for v in range(3, 3 + MAX_LAG + 5):  # versions faster than the feed is given the loop
        feed.offer(_version(v))
    newest = 2 + MAX_LAG + 5
    for _ in range(100):
        await asyncio.sleep(0.01)
        if all(w.last_version == newest for w in watchers[:-1]):
            break
    assert feed.lagged == 1
    for w in watchers[:-1]:
        assert [(f["type"], f["version"]) for f in w.got] == [
            ("update", 1), ("update", 2), ("snapshot", newest)]
        missed = w.got[-1]["missed"]
        assert [m["version"] for m in missed] == list(range(3, newest + 1))
        assert missed[-1]["events"] == [{"type": "seat_taken", "seat": 0,
                                         "name": f"n{newest}"}]
    # One encoding per version and group (the 150, and the one left behind) for 150
    # spectators; the one that takes nothing is skipped, never queued, and caught up when
    # it reads again.
    assert feed.encodings <= 1 + 2 * 2 + 3 and feed.frames_sent == 3 * 150
    slow = watchers[-1]
    assert slow.got == [] and slow.last_version == 0 and feed.skipped >= 3
    slow.take = True
    for _ in range(300):
        await asyncio.sleep(0.01)
        if slow.got:
            break
    assert [(f["type"], f["version"]) for f in slow.got] == [("snapshot", newest)]
    assert [m["version"] for m in slow.got[0]["missed"]] == list(range(1, newest + 1))
    feed.close()
