"""docs/protocol.md, "Fine points", is what a real server does.

Raw WebSocket frames against a server on a loopback port (in-memory store):

* a malformed ``act`` gets exactly the one answer the list gives for its case;
* a connection's requests are answered in order, and ``error.ref`` names the request;
* the version that fills the last seat starts the game: the others get it as an update,
  the joiner as a snapshot whose ``missed`` holds it and whose ``history_from`` is it;
* ``set_computer`` has no answer of its own: the update with the seats, or an ``error``
  with ``ref``;
* a ``join`` that fails has left the room the connection followed;
* a handshake offering only unknown subprotocols is refused with HTTP 403;
* after a restart of an in-memory server, rooms and tokens are unknown;
* a ``create_room``/``set_computer`` of the right shape with values not allowed gets
  ``bad_options`` (as ``POST /api/rooms`` does), one of the wrong shape ``bad_message``;
* an act's card text that is not a canonical card is ``bad_card``, ``answer_timeout``
  ``system_only``;
* ``resync``/``join`` ``since``: ``[]`` at the room's version, everything from 0, no
  ``missed`` past the room's version; a ``join`` without ``seat`` watches.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from protocol.messages import SERVER_ADAPTER


class Raw:
    """A JSON connection that sends and reads raw frames, checking each against the
    models."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, name: str | None = "Ann", token: str | None = None) -> Raw:
        raw = cls(await connect(url, subprotocols=["cribbage.v1.json"]))
        if name is not None:
            hello: dict[str, Any] = {"type": "hello", "name": name}
            if token:
                hello["token"] = token
            await raw.send(hello)
            raw.welcome = await raw.expect("welcome")
        return raw

    async def send(self, message: dict[str, Any] | str) -> None:
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def next(self, skip: tuple[str, ...] = ("presence",)) -> dict[str, Any]:
        while True:
            frame = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            SERVER_ADAPTER.validate_python(frame)
            if frame["type"] not in skip:
                return frame

    async def expect(self, kind: str) -> dict[str, Any]:
        frame = await self.next()
        assert frame["type"] == kind, frame
        return frame

    async def close(self) -> None:
        await self.ws.close()


@pytest.fixture
def mem_server(make_server):
    return make_server(redis=False, bot_delay_seconds=0.0)


PLAY = {"type": "play", "card": "5H"}


