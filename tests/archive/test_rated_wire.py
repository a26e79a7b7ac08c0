"""Rated rooms over the wire with players (issue 19; docs/rules.md §9): a free seat of a
rated room takes a player only; a player away past the takeover grace has the seat marked
abandoned for the game — it stays marked after they are back, the archive payload says so,
and the next game starts without the mark; in a match, the game's end forfeits the match
(that part needs the engine's match: it runs once ``engine.match`` exists)."""

from __future__ import annotations

import asyncio
import random
import secrets

import httpx
import pytest
from crib_wire import ThreadServer, play_seat

import server.archive.worker as archive_worker
from protocol.client import Client, ClientError
from server.settings import Settings


@pytest.fixture
def server(tmp_path):
    """A server in memory, with SQLite for its players and archive."""
    running = ThreadServer(Settings(
        bot_delay_seconds=0.0, sweep_interval_seconds=0.05, presence_frame_interval_seconds=0,
        key_prefix=f"test:{secrets.token_hex(6)}:",
        database_url=f"sqlite:///{tmp_path / 'rated.sqlite3'}")).start()
    yield running
    running.stop()


@pytest.fixture
def payloads(monkeypatch):
    """The archive payloads the server's archiver turns into rows, in order."""
    seen: list[dict] = []
    rows = archive_worker.game_rows

    def recording(room, payload, entries, now):
        seen.append(payload)
        return rows(room, payload, entries, now)

    monkeypatch.setattr(archive_worker, "game_rows", recording)
    return seen


async def new_player(server, name: str) -> dict:
    async with httpx.AsyncClient() as http:
        made = await http.post(f"{server.http}/api/players", json={"name": name})
    assert made.status_code == 201
    return made.json()


async def summary(server, room: str) -> dict:
    async with httpx.AsyncClient() as http:
        return (await http.get(f"{server.http}/api/rooms/{room}")).json()


async def test_a_rated_seat_takes_a_player_only(server) -> None:
    anna = await new_player(server, "Anna")
    plain = await Client.connect(server.ws, name="Cy")
    player = await Client.connect(server.ws, name="x", player=anna)
    try:
        room = (await plain.create_room({"players": 3}, room={"rated": True}))["room"]
        before = await summary(server, room)
        with pytest.raises(ClientError) as err:
            await plain.join(room, 0)
        assert err.value.code == "player_required"
        after = await summary(server, room)
        assert after["version"] == before["version"] and after["seats_taken"] == 0
        watching = await plain.join(room, None)  # spectators need no player
        assert watching["seat"] is None and watching["room_settings"]["rated"] is True
        taken = await player.join(room, 0)
        assert taken["seat"] == 0 and taken["seats"][0]["abandoned"] is False
        async with httpx.AsyncClient() as http:  # the creator may give a seat to a computer
            made = (await http.post(f"{server.http}/api/rooms", json={
                "options": {"players": 2}, "computers": {"1": "standard"},
                "room": {"rated": True}})).json()
        snap = await player.join(made["room"], 0)
        assert snap["status"] == "playing" and snap["seats"][1]["kind"] == "computer"
    finally:
        await plain.close()
        await player.close()


async def test_a_player_away_past_the_grace_abandons_the_game(server, payloads) -> None:
    anna, bo = await new_player(server, "Anna"), await new_player(server, "Bo")
    a = await Client.connect(server.ws, name="Anna", player=anna)
    b = await Client.connect(server.ws, name="Bo", player=bo)
    b_again = None
    try:
        made = await a.create_room({"players": 2}, room={"rated": True, "takeover_grace": 0.3})
        room = made["room"]
        assert made["room_settings"]["turn_seconds"] == 60.0
        await a.join(room, 0)
        await b.join(room, 1)
        await a.wait_until(lambda c: c.status == "playing" and c.seats[1]["connected"])
        await b.abort()
        await a.wait_until(lambda c: c.seats[1]["abandoned"], 10)
        update = next(f for f in a.frames if f["type"] == "update" and any(
            e["type"] == "seat_abandoned" for e in f["events"]))
        assert [e for e in update["events"] if e["type"] in (
            "computer_standin", "seat_abandoned")] == [
            {"type": "computer_standin", "seat": 1, "name": "Bo", "active": True},
            {"type": "seat_abandoned", "seat": 1, "name": "Bo", "reason": "away"}]
        assert update["seats"][1]["abandoned"] is True
        assert update["seats"][0]["abandoned"] is False
        assert (await summary(server, room))["seats"][1]["abandoned"] is True

        # Bo comes back: the seat is his again, the mark stays for this game.
        b_again = await Client.connect(server.ws, name="Bo", player=bo)
        snap = await b_again.join(room, 1)
        assert snap["seats"][1]["computer_standin"] is False
        assert snap["seats"][1]["abandoned"] is True
        await a.wait_until(lambda c: c.seats[1]["connected"]
                           and not c.seats[1]["computer_standin"], 5)
        assert a.seats[1]["abandoned"] is True
        await asyncio.wait_for(asyncio.gather(
            play_seat(a, random.Random(3)), play_seat(b_again, random.Random(4))), 90)
        assert a.view["phase"] == "game_over"
        for _ in range(100):
            if payloads:
                break
            await asyncio.sleep(0.05)
        assert len(payloads) == 1
        payload = payloads[0]
        assert payload["status"] == "finished"
        assert payload["settings"]["rated"] is True and payload["settings"]["match"] == 1
        assert [(s["player"], s["abandoned"]) for s in payload["seats"]] == [
            (anna["id"], False), (bo["id"], True)]

        # The next game starts without the mark.
        await a.act({"type": "rematch"})
        await b_again.act({"type": "rematch"})
        await a.wait_until(lambda c: c.view["phase"] != "game_over"
                           and c.view["game_number"] == 2, 5)
        await a.wait_until(lambda c: not c.seats[1]["abandoned"], 5)
        assert (await summary(server, room))["seats"][1]["abandoned"] is False
    finally:
        for c in (a, b, b_again):
            if c is not None:
                await c.close()


