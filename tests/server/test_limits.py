"""The limits of docs/protocol.md "Limits", each against a real server: the per-connection
frame rate (and the flood close), the per-address caps on connections, room creations and
refused joins, X-Forwarded-For from trusted proxies only, the hello and idle timers, and
half-sent requests and handshakes (slowloris) against the bare ``python -m server``."""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from crib_wire import REDIS_URL, ProcessServer, seat_players

from protocol.client import Client
from server.limits import AddressQuota, FrameBucket
from server.settings import Settings


async def _frames_until_closed(client: Client, timeout: float) -> list[dict[str, Any]]:
    await asyncio.wait_for(client.closed.wait(), timeout)
    return client.frames


# -- the frame bucket ------------------------------------------------------------------------

def test_frame_bucket_arithmetic():
    bucket = FrameBucket(rate=8.0, burst=3, flood_refusals=2, flood_window=10.0)
    now = bucket.stamp = 100.0
    assert [bucket.take(now) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(now) == 0.125  # one token comes back in 1/8 s
    assert bucket.take(now + 0.125) == 0.0
    assert bucket.take(now + 0.125) > 0 and not bucket.flooding
    assert bucket.take(now + 0.125) > 0 and bucket.flooding  # 3 refusals > 2
    # A timer that fires a millisecond early (uvloop's do) still finds the token back:
    # the frame read after sleeping out a refusal's wait is not refused a second time.
    early = FrameBucket(rate=8.0, burst=1, flood_refusals=100, flood_window=10.0)
    t = early.stamp = 50.0
    assert early.take(t) == 0.0
    for _ in range(40):
        wait = early.take(t)
        assert wait == pytest.approx(0.125)
        t += wait - 0.0013
        assert early.take(t) == 0.0
    assert early.refused == 40
    # Refusals further apart than the window do not add up to a flood.
    quiet = FrameBucket(rate=0.01, burst=1, flood_refusals=1, flood_window=1.0)
    t = quiet.stamp
    quiet.take(t)
    for i in range(5):
        assert quiet.take(t + 2.5 * i + 0.5) > 0
        assert not quiet.flooding


def test_address_quota_refills_and_forgets():
    quota = AddressQuota(per_minute=2)
    assert quota.spend("a", 0.0) == 0.0 and quota.spend("a", 0.0) == 0.0
    assert quota.spend("a", 0.0) == pytest.approx(30.0)
    assert quota.spend("b", 0.0) == 0.0  # another address has its own budget
    assert quota.wait("a", 30.0) == 0.0 and quota.spend("a", 30.0) == 0.0
    quota.charge("a", 30.0)
    assert quota.wait("a", 30.0) == pytest.approx(30.0)
    quota._pruned = 0.0
    quota.wait("c", 200.0)  # a minute later, full buckets are dropped
    assert set(quota.buckets) == {"c"}
    assert AddressQuota(0).spend("a") == 0.0  # 0: no limit


# -- per-connection rate limit ---------------------------------------------------------------

async def test_flood_is_refused_applies_nothing_and_is_closed(make_server):
    server = make_server()  # defaults: 20 frames/s, burst 40, closed past 100 refusals
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    flooder, other = players
    try:
        await flooder.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard",
                                 5)
        before = httpx.get(f"{server.http}/api/rooms/{room}").json()["version"]
        hand = flooder.view["hand"]
        flood = [
            json.dumps({"type": "act", "action_id": f"flood-{i}",
                        "action": {"type": "discard", "cards": hand[:2]}})
            for i in range(400)
        ]
        started = time.monotonic()
        for frame in flood:
            try:
                await flooder.send_raw(frame)
            except websockets.exceptions.ConnectionClosed:
                break
        frames = await _frames_until_closed(flooder, 10)
        elapsed = time.monotonic() - started
        assert flooder.close_code == 1008
        limited = [f for f in frames if f.get("code") == "rate_limited"]
        acks = [f for f in frames if f["type"] == "ack" and f["action_id"].startswith("flood")]
        rejects = [f for f in frames if f["type"] == "reject"
                   and f["action_id"].startswith("flood") and f["code"] != "rate_limited"]
        assert len(limited) == 100  # closed at the 101st refusal
        # Each refusal names the act it refuses, so a client can send that act again.
        assert all(f["type"] == "reject" and f["action_id"].startswith("flood")
                   and 0 < f["retry_after"] <= 0.05 for f in limited)
        assert len({f["action_id"] for f in limited}) == 100
        # What was handled fits the bucket: the burst plus what refilled meanwhile.
        assert len(acks) + len(rejects) <= 40 + 20 * elapsed + 1
        assert len(acks) == 1 and {r["code"] for r in rejects} <= {"already_discarded",
                                                                   "wrong_phase"}
        after = httpx.get(f"{server.http}/api/rooms/{room}").json()
        assert after["version"] == before + len(acks)  # nothing applied beyond the acks
        # The other player is unaffected.
        assert (await other.ping("still-here"))["nonce"] == "still-here"
        metrics = httpx.get(f"{server.http}/metrics").text
        assert 'cribbage_limited_total{code="rate_limited"} 100.0' in metrics
        assert 'cribbage_limited_total{code="flood"} 1.0' in metrics
    finally:
        for c in players:
            await c.close()