async def test_each_malformed_act_gets_its_one_answer(mem_server):
    cases: list[tuple[Any, dict[str, Any]]] = [
        ("not json", {"type": "error", "code": "bad_frame", "ref": None}),
        ({"type": "act", "action_id": "a1", "action": {"type": "fly"}},
         {"type": "reject", "code": "bad_action", "action_id": "a1"}),
        ({"type": "act", "action_id": "a2", "action": {"type": "play"}},
         {"type": "reject", "code": "bad_action", "action_id": "a2"}),
        ({"type": "act", "action_id": "a3", "action": PLAY, "extra": 1},
         {"type": "reject", "code": "bad_action", "action_id": "a3"}),
        ({"type": "act", "action_id": "a 4", "action": PLAY},
         {"type": "reject", "code": "bad_action", "action_id": "a 4"}),
        ({"type": "act", "action_id": "a5"},
         {"type": "reject", "code": "bad_action", "action_id": "a5"}),
        ({"type": "act", "action": PLAY}, {"type": "error", "code": "bad_message", "ref": "act"}),
        ({"type": "act", "action_id": 6, "action": PLAY},
         {"type": "error", "code": "bad_message", "ref": "act"}),
        ({"type": "act", "action_id": "", "action": PLAY},
         {"type": "error", "code": "bad_message", "ref": "act"}),
        ({"type": "act", "action_id": "x" * 65, "action": PLAY},
         {"type": "error", "code": "bad_message", "ref": "act"}),
        # The server's own moves' prefix (the grading tells the computer's moves by it).
        ({"type": "act", "action_id": "auto-7", "action": PLAY},
         {"type": "reject", "code": "bad_action", "action_id": "auto-7"}),
        ({"type": "act", "action_id": "a7", "action": PLAY},
         {"type": "reject", "code": "not_seated", "action_id": "a7"}),
        ({"type": "act", "action_id": "c1", "action": {"type": "play", "card": "ZZ"}},
         {"type": "reject", "code": "bad_card", "action_id": "c1"}),
        ({"type": "act", "action_id": "c2", "action": {"type": "play", "card": "10H"}},
         {"type": "reject", "code": "bad_card", "action_id": "c2"}),
        ({"type": "act", "action_id": "c3", "action": {"type": "discard", "cards": ["5h", "TD"]}},
         {"type": "reject", "code": "bad_card", "action_id": "c3"}),
        ({"type": "act", "action_id": "c4", "action": {"type": "play", "card": 5}},
         {"type": "reject", "code": "bad_action", "action_id": "c4"}),
        ({"type": "act", "action_id": "c5", "action": {"type": "play", "card": "ZZ"}, "x": 1},
         {"type": "reject", "code": "bad_action", "action_id": "c5"}),
        ({"type": "act", "action_id": "c6", "action": {"type": "answer_timeout"}},
         {"type": "reject", "code": "system_only", "action_id": "c6"}),
        ({"type": "act", "action_id": "c 7", "action": {"type": "answer_timeout"}},
         {"type": "reject", "code": "bad_action", "action_id": "c 7"}),
        ({"type": 5}, {"type": "error", "code": "bad_message", "ref": None}),
        ({"type": "x" * 33}, {"type": "error", "code": "bad_message", "ref": None}),
    ]
    conn = await Raw.open(mem_server.ws)
    try:
        for frame, answer in cases:
            await conn.send(frame)
            got = await conn.next()
            assert {k: got.get(k) for k in answer} == answer, (frame, got)
        # a well-formed act before hello
        fresh = await Raw.open(mem_server.ws, name=None)
        await fresh.send({"type": "act", "action_id": "b1", "action": PLAY})
        got = await fresh.next()
        assert (got["type"], got["code"], got["ref"]) == ("error", "hello_required", "act")
        # a malformed one before hello: decoding comes first
        await fresh.send({"type": "act", "action_id": "b2", "action": {"type": "fly"}})
        got = await fresh.next()
        assert (got["type"], got["code"], got["action_id"]) == ("reject", "bad_action", "b2")
        await fresh.close()
    finally:
        await conn.close()


async def test_answers_come_in_request_order_with_ref(mem_server):
    conn = await Raw.open(mem_server.ws)
    try:
        burst = [
            {"type": "ping", "nonce": 1},
            {"type": "resync"},
            "[1]",
            {"type": "join", "room": "nosuchroom", "seat": 0},
            {"type": "leave"},
            {"type": "hint"},
            {"type": "ping", "nonce": 2},
        ]
        for frame in burst:
            await conn.send(frame)
        got = [await conn.next() for _ in burst]
        assert [(f["type"], f.get("code"), f.get("ref")) for f in got] == [
            ("pong", None, None),
            ("error", "not_joined", "resync"),
            ("error", "bad_frame", None),
            ("error", "room_not_found", "join"),
            ("error", "not_joined", "leave"),
            ("error", "not_seated", "hint"),
            ("pong", None, None),
        ]
        assert (got[0]["nonce"], got[-1]["nonce"]) == (1, 2)
    finally:
        await conn.close()


async def test_the_last_seat_taken_starts_the_game_in_its_version(mem_server):
    ann = await Raw.open(mem_server.ws, "Ann")
    bob = await Raw.open(mem_server.ws, "Bob")
    try:
        await ann.send({"type": "create_room", "options": {"players": 2, "target": 61}})
        room = (await ann.expect("room_created"))["room"]
        await ann.send({"type": "join", "room": room, "seat": 0})
        waiting = await ann.expect("snapshot")
        assert waiting["view"] is None and "history_from" not in waiting
        await bob.send({"type": "join", "room": room, "seat": 1})
        snap = await bob.expect("snapshot")
        update = await ann.expect("update")
        version = update["version"]
        assert snap["version"] == version == waiting["version"] + 1
        kinds = ["seat_taken", "game_start", "game_commitment", "cut_for_deal",
                     "deal_commitment", "deal"]
        assert [e["type"] for e in update["events"]] == kinds
        assert update["seats"] is not None
        [patch] = update["patch"]
        assert (patch["op"], patch["path"]) == ("replace", "")
        assert snap["history_from"] == version
        [missed] = snap["missed"]
        assert missed["version"] == version
        assert [e["type"] for e in missed["events"]] == kinds
        deal = missed["events"][-1]
        assert list(deal["hands"]) == ["1"] and deal["hands"]["1"] == snap["view"]["hand"]
        assert [e["type"] for e in missed["events"]] == [e["type"] for e in update["events"]]
    finally:
        await ann.close()
        await bob.close()


