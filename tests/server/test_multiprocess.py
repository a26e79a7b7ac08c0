"""One room served by two server processes on one Redis, its players split between them."""

from __future__ import annotations

import httpx
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
