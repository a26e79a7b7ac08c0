"""Limits below the app (docs/protocol.md "Limits"), against a real ``python -m server``.

What an attacker found after the first limits: WebSocket control frames and fragments never
reached the session's frame bucket, reconnecting gave a fresh burst each time, and a client
dropping mid-body or sending deeply nested JSON wrote tracebacks. Each case here failed
before ``server.wsguard`` and the fixes in ``server.app``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import httpx
import pytest
import websockets
from crib_wire import REDIS_URL, ProcessServer

from protocol.client import Client


@pytest.fixture
def logged_server(redis_prefix: str, tmp_path: Path):
    log = tmp_path / "server.log"
    server = ProcessServer(REDIS_URL, redis_prefix, log=log).start()
    yield server, log
    server.stop()


async def _ping_ms(client: Client) -> float:
    started = time.perf_counter()
    await client.ping("legit")
    return (time.perf_counter() - started) * 1000


async def test_control_frames_and_fragments_count_against_the_wire_budget(logged_server):
    server, log = logged_server
    legit = await Client.connect(server.ws, name="Legit")
    try:
        baseline = sorted([await _ping_ms(legit) for _ in range(10)])[5]
        # 1. A flood of WebSocket PING frames, never reading the PONGs.
        async with websockets.connect(server.ws, subprotocols=["cribbage.v1.json"]) as ws:
            await ws.send('{"type": "hello", "name": "Pinger"}')
            sent = 0
            try:
                for i in range(5000):
                    ws.protocol.send_ping(str(i).encode())
                    ws.send_data()  # type: ignore[attr-defined]
                    sent += 1
                    if i % 100 == 0:
                        await asyncio.sleep(0.001)
            except (websockets.exceptions.InvalidState, websockets.exceptions.ConnectionClosed):
                pass
            await asyncio.wait_for(ws.wait_closed(), 5)
            # The server sends close 1008 and drops the socket at once; with the flood still
            # unread on its side the kernel may reset the connection before the client reads
            # the close frame (then the client sees 1006).
            assert ws.close_code in (1008, 1006), ws.close_code
            assert sent < 5000  # cut off before the flood was through
        # 2. One message in 1-byte fragments.
        async with websockets.connect(server.ws, subprotocols=["cribbage.v1.json"]) as ws:
            await ws.send('{"type": "hello", "name": "Fragments"}')
            await ws.recv()
            text = '{"type": "ping", "nonce": "' + "a" * 2000 + '"}'
            try:
                await ws.send(iter(text))
            except (websockets.exceptions.InvalidState, websockets.exceptions.ConnectionClosed):
                pass
            await asyncio.wait_for(ws.wait_closed(), 5)
            assert ws.close_code in (1008, 1006), ws.close_code
        # The other client never noticed.
        after = sorted([await _ping_ms(legit) for _ in range(10)])[5]
        assert after < max(4 * baseline, baseline + 20), (baseline, after)
    finally:
        await legit.close()
    assert "Traceback" not in log.read_text()


async def test_reconnecting_does_not_renew_the_budget(logged_server):
    server, log = logged_server
    opened = refused = 0
    for _ in range(140):
        try:
            async with websockets.connect(server.ws, subprotocols=["cribbage.v1.json"]):
                opened += 1
        except websockets.exceptions.InvalidStatus as exc:
            assert exc.response.status_code == 429
            assert b"too_many_connections" in exc.response.body
            refused += 1
    # 120 a minute, all at once at most (plus what refilled meanwhile: 2 a second).
    assert 120 <= opened <= 140 and refused >= 1, (opened, refused)
    text = log.read_text()
    assert "without completing handshake" not in text  # refusals write no ERROR line
    assert "Traceback" not in text


async def test_bodies_that_break_off_or_nest_deeply_get_no_traceback(logged_server):
    server, log = logged_server
    host, port = server.http.removeprefix("http://").split(":")
    for _ in range(20):  # a client that goes away mid-body
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                         b"\r\nContent-Length: 100\r\n\r\n{")
    nested = b"[" * 5000 + b"]" * 5000
    answer = httpx.post(f"{server.http}/api/rooms", content=nested,
                        headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_options"
    await asyncio.sleep(0.5)
    text = log.read_text()
    assert "Traceback" not in text and "ClientDisconnect" not in text, text[-2000:]