async def test_set_computer_has_no_answer_of_its_own(mem_server):
    ann = await Raw.open(mem_server.ws, "Ann")
    try:
        await ann.send({"type": "create_room", "options": {"players": 3}})
        created = await ann.expect("room_created")
        room, creator = created["room"], created["creator_token"]
        await ann.send({"type": "join", "room": room, "seat": 0})
        await ann.expect("snapshot")
        await ann.send({"type": "set_computer", "seat": 1, "level": "easy",
                        "creator_token": creator})
        await ann.send({"type": "ping", "nonce": "after"})
        update = await ann.expect("update")
        assert update["seats"][1]["kind"] == "computer"
        assert update["events"][0]["type"] == "seat_taken"
        assert (await ann.expect("pong"))["nonce"] == "after"  # nothing else in between
        await ann.send({"type": "set_computer", "seat": 1, "creator_token": creator})
        got = await ann.expect("error")
        assert (got["code"], got["ref"]) == ("seat_taken", "set_computer")
        await ann.send({"type": "set_computer", "seat": 2,
                        "creator_token": ann.welcome["player_token"]})
        got = await ann.expect("error")
        assert (got["code"], got["ref"]) == ("bad_token", "set_computer")
    finally:
        await ann.close()


async def test_a_failed_join_leaves_the_room_followed(mem_server):
    ann = await Raw.open(mem_server.ws, "Ann")
    try:
        await ann.send({"type": "create_room", "options": {"players": 2}})
        room = (await ann.expect("room_created"))["room"]
        await ann.send({"type": "join", "room": room, "seat": 0})
        await ann.expect("snapshot")
        await ann.send({"type": "join", "room": "nosuchroom", "seat": 0})
        assert (await ann.expect("error"))["code"] == "room_not_found"
        await ann.send({"type": "resync"})
        got = await ann.expect("error")
        assert (got["code"], got["ref"]) == ("not_joined", "resync")
    finally:
        await ann.close()


async def test_unknown_subprotocols_are_refused_with_403(mem_server):
    with pytest.raises(InvalidStatus) as refused:
        await connect(mem_server.ws, subprotocols=["cribbage.v9.json"])
    assert refused.value.response.status_code == 403
    ok = await connect(mem_server.ws, subprotocols=["cribbage.v9.json", "cribbage.v1.msgpack"])
    assert ok.subprotocol == "cribbage.v1.msgpack"
    await ok.close()


async def test_an_in_memory_restart_forgets_rooms_and_tokens(make_server):
    first = make_server(redis=False)
    ann = await Raw.open(first.ws, "Ann")
    token = ann.welcome["player_token"]
    await ann.send({"type": "create_room", "options": {"players": 2}})
    room = (await ann.expect("room_created"))["room"]
    await ann.send({"type": "join", "room": room, "seat": 0})
    await ann.expect("snapshot")
    await ann.close()
    first.stop()

    second = make_server(redis=False)
    back = await Raw.open(second.ws, "Ann", token=token)
    try:
        assert back.welcome["player_token"] != token
        await back.send({"type": "join", "room": room, "seat": 0, "token": token})
        assert (await back.expect("error"))["code"] == "bad_token"
        await back.send({"type": "join", "room": room, "seat": 0})
        assert (await back.expect("error"))["code"] == "room_not_found"
    finally:
        await back.close()


