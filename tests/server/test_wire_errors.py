"""Nothing a client sends may crash the server or change a room it should not: malformed
frames, bad tokens, out-of-turn actions, cards not held, re-sent action ids, huge frames."""

from __future__ import annotations

import asyncio
import contextlib
import json

import msgpack
import pytest
import redis
import websockets
from crib_wire import REDIS_URL, events_of, seat_players

from protocol.client import Client, ClientError


def stored(prefix: str, room: str) -> tuple[str, str]:
    """The room's stored (version, record JSON), read straight from Redis."""
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        v, data = r.hmget(f"{prefix}room:{{{room}}}:state", "v", "data")
        return v, data
    finally:
        r.close()


async def started_room(server, encoding="json"):
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61},
                                          encoding=encoding)
    return room, players


async def to_play_phase(players):
    for c in players:
        assert (await c.act({"type": "discard", "cards": c.view["hand"][:2]}))["type"] == "ack"
    for c in players:
        await c.wait_until(lambda c: c.view["phase"] == "play")


async def test_out_of_turn_and_card_not_held(server, redis_prefix):
    room, players = await started_room(server)
    try:
        await to_play_phase(players)
        turn = players[0].view["turn"]
        idle = players[1 - turn]
        before = stored(redis_prefix, room)
        r = await idle.act({"type": "play", "card": idle.view["hand"][0]})
        assert (r["type"], r["code"]) == ("reject", "not_your_turn")
        mover = players[turn]
        held = set(mover.view["hand"]) | set(idle.view["hand"])
        stranger = next(c for c in ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S",
                                    "TS", "JS", "QS", "KS", "AH", "2H"] if c not in held)
        r = await mover.act({"type": "play", "card": stranger})
        assert (r["type"], r["code"]) == ("reject", "card_not_in_hand")
        r = await mover.act({"type": "play", "card": idle.view["hand"][0]})
        assert (r["type"], r["code"]) == ("reject", "card_not_in_hand")
        r = await mover.act({"type": "discard", "cards": mover.view["hand"][:2]})
        assert (r["type"], r["code"]) == ("reject", "wrong_phase")
        r = await mover.act({"type": "play", "card": "ZZ"})
        assert (r["type"], r["code"]) == ("reject", "bad_card")
        r = await mover.act({"type": "answer_timeout"})
        assert (r["type"], r["code"]) == ("reject", "system_only")
        assert stored(redis_prefix, room) == before
        # and the game goes on normally
        r = await mover.act({"type": "play", "card": mover.view["hand"][0]})
        assert r["type"] == "ack"
        for c in players:
            assert not c.problems
    finally:
        for c in players:
            await c.close()


async def test_bad_token_and_seat_taken(server, redis_prefix):
    room, players = await started_room(server)
    other = await Client.connect(server.ws, name="mallory")
    try:
        before = stored(redis_prefix, room)
        with pytest.raises(ClientError) as err:
            await other.join(room, 0, token="A" * 22)
        assert err.value.code == "bad_token"
        with pytest.raises(ClientError) as err:
            await other.join(room, 1)
        assert err.value.code == "seat_taken"
        with pytest.raises(ClientError) as err:
            await other.join(room, 3)
        assert err.value.code == "bad_seat"
        with pytest.raises(ClientError) as err:
            await other.join("nosuchroom", 0)
        assert err.value.code == "room_not_found"
        # not seated: cannot act
        r = await other.act({"type": "discard", "cards": ["AS", "2S"]})
        assert (r["type"], r["code"]) == ("reject", "not_seated")
        # a spectator cannot act either
        await other.join(room, None)
        r = await other.act({"type": "discard", "cards": ["AS", "2S"]})
        assert (r["type"], r["code"]) == ("reject", "not_seated")
        assert stored(redis_prefix, room) == before
    finally:
        for c in players + [other]:
            await c.close()


BAD_JSON_FRAMES = [
    ("not json", "bad_frame"),
    ("[1, 2, 3]", "bad_frame"),
    ('"hello"', "bad_frame"),
    ("{" * 5000 + "}" * 5000, "bad_frame"),
    ('{"type": "nope"}', "bad_message"),
    ('{"no_type": 1}', "bad_message"),
    ('{"type": "join", "room": "../../etc", "seat": 0}', "bad_message"),
    ('{"type": "join", "room": "abcdef", "seat": 9}', "bad_message"),
    ('{"type": "hello", "name": ""}', "bad_name"),
    ('{"type": "act", "action": {"type": "play", "card": "5H"}}', "bad_message"),
    ('{"type": "act", "action_id": 5, "action": {"type": "play", "card": "5H"}}', "bad_message"),
    ('{"type": "ping", "extra": 1}', "bad_message"),
]


