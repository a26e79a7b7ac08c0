"""Table talk over the wire (issue 21; docs/protocol.md "Chat"), on a real server.

Players and spectators say presets and free text; a spectator's message during a game
reaches the spectators only (also not a seated player's second connection); a joining
client gets the room's last messages; mutes and blocks silence an author for the player
(on every connection, and after a reconnect); the limits hold; a whole game is played with
talk going on and no frame shows a seat a card it may not see; the archive keeps the talk
with the game. Runs in memory with SQLite and on Redis with PostgreSQL (two processes:
a message said on one reaches the other's readers).
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets

import httpx
import pytest
from crib_wire import ThreadServer, audit_frames, play_seat

from protocol.client import Client, ClientError
from protocol.http import ArchivedGameBody
from server.settings import Settings

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

HOSTILE = '<img src=x onerror=alert(1)> "><svg onload=alert(1)> https://example.com/x'


def _settings(**values) -> Settings:
    # Scripted clients act at machine speed: no per-connection frame rate here.
    base = {"bot_delay_seconds": 0.0, "frame_rate": 0, "presence_frame_interval_seconds": 0,
            "sweep_interval_seconds": 0.05, "key_prefix": f"test:{secrets.token_hex(6)}:"}
    return Settings(**{**base, **values})


@pytest.fixture(params=["memory-sqlite", "redis-postgresql"])
def servers(request, tmp_path):
    """One server in memory, or two processes' worth (two apps) on one Redis."""
    if request.param == "memory-sqlite":
        one = ThreadServer(_settings(
            database_url=f"sqlite:///{tmp_path / 'chat.sqlite3'}")).start()
        yield [one]
        one.stop()
        return
    settings = _settings(redis_url=REDIS_URL, database_url=request.getfixturevalue("pg_url"))
    both = [ThreadServer(settings).start(), ThreadServer(settings).start()]
    yield both
    for s in both:
        s.stop()


async def new_player(server, name: str) -> dict:
    async with httpx.AsyncClient() as http:
        made = await http.post(f"{server.http}/api/players", json={"name": name})
    assert made.status_code == 201
    return made.json()


async def until_heard(client: Client, check, timeout: float = 5.0) -> None:
    await client.wait_until(lambda c: check(c.chat), timeout)


async def test_players_and_spectators_talk(servers) -> None:
    a, b = servers[0], servers[-1]
    anna = await new_player(a, "Anna")
    bo = await new_player(a, "Bo")
    cy = await new_player(a, "Cy")
    p0 = await Client.connect(a.ws, player=anna)
    p1 = await Client.connect(b.ws, player=bo)
    watcher = await Client.connect(b.ws, player=cy)
    anon = await Client.connect(a.ws, name="Guest")
    bo_again = await Client.connect(a.ws, player=bo)  # Bo's second connection, watching
    clients = [p0, p1, watcher, anon, bo_again]
    try:
        room = (await p0.create_room({"players": 2}))["room"]
        await p0.join(room, 0)
        await watcher.join(room, None)
        said = await p0.say(preset="good_luck")
        assert said["audience"] == "table" and said["seat"] == 0 and said["game"] == 0
        assert said["player"] == anna["id"] and "by" not in said
        late = await watcher.say(text="  hello all  ")
        assert late["text"] == "hello all" and late["seat"] is None
        assert late["audience"] == "table"  # no game on yet: everyone hears a spectator
        await p1.join(room, 1)  # the game starts
        assert [m["id"] for m in p1.chat] == [said["id"], late["id"]]  # the join's snapshot
        await bo_again.join(room, None)
        hostile = await p1.say(text=HOSTILE)
        assert hostile["text"] == HOSTILE  # kept as text, shown as text by clients
        kibitz = await watcher.say(text="Anna should keep the fives")
        assert kibitz["audience"] == "spectators"
        await until_heard(p0, lambda chat: any(m["id"] == hostile["id"] for m in chat))
        await until_heard(bo_again, lambda chat: any(m["id"] == hostile["id"] for m in chat))
        await asyncio.sleep(0.3)
        for player in (p0, p1, bo_again):  # Bo sits at the table: his watching tab too
            assert all(m["audience"] == "table" for m in player.chat), player.chat
        assert kibitz["id"] in {m["id"] for m in watcher.chat}
        # Guests may read but not speak.
        await anon.join(room, None)
        assert [m["id"] for m in anon.chat][-1] == kibitz["id"]  # spectators read it all
        with pytest.raises(ClientError) as err:
            await anon.say(preset="wow")
        assert err.value.code == "chat_needs_player"
        # The text's hygiene and length.
        for bad in ("a\u202eb", "line\nbreak", " \u200b "):
            with pytest.raises(ClientError) as err:
                await p0.say(text=bad)
            assert err.value.code == "bad_chat", bad
        with pytest.raises(ClientError) as err:
            await p0.say(text="x" * 201)
        assert err.value.code == "chat_too_long"
        with pytest.raises(ClientError) as err:
            await p0.request({"type": "chat", "preset": "good_game", "text": "both"},
                             lambda f: f["type"] == "error", retry=False)
        assert err.value.code == "bad_chat"
        with pytest.raises(ClientError) as err:
            await p0.request({"type": "chat", "preset": "no_such_phrase"},
                             lambda f: f["type"] == "error", retry=False)
        assert err.value.code == "bad_message"
        assert not any(c.problems for c in clients), [c.problems for c in clients]
    finally:
        for c in clients:
            await c.close()