BAD_OPTION_VALUES: list[dict[str, Any]] = [
    {"options": {"target": 100}},
    {"options": {"players": 2, "partnerships": True}},
    {"options": {"foo": 1}},
    {"computers": {"1": "genius"}},
    {"computers": {"5": "easy"}},
    {"room": {"turn_seconds": 0}},
    {"room": {"answer_window": -1}},
    {"room": {"nope": 1}},
    {"room": {"hints": "yes"}},
]
"""``create_room`` bodies of the right shape with a value the server does not allow."""


async def test_bad_option_values_are_bad_options_over_ws_as_over_http(mem_server):
    conn = await Raw.open(mem_server.ws)
    try:
        for body in BAD_OPTION_VALUES:
            await conn.send({"type": "create_room", **body})
            got = await conn.next()
            assert (got["type"], got["code"], got["ref"]) == (
                "error", "bad_options", "create_room"), (body, got)
            http = httpx.post(f"{mem_server.http}/api/rooms", json=body)
            assert http.status_code == 400, body
            error = http.json()["error"]
            assert error["code"] == "bad_options", body
            assert "\n" not in error["message"] and "pydantic" not in error["message"], error
        # not the right shape: bad_message
        for frame in ({"type": "create_room", "options": "x"},
                      {"type": "create_room", "computers": ["1"]},
                      {"type": "create_room", "extra": 1},
                      {"type": "create_room", "options": {"target": 100}, "extra": 1}):
            await conn.send(frame)
            got = await conn.next()
            assert (got["type"], got["code"], got["ref"]) == (
                "error", "bad_message", "create_room"), (frame, got)
        await conn.send({"type": "create_room", "options": {"players": 2}})
        created = await conn.expect("room_created")
        creator = created["creator_token"]
        await conn.send({"type": "set_computer", "room": created["room"], "seat": 1,
                         "level": "hard", "creator_token": creator})
        got = await conn.next()
        assert (got["code"], got["ref"]) == ("bad_options", "set_computer"), got
        await conn.send({"type": "set_computer", "room": created["room"], "seat": 9,
                         "level": "hard", "creator_token": creator})
        got = await conn.next()
        assert (got["code"], got["ref"]) == ("bad_message", "set_computer"), got
        # the same option value before hello: decoding comes first
        fresh = await Raw.open(mem_server.ws, name=None)
        await fresh.send({"type": "create_room", "options": {"target": 100}})
        assert (await fresh.next())["code"] == "bad_options"
        await fresh.close()
    finally:
        await conn.close()


async def test_since_in_resync_and_join_and_a_join_without_seat(mem_server):
    ann = await Raw.open(mem_server.ws, "Ann")
    bob = await Raw.open(mem_server.ws, "Bob")
    try:
        await ann.send({"type": "create_room", "options": {"players": 2}})
        room = (await ann.expect("room_created"))["room"]
        await ann.send({"type": "join", "room": room, "seat": 0})
        await ann.expect("snapshot")
        await bob.send({"type": "join", "room": room, "seat": 1})
        await bob.expect("snapshot")
        update = await ann.expect("update")
        version = update["version"]
        assert version == 2  # nobody acts: no version comes between
        await ann.send({"type": "resync", "since": version})
        assert (await ann.expect("snapshot"))["missed"] == []
        await ann.send({"type": "resync", "since": version + 5})
        ahead = await ann.expect("snapshot")
        assert "missed" not in ahead and ahead["version"] == version
        await ann.send({"type": "resync", "since": 0})
        everything = await ann.expect("snapshot")
        assert [m["version"] for m in everything["missed"]] == list(range(1, version + 1))
        assert everything["missed"][0]["events"][0]["type"] == "seat_taken"
        await ann.send({"type": "resync", "since": version - 1})
        [last] = (await ann.expect("snapshot"))["missed"]
        assert last["version"] == version

        watcher = await Raw.open(mem_server.ws, "Wat")
        await watcher.send({"type": "join", "room": room})
        watching = await watcher.expect("snapshot")
        assert watching["seat"] is None and "seat_token" not in watching
        assert watching["view"]["hand"] == []
        await watcher.send({"type": "join", "room": room, "since": version + 1})
        assert "missed" not in await watcher.expect("snapshot")
        await watcher.close()
    finally:
        await ann.close()
        await bob.close()
