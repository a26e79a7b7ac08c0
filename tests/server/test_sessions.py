"""Presence, disconnect and resume with the seat token, spectators, the Muggins answer
window run out by the deadline sweeper, and the in-process store."""

from __future__ import annotations

import asyncio
import random

import pytest
from crib_wire import audit_frames, events_of, play_game, play_seat, seat_players

from protocol.client import Client, ClientError


async def test_disconnect_mid_deal_and_resume(server):
    room, players, watcher = await seat_players(
        server.ws, {"players": 2, "target": 61}, encoding="msgpack", spectator=True
    )
    a, b = players
    try:
        # Into the play of the first deal.
        for c in players:
            await c.act({"type": "discard", "cards": c.view["hand"][:2]})
        await a.wait_until(lambda c: c.view["phase"] == "play")
        mover = players[a.view["turn"]]
        await mover.act({"type": "play", "card": mover.view["hand"][0]})
        # b crashes (no closing handshake) — once a and the watcher know b is there
        # (presence frames are coalesced: docs/protocol.md "presence").
        token, hand_before = b.seat_token, list(b.view["hand"])
        for c in (a, watcher):
            await c.wait_until(lambda c: c.seats[1]["connected"])
        # Wait for a's presence frame from before the abort: it may come while abort waits
        # for b's reader to end (a race seen about once in 12 runs).
        gone = asyncio.ensure_future(
            a.next_frame(lambda f: f["type"] == "presence" and not f["connected"]))
        await asyncio.sleep(0)
        await b.abort()
        p = await gone
        assert p["seat"] == 1
        await watcher.wait_until(lambda c: not c.seats[1]["connected"])
        # b comes back on a new connection with its token and gets a fresh snapshot.
        b2 = await Client.connect(server.ws, name="b", token=token, encoding="msgpack")
        players[1] = b2
        snap = await b2.join(room, 1)
        assert snap["seat"] == 1 and snap["seat_token"] == token
        assert snap["view"]["hand"] == [c for c in hand_before if c in snap["view"]["hand"]]
        assert sorted(snap["view"]["hand"]) == sorted(
            c for c in hand_before
            if c not in [x["card"] for x in snap["view"]["played"]]
        )
        assert snap["version"] == a.version
        await a.wait_until(lambda c: c.seats[1]["connected"])
        # ... and the game continues to the end.
        await play_game(players, seed=9)
        await watcher.wait_until(lambda c: c.status == "game_over")
        for c in players + [watcher]:
            assert not c.problems, c.problems
            audit_frames(c, players)
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_resume_with_player_token_in_hello(server):
    """A player who reconnects with its player token resumes its seat without naming the
    token in join; a newcomer cannot take that seat."""
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        token = players[0].player_token
        await players[0].close()
        players[0] = await Client.connect(server.ws, name="host", token=token)
        snap = await players[0].join(room, 0)
        assert snap["view"]["seat"] == 0 and snap["seat_token"] == token
        newcomer = await Client.connect(server.ws, name="x")
        players.append(newcomer)
        with pytest.raises(ClientError) as err:
            await newcomer.join(room, 0)
        assert err.value.code == "seat_taken"
    finally:
        for c in players:
            await c.close()


async def test_leave_and_resync(server):
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    a, b = players
    try:
        left = await a.request({"type": "leave"}, lambda f: f["type"] == "left")
        assert left["room"] == room
        await b.wait_until(lambda c: not c.seats[0]["connected"])
        await b.act({"type": "discard", "cards": b.view["hand"][:2]})
        await a.join(room, 0)
        snap = await a.request({"type": "resync"}, lambda f: f["type"] == "snapshot")
        assert snap["version"] == b.version and snap["view"]["discarded"] == [False, True]
    finally:
        for c in players:
            await c.close()


async def test_muggins_answer_window_runs_out(make_server):
    """Nobody answers an announcement: the sweeper applies answer_timeout after the window
    (docs/rules.md §5.2) and every seat gets the muggins_result with call 'timeout'."""
    server = make_server(answer_window_seconds=0.3, sweep_interval_seconds=0.05)
    room, players, watcher = await seat_players(
        server.ws, {"players": 2, "target": 61, "muggins": True}, spectator=True
    )
    try:
        for c in players:
            await c.act({"type": "discard", "cards": c.view["hand"][:2]})
        rng = random.Random(1)
        # Play out the deal; stop at the first announcement and do not answer it.
        while True:
            v = players[0].view
            if v["phase"] == "show" and v["show"]["pending"]["announced"] is None:
                owner = players[v["show"]["pending"]["seat"]]
                r = await owner.act({"type": "announce", "points": 0})
                assert r["type"] == "ack"
                break
            if v["phase"] == "play":
                mover = players[v["turn"]]
                fits = [c for c in mover.view["hand"]
                        if min(10, "A23456789TJQK".index(c[0]) + 1) + v["count"] <= 31]
                r = await mover.act({"type": "play", "card": rng.choice(fits)})
                assert r["type"] == "ack"
            await players[0].wait_until(lambda c, ver=v: c.view is not ver)
        for c in players + [watcher]:
            await c.wait_until(lambda c: events_of(c, "muggins_result"), timeout=5)
            result = events_of(c, "muggins_result")[0]
            assert result["call"] == "timeout"
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_whole_game_in_process_store(make_server):
    server = make_server(redis=False)
    room, players, watcher = await seat_players(
        server.ws, {"players": 3, "target": 61, "muggins": True}, spectator=True
    )
    try:
        await play_game(players, seed=4, muggins_calls=True)
        await watcher.wait_until(lambda c: c.status == "game_over")
        for c in players + [watcher]:
            assert not c.problems
            audit_frames(c, players)
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_many_rooms_at_once(server):
    """Ten 2-player rooms played concurrently on one server."""
    tables = await asyncio.gather(*(
        seat_players(server.ws, {"players": 2, "target": 61}, encoding=enc)
        for enc in ["json", "msgpack"] * 5
    ))
    try:
        await asyncio.gather(*(
            play_seat(c, random.Random(i * 7 + s))
            for i, (_, clients, _) in enumerate(tables) for s, c in enumerate(clients)
        ))
        for _, clients, _ in tables:
            for c in clients:
                assert c.view["phase"] == "game_over" and not c.problems
    finally:
        for _, clients, _ in tables:
            for c in clients:
                await c.close()
