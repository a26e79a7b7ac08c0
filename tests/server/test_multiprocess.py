"""One room served by two server processes on one Redis, its players split between them."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import websockets
from crib_wire import audit_frames, events_of, play_game, seat_players

from protocol.client import Client


async def test_two_processes_one_room(process_servers):
    a, b = process_servers(2)
    # 4 players in partnerships: seats 0 and 2 on process a, 1 and 3 on process b; the
    # spectator on b.
    room, players, watcher = await seat_players(
        a.ws, {"players": 4, "partnerships": True, "target": 61, "muggins": True},
        encoding="msgpack", urls=[a.ws, b.ws], spectator=True,
    )
    try:
        await play_game(players, seed=11, muggins_calls=True)
        await watcher.wait_until(lambda c: c.status == "game_over")
        for c in players + [watcher]:
            assert not c.problems, c.problems
            audit_frames(c, players)
        assert len({tuple(c.view["scores"]) for c in players + [watcher]}) == 1
        assert events_of(watcher, "game_over")
        # Presence crosses processes: a player of process a drops, players on b see it.
        await players[0].close()
        await players[1].wait_until(lambda c: not c.seats[0]["connected"])
        # and can come back through the other process
        back = await Client.connect(b.ws, name="host", token=players[0].player_token)
        players[0] = back
        snap = await back.join(room, 0)
        assert snap["status"] == "game_over"
        summary = httpx.get(f"{a.http}/api/rooms/{room}").json()
        assert summary["status"] == "game_over" and summary["seats_taken"] == 4
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_two_processes_json_two_players(process_servers):
    a, b = process_servers(2)
    room, players, watcher = await seat_players(
        a.ws, {"players": 2, "target": 61, "backup10": True}, urls=[a.ws, b.ws], spectator=True
    )
    try:
        await play_game(players, seed=12)
        await watcher.wait_until(lambda c: c.status == "game_over")
        for c in players + [watcher]:
            assert not c.problems
            audit_frames(c, players)
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_budgets_guarding_the_store_are_shared_by_the_processes(process_servers):
    """Two processes on one Redis, one client address, the default budgets (30 rooms and 30
    refused joins a minute, all at once at most, then one every 2 s): the budgets hold across
    both, not 30 on each."""
    a, b = process_servers(2)
    async with httpx.AsyncClient() as http:
        started = time.monotonic()
        answers = await asyncio.gather(*(
            http.post(f"{(a, b)[i % 2].http}/api/rooms", json={}) for i in range(50)))
        seconds = time.monotonic() - started
    created = [r for r in answers if r.status_code == 201]
    refused = [r for r in answers if r.status_code == 429]
    assert len(created) + len(refused) == 50
    assert 30 <= len(created) <= 30 + seconds / 2 + 1, (len(created), seconds)
    assert {r.json()["error"]["code"] for r in refused} == {"too_many_rooms"}
    # Guessing joins, 40 at once on each process.
    conns = []
    try:
        for i in range(80):
            ws = await websockets.connect((a, b)[i % 2].ws)
            conns.append(ws)
            await ws.send(json.dumps({"type": "hello", "name": f"g{i}"}))
            assert json.loads(await ws.recv())["type"] == "welcome"
        started = time.monotonic()
        await asyncio.gather(*(
            ws.send(json.dumps({"type": "join", "room": f"NOROOM{i:04d}", "seat": 0}))
            for i, ws in enumerate(conns)))
        codes = [json.loads(m)["code"] for m in
                 await asyncio.gather(*(ws.recv() for ws in conns))]
        seconds = time.monotonic() - started
    finally:
        for ws in conns:
            await ws.close()
    assert set(codes) == {"room_not_found", "too_many_joins"}, codes
    tried = codes.count("room_not_found")
    assert 30 <= tried <= 30 + seconds / 2 + 1, (tried, seconds)
    # What was refused is counted by each process that refused it.
    limited = 0
    for server in (a, b):
        for line in httpx.get(f"{server.http}/metrics").text.splitlines():
            if line.startswith('cribbage_limited_total{code="too_many_joins"}'):
                limited += int(float(line.split()[-1]))
    assert limited == 80 - tried