async def test_malformed_frames_json(server, redis_prefix):
    room, players = await started_room(server)
    c = players[0]
    try:
        before = stored(redis_prefix, room)
        for frame, code in BAD_JSON_FRAMES:
            fut = c.next_frame(lambda f: f["type"] == "error")
            await c.send_raw(frame)
            err = await fut
            assert err["code"] == code, (frame, err)
        # a binary frame on a JSON connection
        fut = c.next_frame(lambda f: f["type"] == "error")
        await c.send_raw(b"\x81\xa4type\xa4ping")
        assert (await fut)["code"] == "bad_frame"
        # too large (over max_frame_bytes, under the transport limit)
        fut = c.next_frame(lambda f: f["type"] == "error")
        await c.send_raw(json.dumps({"type": "ping", "nonce": "x" * 20000}))
        assert (await fut)["code"] == "frame_too_large"
        # an act whose action does not validate is rejected by id
        for action in ({"type": "play", "card": 123}, {"type": "fly"}, {"type": "play"},
                       {"type": "discard", "cards": ["5H"] * 10}):
            r = await c.act(action)
            assert (r["type"], r["code"]) == ("reject", "bad_action"), action
        assert stored(redis_prefix, room) == before
        assert (await c.ping("still here"))["nonce"] == "still here"
        assert not c.problems
    finally:
        for p in players:
            await p.close()


async def test_malformed_frames_msgpack(server, redis_prefix):
    room, players = await started_room(server, encoding="msgpack")
    c = players[0]
    try:
        before = stored(redis_prefix, room)
        for frame, code in [
            (b"\xc1", "bad_frame"),
            (b"\x93\x01\x02\x03", "bad_frame"),
            (msgpack.packb({"type": "ping"}) + b"junk", "bad_frame"),
            (msgpack.packb({1: 2}), "bad_frame"),
            (msgpack.packb({"type": "nope"}), "bad_message"),
            (msgpack.packb({"type": "join", "room": "abcdef", "seat": "x"}), "bad_message"),
            ("text on a msgpack connection", "bad_frame"),
            (msgpack.packb({"type": "ping", "nonce": "y" * 20000}), "frame_too_large"),
        ]:
            fut = c.next_frame(lambda f: f["type"] == "error")
            await c.send_raw(frame)
            err = await fut
            assert err["code"] == code, (frame[:20], err)
        assert stored(redis_prefix, room) == before
        assert (await c.ping(7))["nonce"] == 7
    finally:
        for p in players:
            await p.close()


async def test_hello_required_and_once(server):
    c = await Client.connect(server.ws, hello=False)
    try:
        fut = c.next_frame(lambda f: f["type"] == "error")
        await c.send({"type": "join", "room": "abcdef", "seat": 0})
        assert (await fut)["code"] == "hello_required"
        await c.request({"type": "hello", "name": "x"}, lambda f: f["type"] == "welcome")
        fut = c.next_frame(lambda f: f["type"] == "error")
        await c.send({"type": "hello", "name": "y"})
        assert (await fut)["code"] == "already_welcomed"
    finally:
        await c.close()


async def test_huge_frame_closes_only_that_connection(server):
    room, players = await started_room(server)
    c = await Client.connect(server.ws)
    try:
        # Over the transport limit: closed (1009). The server may close (even reset) the
        # socket before the client has written the whole frame: the send may fail then.
        with contextlib.suppress(websockets.exceptions.ConnectionClosed, OSError):
            await c.send_raw("x" * (2 << 20))
        await asyncio.wait_for(c.closed.wait(), 5)
        assert (await players[0].ping(1))["type"] == "pong"
    finally:
        for p in players + [c]:
            await p.close()


async def test_unknown_subprotocol_refused(server):
    with pytest.raises(websockets.exceptions.InvalidStatus):
        await websockets.connect(server.ws, subprotocols=["chat.v2"])


async def test_retried_action_id_applied_once(server, redis_prefix):
    room, players = await started_room(server)
    a, b = players
    try:
        cards = a.view["hand"][:2]
        first = await a.act({"type": "discard", "cards": cards}, action_id="discard-1")
        assert first["type"] == "ack" and not first["duplicate"]
        after = stored(redis_prefix, room)
        again = await a.act({"type": "discard", "cards": cards}, action_id="discard-1")
        assert again == {**first, "duplicate": True}
        # the same id with another action is refused, and changes nothing
        other = await a.act({"type": "discard", "cards": a.view["hand"][:2]},
                            action_id="discard-1")
        assert other["type"] == "reject" and other["code"] == "action_id_reused"
        assert stored(redis_prefix, room) == after
        # after a reconnect (a client that lost the ack), the answer is the same
        token = a.seat_token
        await a.close()
        a2 = await Client.connect(server.ws, name="a", token=token)
        players[0] = a2
        await a2.join(room, 0)
        resent = await a2.act({"type": "discard", "cards": cards}, action_id="discard-1")
        assert resent["version"] == first["version"] and resent["duplicate"]
        # Concurrent duplicates from two connections of one seat: applied once.
        a3 = await Client.connect(server.ws, name="b", token=b.seat_token)
        players.append(a3)
        await a3.join(room, 1)
        act = {"type": "discard", "cards": b.view["hand"][:2]}
        r1, r2 = await asyncio.gather(b.act(act, action_id="d2"), a3.act(act, action_id="d2"))
        assert {r1["type"], r2["type"]} == {"ack"}
        assert r1["version"] == r2["version"]
        assert sorted([r1["duplicate"], r2["duplicate"]]) == [False, True]
        await b.wait_until(lambda c: c.version >= r1["version"])
        assert len([e for e in events_of(b, "discard") if e["seat"] == 1]) == 1
        assert len([e for e in events_of(b, "discard") if e["seat"] == 0]) == 1
    finally:
        for p in players:
            await p.close()