async def test_mutes_blocks_and_reconnects(servers) -> None:
    a, b = servers[0], servers[-1]
    anna = await new_player(a, "Anna")
    bo = await new_player(a, "Bo")
    cy = await new_player(a, "Cy")
    p0 = await Client.connect(a.ws, player=anna)
    p1 = await Client.connect(b.ws, player=bo)
    watcher = await Client.connect(a.ws, player=cy)
    try:
        room = (await p0.create_room({"players": 2}))["room"]
        await p0.join(room, 0)
        await p1.join(room, 1)
        await watcher.join(room, None)
        first = await p1.say(preset="hello")
        await until_heard(p0, lambda chat: first["id"] in [m["id"] for m in chat])
        with pytest.raises(ClientError) as err:
            await p0.request({"type": "chat_mute", "message": 999},
                             lambda f: f["type"] in ("error", "chat_muted"))
        assert err.value.code == "message_not_found"
        with pytest.raises(ClientError) as err:
            await p1.request({"type": "chat_mute", "message": first["id"]},
                             lambda f: f["type"] in ("error", "chat_muted"))
        assert err.value.code == "bad_mute"
        muted = await p0.request({"type": "chat_mute", "message": first["id"]},
                                 lambda f: f["type"] in ("error", "chat_muted"))
        assert muted == {"type": "chat_muted", "player": bo["id"], "name": "Bo",
                         "muted": True, "blocked": False}
        second = await p1.say(preset="thinking")
        await until_heard(watcher, lambda chat: second["id"] in [m["id"] for m in chat])
        await asyncio.sleep(0.2)
        assert second["id"] not in [m["id"] for m in p0.chat]  # Anna does not hear Bo
        async with httpx.AsyncClient() as http:
            listed = (await http.get(f"{a.http}/api/players/me/mutes", headers={
                "Authorization": f"Player {anna['id']}.{anna['secret']}"})).json()
        assert [m["player"] for m in listed["mutes"]] == [bo["id"]]
        # Remembered for the player: a new connection (on the other process) neither.
        again = await Client.connect(b.ws, player=anna)
        try:
            await again.join(room, None)
            assert again.seat is None
            assert bo["id"] not in {m["player"] for m in again.chat}
        finally:
            await again.close()
        back = await p0.request({"type": "chat_unmute", "player": bo["id"]},
                                lambda f: f["type"] in ("error", "chat_muted"))
        assert back["muted"] is False
        third = await p1.say(preset="sorry")
        await until_heard(p0, lambda chat: third["id"] in [m["id"] for m in chat])
        # Cy blocks Bo from a message: neither hears the other from now on.
        blocked = await watcher.request({"type": "chat_mute", "message": third["id"],
                                         "block": True},
                                        lambda f: f["type"] in ("error", "chat_muted"))
        assert blocked["blocked"] is True
        fourth = await p1.say(preset="oops")
        await until_heard(p0, lambda chat: fourth["id"] in [m["id"] for m in chat])
        await asyncio.sleep(0.2)
        assert fourth["id"] not in [m["id"] for m in watcher.chat]
        async with httpx.AsyncClient() as http:
            blocks = (await http.get(f"{a.http}/api/players/me/blocks", headers={
                "Authorization": f"Player {cy['id']}.{cy['secret']}"})).json()
        assert [x["player"] for x in blocks["blocks"]] == [bo["id"]]
    finally:
        for c in (p0, p1, watcher):
            await c.close()


