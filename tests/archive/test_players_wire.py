"""A player on the WebSocket, on a real server (in memory with SQLite, and on Redis with
PostgreSQL): hello with a player, a wrong one, the player's seat from a second connection
without its seat token, another player refused, and a deleted player's archived seat."""

from __future__ import annotations

import asyncio
import os
import random
import secrets

import httpx
import pytest
from crib_wire import ThreadServer, play_seat
from sqlalchemy import select

from protocol.client import Client, ClientError
from server.archive.outbox import game_id
from server.database import Database, database_url
from server.database.schema import game_seats
from server.settings import Settings

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(params=["memory-sqlite", "redis-postgresql"])
def server(request, tmp_path):
    """A server of each kind."""
    # (the archive is polled ten times a second until a game is in: no game read budget,
    # which has its own test in test_archive_http.py)
    values = {"bot_delay_seconds": 0.0, "key_prefix": f"test:{secrets.token_hex(6)}:",
              "game_reads_per_minute": 0}
    if request.param == "memory-sqlite":
        values["database_url"] = f"sqlite:///{tmp_path / 'players.sqlite3'}"
    else:
        values["redis_url"] = REDIS_URL
        values["database_url"] = request.getfixturevalue("pg_url")
    running = ThreadServer(Settings(**values)).start()
    running.database_url = values["database_url"]
    yield running
    running.stop()


async def new_player(server, name: str | None) -> dict:
    async with httpx.AsyncClient() as http:
        made = await http.post(f"{server.http}/api/players",
                               json={"name": name} if name else {})
    assert made.status_code == 201
    return made.json()


async def test_hello_with_a_player_and_with_a_wrong_one(server) -> None:
    anna = await new_player(server, "Anna")
    nameless = await new_player(server, None)
    c = await Client.connect(server.ws, name="Whoever", player=anna)
    try:
        assert c.welcome["player"] == anna["id"] and c.welcome["name"] == "Anna"
    finally:
        await c.close()
    c = await Client.connect(server.ws, name="Bo", player=nameless)
    try:
        assert c.welcome["player"] == nameless["id"] and c.welcome["name"] == "Bo"
    finally:
        await c.close()
    c = await Client.connect(server.ws, hello=False)
    try:
        wrong = {"id": anna["id"], "secret": "a" * 32}
        with pytest.raises(ClientError) as err:
            await c.request({"type": "hello", "name": "Anna", "player": wrong},
                            lambda f: f["type"] in ("welcome", "error"), 5.0)
        assert err.value.code == "bad_player"
        welcome = await c.request({"type": "hello", "name": "Anna"},
                                  lambda f: f["type"] in ("welcome", "error"), 5.0)
        assert welcome["type"] == "welcome" and "player" not in welcome  # still usable
    finally:
        await c.close()
    c = await Client.connect(server.ws, hello=False)
    try:
        with pytest.raises(ClientError) as err:  # not even the shape of a secret
            await c.request({"type": "hello", "name": "Anna",
                             "player": {"id": anna["id"], "secret": "short"}},
                            lambda f: f["type"] in ("welcome", "error"), 5.0)
        assert err.value.code == "bad_message"
    finally:
        await c.close()


async def test_a_players_seat_is_its_own_from_any_connection(server) -> None:
    anna, bo = await new_player(server, "Anna"), await new_player(server, "Bo")
    first = await Client.connect(server.ws, name="Anna", player=anna)
    second = await Client.connect(server.ws, name="Anna", player=anna)  # another device
    other = await Client.connect(server.ws, name="Bo", player=bo)
    plain = await Client.connect(server.ws, name="Cy")
    try:
        assert first.player_token != second.player_token
        room = (await first.create_room({"players": 3}))["room"]
        taken = await first.join(room, 0)
        assert taken["seat"] == 0 and taken["seat_token"]
        back = await second.join(room, 0)  # no seat token: the player's own seat
        assert back["seat"] == 0 and back["seat_token"] == taken["seat_token"]
        with pytest.raises(ClientError) as err:
            await other.join(room, 0)
        assert err.value.code == "seat_taken"
        with pytest.raises(ClientError) as err:
            await second.join(room, 1)  # one seat per player, whichever connection
        assert err.value.code == "already_seated"
        await other.join(room, 1)
        # seat tokens keep working for a client with no player
        cy = await plain.join(room, 2)
        again = await Client.connect(server.ws, name="Cy")
        try:
            assert (await again.join(room, 2, token=cy["seat_token"]))["seat"] == 2
        finally:
            await again.close()
        # and the player's seat token works without the player, like any seat token
        bare = await Client.connect(server.ws, name="Anna")
        try:
            assert (await bare.join(room, 0, token=taken["seat_token"]))["seat"] == 0
        finally:
            await bare.close()
        # the game is on; the player's connection (it left when refused above) comes back
        snap = await second.join(room, 0)
        assert snap["status"] == "playing" and snap["seat_token"] == taken["seat_token"]
        assert [s["name"] for s in snap["seats"]] == ["Anna", "Bo", "Cy"]
    finally:
        for c in (first, second, other, plain):
            await c.close()


async def test_a_deleted_players_archived_seat_has_no_name(server) -> None:
    anna = await new_player(server, "Anna")
    async with httpx.AsyncClient() as http:
        made = (await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61}, "computers": {"1": "easy"},
            })).json()
        room = made["room"]
        c = await Client.connect(server.ws, name="x", player=anna)
        try:
            await c.join(room, 0)
            await play_seat(c, random.Random(7))
        finally:
            await c.close()
        created = (await http.get(f"{server.http}/api/rooms/{room}")).json()["created"]
        gid = game_id(room, created, 1)
        for _ in range(600):
            answer = await http.get(f"{server.http}/api/games/{gid}")
            if answer.status_code == 200:
                break
            await asyncio.sleep(0.1)
        assert answer.status_code == 200
        assert answer.json()["seats"][0]["name"] == "Anna"
        auth = {"Authorization": f"Player {anna['id']}.{anna['secret']}"}
        exported = (await http.get(f"{server.http}/api/players/me/export",
                                   headers=auth)).json()
        assert [g["game"]["id"] for g in exported["games"]] == [gid]
        assert exported["games"][0]["seat"]["name"] == "Anna"
        assert (await http.delete(f"{server.http}/api/players/me", headers=auth)
                ).status_code == 204
        after = (await http.get(f"{server.http}/api/games/{gid}")).json()
        assert after["seats"][0]["name"] is None and after["seats"][1]["name"]
    db = Database(database_url(server.database_url, None))
    try:
        async with db.connect() as conn:
            row = (await conn.execute(select(game_seats).where(
                game_seats.c.game_id == gid, game_seats.c.seat == 0))).one()
        assert row.player_id == anna["id"] and row.name is None
    finally:
        await db.close()
    c = await Client.connect(server.ws, hello=False)
    try:
        with pytest.raises(ClientError) as err:
            await c.request({"type": "hello", "name": "Anna",
                             "player": {"id": anna["id"], "secret": anna["secret"]}},
                            lambda f: f["type"] in ("welcome", "error"), 5.0)
        assert err.value.code == "bad_player"
    finally:
        await c.close()
