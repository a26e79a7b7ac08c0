"""Public tables and the lobby over the wire (issue 20 point 1; docs/protocol.md "Public
tables and the lobby").

* Two server processes on one Redis: a public table made on one shows on a follower of the
  other, with its seats (who sits, free seats), options, settings and language; a seat
  taken there changes it; the last seat taken (the game starts) removes it; a private
  table never shows; a filtered follower sees only its tables; ``GET /api/lobby`` on
  either process answers what the followers hold.
* One process in memory (no Redis): the same, and a seated player's rating at the table's
  kind, read from the ratings table.
* The index on its own: writes of one room made out of order keep the newest version;
  entries expire with their rooms; an entry whose room moved on is put right when read (by
  a process with followers, and by ``GET /api/lobby``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from crib_wire import REDIS_URL, ThreadServer

from protocol.client import Client
from server.lobby.index import MemoryLobbyIndex
from server.lobby.redis_index import RedisLobbyIndex
from server.settings import Settings

WAIT = 5.0
"""Seconds a follower waits for the lobby to show a change (it takes about a second)."""


def lobby_of(server: Any, **query: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{server.http}/api/lobby", params=query)
    assert answer.status_code == 200, answer.text
    return answer.json()["tables"]


async def settle(client: Client, condition: Any) -> None:
    await client.wait_until(lambda c: c.lobby is not None and condition(c.lobby), WAIT)


async def test_public_tables_across_two_processes(process_servers) -> None:
    a, b = process_servers(2)
    made: list[Client] = []

    async def connect(server: Any, name: str) -> Client:
        c = await Client.connect(server.ws, name=name)
        made.append(c)
        return c

    try:
        follower = await connect(b, "Follower")
        swedish = await connect(b, "Sven")
        first = await follower.lobby_subscribe()
        assert first["tables"] == [] and follower.lobby == {}
        await swedish.lobby_subscribe(language="sv")
        host = await connect(a, "Ann")
        private = await host.create_room({"players": 2})
        made_public = await host.create_room(
            {"players": 3, "target": 61, "muggins": True},
            room={"public": True, "language": "da", "match": 3})
        room = made_public["room"]
        assert made_public["room_settings"]["public"] is True
        assert made_public["room_settings"]["language"] == "da"
        assert private["room_settings"]["public"] is False
        await host.join(room, 0)

        # Made on process a, seen by the follower on process b.
        await settle(follower, lambda lobby: room in lobby
                     and lobby[room]["seats"][0]["name"] == "Ann")
        entry = follower.lobby[room]
        assert entry["options"] == {"players": 3, "partnerships": False, "target": 61,
                                    "muggins": True, "lowball": False, "backup10": False}
        assert (entry["language"], entry["match"], entry["rated"]) == ("da", 3, False)
        assert entry["table_kind"] == "3" and entry["seats_free"] == 2
        assert entry["url"] == f"/r/{room}"
        assert [s["kind"] for s in entry["seats"]] == ["human", "open", "open"]
        assert private["room"] not in follower.lobby
        # The HTTP listing of either process is the same list.
        for server in (a, b):
            assert lobby_of(server) == [entry]
        assert lobby_of(a, language="da", players="3") == [entry]
        assert lobby_of(a, language="sv") == [] and lobby_of(b, players="2") == []

        # A seat taken (on process b): the entry changes.
        bo = await connect(b, "Bo")
        await bo.join(room, 1)
        await settle(follower, lambda lobby: lobby[room]["seats_free"] == 1)
        assert follower.lobby[room]["seats"][1]["name"] == "Bo"
        # The last seat taken starts the game: the table leaves the lobby.
        cy = await connect(a, "Cy")
        snap = await cy.join(room, 2)
        assert snap["status"] == "playing"
        await settle(follower, lambda lobby: room not in lobby)
        assert lobby_of(a) == [] and lobby_of(b) == []
        updates = [f for f in follower.frames if f["type"] == "lobby_update"]
        assert updates and any(room in f["removed"] for f in updates)
        assert all(private["room"] not in [t["room"] for t in f["added"] + f["changed"]]
                   for f in updates)
        # The Swedish follower never heard of the Danish table.
        await swedish.ping()
        assert swedish.lobby == {}
        assert not [f for f in swedish.frames if f["type"] == "lobby_update"]
        for c in made:
            assert not c.problems, c.problems
    finally:
        for c in made:
            await c.close()


async def test_lobby_in_memory_with_ratings(tmp_path: Path) -> None:
    """No Redis: one process, the in-memory index; a player's rating at the table's kind
    comes from the ratings table; a computer seat shows its level; unsubscribing stops the
    updates; a connection at a table may follow the lobby too."""
    db = tmp_path / "games.sqlite3"
    server = ThreadServer(Settings(database_url=f"sqlite:///{db}", bot_delay_seconds=0)
                          ).start()
    made: list[Client] = []
    try:
        player = httpx.post(f"{server.http}/api/players", json={}).json()
        now = datetime.now(UTC).isoformat(sep=" ")
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO ratings (player_id, table_kind, mu, sigma, display, "
                         "games, wins, updated_at) VALUES (?, '4', 25, 3, 1125, 12, 5, ?)",
                         (player["id"], now))
        host = await Client.connect(server.ws, name="Ann", player=player)
        made.append(host)
        watcher = await Client.connect(server.ws, name="Watcher")
        made.append(watcher)
        await watcher.lobby_subscribe()
        created = await host.create_room({"players": 4}, computers={"3": "easy"},
                                         room={"public": True})
        room = created["room"]
        # create_room's language: the default, en (this hello named none).
        assert created["room_settings"]["language"] == "en"
        await host.join(room, 0)
        await settle(watcher, lambda lobby: room in lobby
                     and lobby[room]["seats"][0]["player"] == player["id"])
        seats = watcher.lobby[room]["seats"]
        assert seats[0]["rating"] == 1125 and seats[0]["kind"] == "human"
        assert (seats[3]["kind"], seats[3]["level"], seats[3]["rating"]) == (
            "computer", "easy", None)
        assert watcher.lobby[room]["table_kind"] == "4"
        assert lobby_of(server) == [watcher.lobby[room]]
        # The host, at the table, follows the lobby too.
        listed = await host.lobby_subscribe(players=4)
        assert [t["room"] for t in listed["tables"]] == [room]
        # Unsubscribed: no more lobby frames.
        await watcher.lobby_unsubscribe()
        await watcher.ping()
        seen = len(watcher.frames)
        # A hello's language is the default of the rooms it creates.
        dane = await Client.connect(server.ws, name="Dorte", hello=False)
        made.append(dane)
        await dane.request({"type": "hello", "name": "Dorte", "language": "da"},
                           lambda f: f["type"] == "welcome")
        other = await dane.create_room({"players": 2}, room={"public": True})
        assert other["room_settings"]["language"] == "da"
        # The host follows with players=4: the 2-player table is not sent to it. A 4-player
        # table made after it is, and the poll that brings it has read both.
        later = await dane.create_room({"players": 4}, room={"public": True})
        await settle(host, lambda lobby: later["room"] in lobby)
        assert other["room"] not in host.lobby
        assert {t["room"] for t in lobby_of(server)} == {room, other["room"], later["room"]}
        assert not [f for f in watcher.frames[seen:] if f["type"].startswith("lobby")]
        # A player whose profile is private is listed by name only: neither their id nor
        # their rating tells anyone they are at a table now.
        quiet = httpx.post(f"{server.http}/api/players", json={"name": "Kim"}).json()
        assert httpx.patch(f"{server.http}/api/players/me", json={"private": True}, headers={
            "Authorization": f"Player {quiet['id']}.{quiet['secret']}"}).status_code == 200
        kim = await Client.connect(server.ws, name="Kim", player=quiet)
        made.append(kim)
        hidden = await kim.create_room({"players": 2}, room={"public": True})
        await kim.join(hidden["room"], 0)
        await host.lobby_subscribe()  # every table now
        await settle(host, lambda lobby: hidden["room"] in lobby
                     and lobby[hidden["room"]]["seats"][0]["name"] == "Kim")
        entry = host.lobby[hidden["room"]]
        assert entry["seats"][0]["name"] == "Kim" and entry["seats"][0]["player"] is None
        assert entry["seats"][0]["rating"] is None
        for c in made:
            assert not c.problems, c.problems
    finally:
        for c in made:
            await c.close()
        server.stop()


@pytest.fixture(params=["memory", "redis"])
async def index(request: Any, redis_prefix: str) -> Any:
    clock = [1000.0]
    if request.param == "memory":
        yield MemoryLobbyIndex(lambda: clock[0]), clock
        return
    client = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    yield RedisLobbyIndex(client, redis_prefix, clock=lambda: clock[0]), clock
    await client.aclose()


async def test_index_orders_writes_and_expires(index: Any) -> None:
    lobby, clock = index
    entry = {"room": "r1", "version": 4, "created": 1.0, "seats_free": 1}
    assert await lobby.put("r1", 4, entry, 2000.0)
    # A late write of an older version (another process, slower) changes nothing.
    assert not await lobby.put("r1", 3, {**entry, "version": 3}, 2000.0)
    version, entries = await lobby.read()
    assert entries == [entry]
    assert await lobby.read(version) == (version, None)  # nothing new: no entries sent
    # Version 5 takes the room out; a late version 4 does not bring it back.
    assert await lobby.put("r1", 5, None, 2000.0)
    assert not await lobby.put("r1", 4, entry, 2000.0)
    v2, entries = await lobby.read(version)
    assert v2 > version and entries == []
    # Entries go when their rooms expire.
    assert await lobby.put("r2", 0, {**entry, "room": "r2", "version": 0}, 1500.0)
    assert [e["room"] for e in (await lobby.read())[1]] == ["r2"]
    clock[0] = 1600.0
    assert (await lobby.read())[1] == []


async def test_a_stale_entry_is_put_right_when_read(make_server: Any, redis_prefix: str
                                                    ) -> None:
    """An index write lost (a process died between the commit and it): the entry still
    shows the room as it was; a process with followers checks what it lists against the
    rooms and mends it (its followers get the change), and so does an HTTP read."""
    server = make_server(redis=True)
    host = await Client.connect(server.ws, name="Ann")
    check = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        room = (await host.create_room({"players": 2}, room={"public": True}))["room"]
        await host.join(room, 0)
        end = asyncio.get_running_loop().time() + WAIT
        while [t["version"] for t in lobby_of(server)] != [1]:
            assert asyncio.get_running_loop().time() < end
            await asyncio.sleep(0.05)
        # Version 0's entry put back, as if the commit of version 1 never reached the index.
        stale = {**lobby_of(server)[0], "version": 0, "seats_free": 2}
        stale["seats"] = [{**stale["seats"][0], "kind": "open", "name": None},
                          stale["seats"][1]]
        # (the entry and the version seen are written together: both are as at version 0)
        await check.hset(f"{redis_prefix}lobby:{{lobby}}:tables", room, json.dumps(stale))
        await check.hset(f"{redis_prefix}lobby:{{lobby}}:seen", room, 0)
        await check.incr(f"{redis_prefix}lobby:{{lobby}}:v")
        # A follower's process checks what it lists: the stale entry first, then the
        # entry as the room's record gives it, as a change.
        follower = await Client.connect(server.ws, name="Follower")
        try:
            first = await follower.lobby_subscribe()
            assert [t["version"] for t in first["tables"]] == [0]
            await settle(follower, lambda lobby: lobby[room]["version"] == 1)
            assert follower.lobby[room]["seats"][0]["name"] == "Ann"
            changes = [f for f in follower.frames if f["type"] == "lobby_update"]
            assert [([t["room"] for t in f["changed"]], f["removed"]) for f in changes] == [
                ([room], [])]
        finally:
            await follower.close()
        # Again, for an HTTP reader: it finds version 0 listed while the room is at 1, leaves
        # it out of the answer and writes it again from the room's record.
        await check.hset(f"{redis_prefix}lobby:{{lobby}}:tables", room, json.dumps(stale))
        await check.hset(f"{redis_prefix}lobby:{{lobby}}:seen", room, 0)
        assert lobby_of(server) == []
        mended = lobby_of(server)
        assert [(t["version"], t["seats"][0]["name"]) for t in mended] == [(1, "Ann")]
    finally:
        await host.close()
        await check.aclose()