async def test_the_rooms_chat_setting_and_the_limits(servers) -> None:
    a = servers[0]
    anna = await new_player(a, "Anna")
    bo = await new_player(a, "Bo")
    p0 = await Client.connect(a.ws, player=anna)
    p1 = await Client.connect(a.ws, player=bo)
    try:
        off = (await p0.create_room({"players": 2}, room={"chat": "off"}))
        assert off["room_settings"]["chat"] == "off"
        snap = await p0.join(off["room"], 0)
        assert snap["chat"] == []
        with pytest.raises(ClientError) as err:
            await p0.say(preset="hello")
        assert err.value.code == "chat_off"
        rated = await p0.create_room({"players": 2}, room={"rated": True})
        assert rated["room_settings"]["chat"] == "presets"
        await p0.join(rated["room"], 0)
        with pytest.raises(ClientError) as err:
            await p0.say(text="hi")
        assert err.value.code == "chat_presets_only"
        with pytest.raises(ClientError) as err:
            await p0.create_room({"players": 2}, room={"chat": "loud"})
        assert err.value.code == "bad_options"
        free = (await p0.create_room({"players": 2}))["room"]
        await p0.join(free, 0)
        await p1.join(free, 1)
        said = []  # the burst (5), then one a second
        with pytest.raises(ClientError) as err:
            for _ in range(10):
                said.append(await p0.say(preset="wow"))
        assert err.value.code == "chat_rate_limited" and len(said) == 5
        limited = [f for f in p0.frames if f["type"] == "error"][-1]
        assert 0 < limited["retry_after"] <= 1.0
        await until_heard(p1, lambda chat: len(chat) == 5)
    finally:
        await p0.close()
        await p1.close()


async def test_the_room_rate_holds(tmp_path) -> None:
    server = ThreadServer(_settings(
        database_url=f"sqlite:///{tmp_path / 'rate.sqlite3'}", chat_room_rate=3,
        chat_player_rate=0)).start()
    try:
        people = [await new_player(server, f"P{i}") for i in range(4)]
        clients = [await Client.connect(server.ws, player=p) for p in people]
        room = (await clients[0].create_room({"players": 2}))["room"]
        for c in clients:
            await c.join(room, None)
        answers = await asyncio.gather(*(
            c.say(preset="wow") for c in clients for _ in range(2)), return_exceptions=True)
        busy = [x for x in answers if isinstance(x, ClientError)]
        assert busy and all(x.code == "room_chat_busy" for x in busy)
        await asyncio.sleep(0.3)
        heard = {len(c.chat) for c in clients}
        assert max(heard) <= 3 * 2  # at most the limit in each second it spanned
        for c in clients:
            await c.close()
    finally:
        server.stop()


async def test_spectators_cannot_use_up_the_players_talk(servers) -> None:
    """During a game the spectators' own talk has a budget of its own: a crowd of
    spectators at the room's rate leaves the players theirs (nothing a spectator does
    reaches a player, not even a refusal)."""
    a = servers[0]
    people = [await new_player(a, f"P{i}") for i in range(10)]
    players = [await Client.connect(a.ws, player=p) for p in people[:2]]
    crowd = [await Client.connect(servers[-1].ws, player=p) for p in people[2:]]
    try:
        room = (await players[0].create_room({"players": 2}))["room"]
        await players[0].join(room, 0)
        await players[1].join(room, 1)  # the game is on
        for c in crowd:
            await c.join(room, None)
        answers = await asyncio.gather(*(
            c.say(preset="wow") for c in crowd for _ in range(5)), return_exceptions=True)
        busy = [x for x in answers if isinstance(x, ClientError)]  # 40 in a second or two
        assert {x.code for x in busy} == {"room_chat_busy"}
        said = await players[0].say(preset="good_luck")  # the same second: still taken
        assert said["audience"] == "table"
        await players[1].wait_until(lambda c: said["id"] in [m["id"] for m in c.chat])
    finally:
        for c in players + crowd:
            await c.close()