async def test_a_flood_does_not_slow_another_client(redis_prefix):
    """A sustained flood (the flood close and the wire budget turned off, so that only the
    frame bucket stands in its way) against a server process: a second client's pings stay
    within a generous bound of their own baseline, measured here."""
    server = ProcessServer(REDIS_URL, redis_prefix, CRIBBAGE_FLOOD_REFUSALS="100000000",
                           CRIBBAGE_WIRE_FRAME_RATE="0", CRIBBAGE_WIRE_BYTES_RATE="0")
    server.start()
    watcher = None
    try:
        watcher = await Client.connect(server.ws, name="watcher", record=False)

        async def pings(n: int) -> float:
            """Median round trip of ``n`` pings at 14 a second (a pace within the limit)."""
            times = []
            for i in range(n):
                t = time.perf_counter()
                await watcher.ping(i)
                times.append(time.perf_counter() - t)
                await asyncio.sleep(0.07)
            return statistics.median(times)

        await pings(10)  # warm up
        baseline = await pings(40)
        flood = await asyncio.create_subprocess_exec(
            sys.executable, str(Path(__file__).with_name("flood_client.py")), server.ws, "3",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        assert await asyncio.wait_for(flood.stderr.readline(), 10) == b"ready\n"
        started = time.monotonic()
        await asyncio.sleep(0.3)
        during = await pings(30)
        out, _ = await asyncio.wait_for(flood.communicate(), 20)
        seconds = time.monotonic() - started
        counts = json.loads(out)
        assert counts["close_code"] is None, counts  # the flood went on unclosed
        assert counts["sent"] > 3000, counts  # it did flood
        # At most the burst and 20/s were handled, with a refusal for each frame over it
        # (then a pause); the server read nothing more: the rest waited in the socket's
        # buffers, and the flooder's sends waited on them.
        assert counts["pong"] <= 40 + 20 * seconds, (counts, seconds)
        assert 0 < counts["rate_limited"] <= 40 * seconds, (counts, seconds)
        assert during < max(4 * baseline, baseline + 0.004), (baseline, during)
    finally:
        if watcher is not None:
            await watcher.close()
        server.stop()


# -- per-address caps ------------------------------------------------------------------------

async def test_connections_per_address(make_server, clients):
    server = make_server(redis=False, max_connections_per_address=3)
    for i in range(3):
        clients.append(await Client.connect(server.ws, name=f"p{i}"))
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        await Client.connect(server.ws, name="one-too-many")
    response = refused.value.response
    assert response.status_code == 429
    assert json.loads(response.body)["error"]["code"] == "too_many_connections"
    # Another address (named by a trusted proxy: loopback is trusted by default) may connect.
    async with websockets.connect(
        server.ws, additional_headers={"X-Forwarded-For": "198.51.100.7"}
    ) as other:
        await other.send(json.dumps({"type": "hello", "name": "elsewhere"}))
        assert json.loads(await other.recv())["type"] == "welcome"
    # A closed connection frees its slot.
    await clients.pop().close()
    end = time.monotonic() + 5
    while True:
        try:
            clients.append(await Client.connect(server.ws, name="again"))
            break
        except websockets.exceptions.InvalidStatus:
            assert time.monotonic() < end
            await asyncio.sleep(0.05)


async def test_room_creations_per_address(make_server):
    server = make_server(redis=False, rooms_per_minute=3)
    url = f"{server.http}/api/rooms"
    # Rooms with only computer seats count too.
    assert httpx.post(url, json={"computers": {"0": "easy", "1": "easy"}}).status_code == 201
    assert httpx.post(url, json={}).status_code == 201
    client = await Client.connect(server.ws, name="host")
    try:
        await client.create_room({"players": 2})  # the same budget over /ws
        r = httpx.post(url, json={})
        assert r.status_code == 429
        error = r.json()["error"]
        assert error["code"] == "too_many_rooms" and 0 < error["retry_after"] <= 20
        assert int(r.headers["retry-after"]) == max(1, -(-error["retry_after"] // 1))
        with pytest.raises(Exception) as refused:
            await client.create_room({"players": 2})
        assert getattr(refused.value, "code", None) == "too_many_rooms"
        frame = client.frames[-1]
        assert frame["type"] == "error" and frame["ref"] == "create_room"
        assert 0 < frame["retry_after"] <= 20
    finally:
        await client.close()
    assert len(server.app.state.services.store._rooms) == 3  # the refused made nothing


async def test_failed_joins_per_address(make_server, clients):
    server = make_server(failed_joins_per_minute=3)
    good = httpx.post(f"{server.http}/api/rooms", json={}).json()["room"]
    guesser = await Client.connect(server.ws, name="guesser")
    clients.append(guesser)
    codes = []
    for room in ("AAAAAAAAAA", "BBBBBBBBBB", "CCCCCCCCCC", good, good):
        try:
            await guesser.join(room, 0)
            codes.append("joined")
        except Exception as exc:  # ClientError
            codes.append(exc.code)
    assert codes == ["room_not_found"] * 3 + ["too_many_joins"] * 2
    frame = guesser.frames[-1]
    assert frame["ref"] == "join" and 0 < frame["retry_after"] <= 20
    # Another address is not held back by this one's guesses.
    async with websockets.connect(
        server.ws, additional_headers={"X-Forwarded-For": "198.51.100.8"}
    ) as other:
        await other.send(json.dumps({"type": "hello", "name": "friend"}))
        await other.recv()
        await other.send(json.dumps({"type": "join", "room": good, "seat": 0}))
        assert json.loads(await other.recv())["type"] == "snapshot"


def test_forwarded_for_only_from_trusted_proxies(make_server):
    trusting = make_server(redis=False, rooms_per_minute=1)  # trusts 127.0.0.1 (default)
    wary = make_server(redis=False, rooms_per_minute=1, forwarded_allow_ips="192.0.2.99")

    def create(server, forwarded: str) -> int:
        return httpx.post(f"{server.http}/api/rooms", json={},
                          headers={"X-Forwarded-For": forwarded}).status_code

    # Trusted: each forwarded address has its own budget, and a forged first hop does not
    # help (the address nearest to the trusted proxy counts).
    assert create(trusting, "203.0.113.1") == 201
    assert create(trusting, "203.0.113.1") == 429
    assert create(trusting, "203.0.113.2") == 201
    assert create(trusting, "10.0.0.1, 203.0.113.2") == 429
    # Not trusted: the header is ignored; every request is the peer's (127.0.0.1).
    assert create(wary, "203.0.113.1") == 201
    assert create(wary, "203.0.113.2") == 429


# -- time limits -----------------------------------------------------------------------------

async def test_hello_deadline(make_server, clients):
    server = make_server(redis=False, hello_timeout_seconds=0.5)
    silent = await Client.connect(server.ws, hello=False)
    polite = await Client.connect(server.ws, name="polite")
    clients += [silent, polite]
    started = time.monotonic()
    await asyncio.wait_for(silent.closed.wait(), 3)
    assert silent.close_code == 1008 and time.monotonic() - started < 2
    await asyncio.sleep(0.3)
    assert (await polite.ping(7))["nonce"] == 7  # past the deadline, having said hello


async def test_idle_connections_without_a_seat_are_closed(make_server, clients):
    server = make_server(redis=False, idle_seconds=1.0)
    room, players, watcher = await seat_players(server.ws, {"players": 2}, spectator=True)
    clients += [*players, watcher]
    lobby = await Client.connect(server.ws, name="lobby")
    clients.append(lobby)
    await asyncio.wait_for(lobby.closed.wait(), 4)
    await asyncio.wait_for(watcher.closed.wait(), 4)
    assert lobby.close_code == 1001 and watcher.close_code == 1001
    # Seated players are never closed for being quiet (they may be thinking).
    await asyncio.sleep(1.5)
    assert not players[0].closed.is_set() and not players[1].closed.is_set()
    assert (await players[1].ping(1))["nonce"] == 1


def _half_sent(port: int, request: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(request)
    return s


def _closed_by_peer(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1024) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


async def test_slow_sockets_do_not_lock_out_the_bare_server(redis_prefix):
    """550 half-sent HTTP requests and 550 half-sent WebSocket handshakes against
    ``python -m server`` started with a soft open-files limit of 1024 (the server raises
    it to the hard limit): a new client still says hello and plays at once, and every slow
    socket is closed by the server within ~10 s (``request_timeout_seconds``)."""
    server = ProcessServer(REDIS_URL, redis_prefix, CRIBBAGE_BOT_DELAY_SECONDS="0")
    server.args = ["prlimit", "--nofile=1024:", *server.args]
    server.start()
    limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
    [files] = [line.split()[3:5] for line in limits.splitlines()
               if line.startswith("Max open files")]
    assert files[0] == files[1] != "1024", files  # raised to the hard limit at start-up
    slow: list[socket.socket] = []
    try:
        opened = time.monotonic()
        for i in range(550):
            slow.append(_half_sent(server.port, b"POST /api/rooms HTTP/1.1\r\nHost: x\r\n"
                                   b"Content-Length: 100\r\n" + (b"\r\n{" if i % 2 else b"")))
            slow.append(_half_sent(
                server.port,
                b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Version: 13\r\n",
            ))
        started = time.monotonic()
        client = await Client.connect(server.ws, name="newcomer")
        try:
            created = await client.request(
                {"type": "create_room", "options": {"players": 2}, "computers": {"1": "easy"}},
                lambda f: f["type"] in ("room_created", "error"))
            await client.join(created["room"], 0)
            await client.wait_until(lambda c: c.view is not None and c.view["hand"], 5)
            answer = await client.act({"type": "discard", "cards": client.view["hand"][:2]})
            assert answer["type"] == "ack"
        finally:
            await client.close()
        assert time.monotonic() - started < 5
        while time.monotonic() - opened < 14 and not all(_closed_by_peer(s) for s in slow):
            await asyncio.sleep(0.25)
        closed = sum(_closed_by_peer(s) for s in slow)
        assert closed == len(slow), f"{closed}/{len(slow)} closed"
        assert time.monotonic() - opened < 14
    finally:
        for s in slow:
            s.close()
        server.stop()


def test_limit_defaults():
    s = Settings()
    assert (s.frame_rate, s.frame_burst, s.flood_refusals, s.flood_window_seconds) == (
        20.0, 40, 100, 10.0)
    assert (s.max_connections_per_address, s.rooms_per_minute,
            s.failed_joins_per_minute) == (100, 30, 30)
    assert (s.hello_timeout_seconds, s.idle_seconds, s.request_timeout_seconds) == (
        5.0, 300.0, 10.0)
    assert s.forwarded_allow_ips == "127.0.0.1"