async def test_an_abandoned_game_of_a_match_forfeits_the_match(server, payloads) -> None:
    anna, bo = await new_player(server, "Anna"), await new_player(server, "Bo")
    a = await Client.connect(server.ws, name="Anna", player=anna)
    b = await Client.connect(server.ws, name="Bo", player=bo)
    try:
        made = await a.create_room({"players": 2}, room={
            "rated": True, "match": 3, "takeover_grace": 0.3})
        room = made["room"]
        await a.join(room, 0)
        await b.join(room, 1)
        await a.wait_until(lambda c: c.status == "playing" and c.seats[1]["connected"])
        await b.abort()
        await a.wait_until(lambda c: c.seats[1]["abandoned"], 10)
        await asyncio.wait_for(play_seat(a, random.Random(5)), 90)
        ended = next(f for f in a.frames if f["type"] == "update" and any(
            e["type"] == "game_over" for e in f["events"]))
        kinds = [e["type"] for e in ended["events"]]
        assert "match_over" in kinds and kinds.index("game_over") < kinds.index("match_over")
        over = next(e for e in ended["events"] if e["type"] == "match_over")
        assert over["reason"] == "forfeit" and over["winner"] == 0
        assert a.view["match"]["over"] is True and a.view["match"]["forfeited"] == [1]
        for _ in range(100):
            if payloads:
                break
            await asyncio.sleep(0.05)
        assert payloads[0]["seats"][1]["abandoned"] is True
        assert payloads[0]["match"]["over"] is True
        assert (await summary(server, room))["seats"][1]["abandoned"] is True
    finally:
        await a.close()
        await b.close()


async def test_leaving_a_rated_game_against_the_computer_is_a_loss(server, payloads) -> None:
    # Nobody is connected once the player has gone: an unrated table would wait for its
    # people; a rated one plays the seat to the end, and the player has lost.
    anna = await new_player(server, "Anna")
    async with httpx.AsyncClient() as http:
        made = (await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2}, "computers": {"1": "standard"},
            "room": {"rated": True, "takeover_grace": 0.3}})).json()
    room = made["room"]
    a = await Client.connect(server.ws, name="Anna", player=anna)
    try:
        await a.join(room, 0)
        await a.wait_until(lambda c: c.status == "playing")
        await a.abort()
        for _ in range(400):
            found = await summary(server, room)
            if found["status"] == "game_over":
                break
            await asyncio.sleep(0.05)
        assert found["status"] == "game_over", found
        assert found["seats"][0]["abandoned"] is True
        for _ in range(100):
            if payloads:
                break
            await asyncio.sleep(0.05)
        [payload] = payloads
        assert payload["status"] == "finished"
        assert [s["abandoned"] for s in payload["seats"]] == [True, False]
        async with httpx.AsyncClient() as http:
            for _ in range(100):
                mine = (await http.get(f"{server.http}/api/players/{anna['id']}/ratings")).json()
                if mine["ratings"]:
                    break
                await asyncio.sleep(0.05)
        assert mine["abandoned"] == 1 and mine["ratings"][0]["wins"] == 0
        assert mine["history"][0]["abandoned"] is True and mine["history"][0]["rank"] == 2
    finally:
        await a.close()


async def test_a_player_whose_clock_runs_out_too_often_abandons_the_game(tmp_path) -> None:
    fast = ThreadServer(Settings(
        bot_delay_seconds=0.0, sweep_interval_seconds=0.05, turn_timeouts_before_standin=1,
        rated_turn_seconds_min=1, key_prefix=f"test:{secrets.token_hex(6)}:",
        database_url=f"sqlite:///{tmp_path / 'clock.sqlite3'}")).start()
    try:
        anna, bo = await new_player(fast, "Anna"), await new_player(fast, "Bo")
        a = await Client.connect(fast.ws, name="Anna", player=anna)
        b = await Client.connect(fast.ws, name="Bo", player=bo)
        try:
            room = (await a.create_room({"players": 2}, room={
                "rated": True, "turn_seconds": 1}))["room"]
            await a.join(room, 0)
            await b.join(room, 1)
            # Nobody moves: both clocks run out; each seat is stood in for and abandoned.
            await a.wait_until(lambda c: c.seats[0]["abandoned"] and c.seats[1]["abandoned"],
                               10)
            reasons = sorted((e["seat"], e["reason"]) for f in a.frames
                             if f["type"] == "update" for e in f["events"]
                             if e["type"] == "seat_abandoned")
            assert reasons == [(0, "turn_clock"), (1, "turn_clock")]
        finally:
            await a.close()
            await b.close()
    finally:
        fast.stop()