async def test_a_game_with_talk_hides_nothing_and_is_archived_with_it(servers) -> None:
    """A whole game between two players with a spectator talking all along: no frame of
    any reader shows a card it may not see, no player ever gets a spectators' message,
    and ``GET /api/games/{id}`` carries the game's talk."""
    a, b = servers[0], servers[-1]
    anna = await new_player(a, "Anna")
    bo = await new_player(a, "Bo")
    cy = await new_player(a, "Cy")
    p0 = await Client.connect(a.ws, player=anna)
    p1 = await Client.connect(b.ws, player=bo)
    watcher = await Client.connect(b.ws, player=cy)
    rng = random.Random(21)
    try:
        room = (await p0.create_room({"players": 2, "target": 61}))["room"]
        await p0.join(room, 0)
        await watcher.join(room, None)
        await p0.say(preset="good_luck")
        await p1.join(room, 1)

        async def talk() -> None:
            while True:
                with_cards = " ".join(c for c in (p0.view or {}).get("hand") or [])
                try:
                    await watcher.say(text=f"Anna holds {with_cards}"[:200])
                    await p1.say(preset="thinking")
                except ClientError as exc:
                    assert exc.code == "chat_rate_limited"
                await asyncio.sleep(0.1)

        chatter = asyncio.create_task(talk())
        try:
            await asyncio.gather(play_seat(p0, rng, timeout=60), play_seat(p1, rng, timeout=60))
        finally:
            chatter.cancel()
        await p0.say(preset="good_game")
        for reader in (p0, p1, watcher):
            assert audit_frames(reader, [p0, p1]) > 10
        for player in (p0, p1):
            assert all(m["audience"] == "table" for m in player.chat)
            heard = [f for f in player.frames if f["type"] == "chat"]
            assert all(f["message"]["audience"] == "table" for f in heard)
        assert any(m["audience"] == "spectators" for m in watcher.chat)
        game_over = p0.view["phase"] == "game_over"
        assert game_over
        async with httpx.AsyncClient() as http:
            summary = (await http.get(f"{a.http}/api/players/{anna['id']}/games")).json()
            for _ in range(50):
                if summary.get("games"):
                    break
                await asyncio.sleep(0.1)
                summary = (await http.get(f"{a.http}/api/players/{anna['id']}/games")).json()
            game_id = summary["games"][0]["game"]
            archived = (await http.get(f"{a.http}/api/games/{game_id}")).json()
        talk_kept = archived["chat"]
        assert talk_kept[0]["preset"] == "good_luck" and talk_kept[0]["game"] == 0
        assert any(m["audience"] == "spectators" for m in talk_kept)
        assert all("by" not in m for m in talk_kept)
        assert [m["id"] for m in talk_kept] == sorted(m["id"] for m in talk_kept)
        assert not any(c.problems for c in (p0, p1, watcher))

        # Bo's profile goes private and Cy deletes themself: the archive's talk shows Bo's
        # name without his id, and Cy as a deleted player (neither name nor id).
        async with httpx.AsyncClient() as http:
            def auth(made: dict) -> dict:
                return {"Authorization": f"Player {made['id']}.{made['secret']}"}
            assert (await http.patch(f"{a.http}/api/players/me", json={"private": True},
                                     headers=auth(bo))).status_code == 200
            assert (await http.delete(f"{a.http}/api/players/me",
                                      headers=auth(cy))).status_code == 204
            later = (await http.get(f"{b.http}/api/games/{game_id}")).json()["chat"]
        assert [m["id"] for m in later] == [m["id"] for m in talk_kept]
        for before, now in zip(talk_kept, later, strict=True):
            if before["player"] == bo["id"]:
                assert now["name"] == "Bo" and now["player"] is None
            elif before["player"] == cy["id"]:
                assert now["name"] is None and now["player"] is None
            else:
                assert now == before
        authors = {m["player"] for m in talk_kept}
        assert {anna["id"], bo["id"], cy["id"]} <= authors
        assert not any(m["player"] in (bo["id"], cy["id"]) or m["name"] == "Cy"
                       for m in later)
        ArchivedGameBody.model_validate({**archived, "chat": later})
    finally:
        for c in (p0, p1, watcher):
            await c.close()
