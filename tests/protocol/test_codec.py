"""Codecs: every message round-trips in both encodings; bad input gets stable codes."""

from __future__ import annotations

import json

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.codec import (
    JSON_SUBPROTOCOL,
    MSGPACK_SUBPROTOCOL,
    ProtocolError,
    decode_client,
    decode_server,
    encode,
    encoding_for_subprotocol,
    validate_client,
)
from protocol.messages import CLIENT_ADAPTER, CLIENT_TYPES, SERVER_ADAPTER

CLIENT_EXAMPLES = [
    {"type": "hello", "name": "Ann"},
    {"type": "hello", "name": "Ann", "token": "Qm9vbGVhbl9hbmRfc3R1ZmY"},
    {"type": "create_room", "options": {"players": 4, "partnerships": True, "muggins": True}},
    {"type": "join", "room": "k3JfQ9xa2B", "seat": 1},
    {"type": "join", "room": "k3JfQ9xa2B", "seat": None},
    {"type": "act", "action_id": "a-1", "action": {"type": "discard", "cards": ["5H", "TD"]}},
    {"type": "act", "action_id": "a-2", "action": {"type": "play", "card": "5H"}},
    {"type": "act", "action_id": "a-3", "action": {"type": "announce", "points": 12}},
    {"type": "act", "action_id": "a-4", "action": {"type": "answer", "call": "muggins"}},
    {"type": "act", "action_id": "a-5", "action": {"type": "rematch"}},
    {"type": "resync"},
    {"type": "leave"},
    {"type": "ping", "nonce": 7},
    {"type": "ping", "nonce": "abc"},
    {"type": "create_room", "options": {"players": 3}, "computers": {"1": "easy", "2": "standard"},
     "room": {"hints": False, "answer_window": 10, "takeover_grace": 30}},
    {"type": "act", "action_id": "a-6", "action": {"type": "answer", "call": "accept", "ref": 31}},
    {"type": "set_computer", "seat": 2, "level": "standard",
     "creator_token": "Qm9vbGVhbl9hbmRfc3R1ZmY"},
    {"type": "hint"},
    {"type": "history"},
    {"type": "history", "before": 40, "limit": 20, "public": True},
    {"type": "challenge", "to": "b7kq2m4xw5zt3ra6", "options": {"players": 2},
     "room": {"rated": True}, "request_id": "r" * 16},
    {"type": "challenge_answer", "id": "m4xq7zt5wq2ra6d3", "answer": "decline"},
    {"type": "resync", "since": 12},
    {"type": "join", "room": "k3JfQ9xa2B", "seat": 1, "since": 30},
    {"type": "lobby_subscribe"},
    {"type": "lobby_subscribe", "players": 2, "language": "da", "rated": False},
    {"type": "lobby_unsubscribe"},
    {"type": "hello", "name": "Ann", "language": "sv"},
    {"type": "create_room", "room": {"public": True, "language": "da"}},
    {"type": "queue_join", "table": {"players": 4, "partnerships": True, "rated": True}},
    {"type": "queue_join"},
    {"type": "queue_leave"},
    {"type": "queue_accept_computer"},
    {"type": "chat", "preset": "good_game"},
    {"type": "chat", "text": "Godt spil! 👍"},
    {"type": "chat_mute", "message": 3, "block": True},
    {"type": "chat_unmute", "player": "q3zq6v2fkm4xw7ra"},
    {"type": "chat_report", "message": 3, "reason": "spam", "note": "links"},
]

SERVER_EXAMPLES = [
    {"type": "welcome", "protocol": "cribbage.v1", "encoding": "json",
     "player_token": "Qm9vbGVhbl9hbmRfc3R1ZmY", "name": "Ann", "server": "x",
     "max_frame_bytes": 16384},
    {"type": "update", "room": "k3JfQ9xa2B", "version": 4, "status": "playing",
     "events": [{"type": "play", "seat": 0, "card": "5H", "count": 5, "pile": []}],
     "patch": [{"op": "replace", "path": "/count", "value": 5}], "seats": None},
    {"type": "ack", "action_id": "a-1", "version": 4, "duplicate": False},
    {"type": "reject", "action_id": "a-1", "code": "not_your_turn", "message": "..."},
    {"type": "error", "code": "bad_frame", "message": "...", "ref": None},
    {"type": "pong", "nonce": 7, "time": 1.5},
    {"type": "queue_status", "queue": "2-121-r-m1", "waiting": 3, "waited": 4.5,
     "computer_offer": False, "table": {"players": 2, "partnerships": False, "target": 121,
                                        "muggins": False, "lowball": False,
                                        "backup10": False, "match": 1, "rated": True}},
    {"type": "queue_left", "queue": "2-121-r-m1", "reason": "cancelled"},
    {"type": "matched", "queue": "2-121-u-m1", "room": "k3JfQ9xa2B", "seat": 1,
     "seat_token": "Qm9vbGVhbl9hbmRfc3R1ZmY", "url": "http://h/r/k3JfQ9xa2B",
     "match": "0123456789abcdef", "players": ["Ann", "Bob"], "computer": False,
     "table": {"players": 2}},
    {"type": "pong", "nonce": 8, "time": 1.5, "room": "k3JfQ9xa2B", "version": 12},
    {"type": "history", "room": "k3JfQ9xa2B", "game": 1, "first": 2, "more": False,
     "public": True, "versions": [{"version": 2, "events": [
         {"type": "seat_taken", "seat": 1, "name": "Bob"}]}]},
    {"type": "presence", "room": "k3JfQ9xa2B", "seat": 1, "connected": False, "name": "Bob",
     "computer_standin": True},
    {"type": "challenge_accepted", "room": "k3JfQ9xa2B", "seat": 1, "challenge": {
        "id": "m4xq7zt5wq2ra6d3", "challenger": {"id": "q3zq6v2fkm4xw7ra", "name": "Anna"},
        "challenged": {"id": "b7kq2m4xw5zt3ra6", "name": None}, "options": {"players": 2},
        "room": {}, "created": 1.0, "expires": 61.0, "status": "accepted",
        "room_id": "k3JfQ9xa2B", "answered": 5.0}},
    {"type": "hint", "room": "k3JfQ9xa2B", "seat": 0, "version": 7,
     "suggestion": {"kind": "play", "goal": "most", "choices": [],
                    "best": {"type": "play", "card": "5H"}}},
    {"type": "lobby", "tables": [{
        "room": "k3JfQ9xa2B", "url": "/r/k3JfQ9xa2B",
        "options": {"players": 2, "partnerships": False, "target": 121, "muggins": False,
                    "lowball": False, "backup10": False},
        "rated": False, "match": 1, "language": "da", "table_kind": "2",
        "seats": [{"seat": 0, "kind": "human", "name": "Ann", "player": "abcdefghijklmnop",
                   "rating": 1012, "level": None},
                  {"seat": 1, "kind": "open", "name": None, "player": None, "rating": None,
                   "level": None}],
        "seats_free": 1, "version": 1, "created": 1764680000.0}]},
    {"type": "lobby_update", "added": [], "changed": [], "removed": ["k3JfQ9xa2B"]},
    {"type": "chat", "room": "k3JfQ9xa2B", "message": {
        "id": 3, "at": 1764680000000, "name": "Åse", "seat": None, "player": None,
        "audience": "spectators", "preset": None, "text": "Bra spelat", "game": 1}},
    {"type": "chat_hidden", "room": "k3JfQ9xa2B", "id": 3},
    {"type": "chat_muted", "player": "q3zq6v2fkm4xw7ra", "name": "Bo", "muted": True,
     "blocked": False},
    {"type": "chat_reported", "message": 3, "report": "r1"},
]


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=lambda m: m["type"])
def test_client_round_trip(message, encoding):
    model = decode_client(encode(message, encoding), encoding)
    assert model.type == message["type"]
    again = decode_client(encode(model, encoding), encoding)
    assert again == model


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=lambda m: m["type"])
def test_server_round_trip(message, encoding):
    frame = encode(message, encoding)
    assert isinstance(frame, str if encoding == "json" else bytes)
    model = decode_server(frame, encoding)
    assert model.model_dump(mode="json") == SERVER_ADAPTER.validate_python(message).model_dump(
        mode="json"
    )


def test_every_client_type_has_an_example():
    assert {m["type"] for m in CLIENT_EXAMPLES} == CLIENT_TYPES


def test_subprotocols():
    assert encoding_for_subprotocol(JSON_SUBPROTOCOL) == "json"
    assert encoding_for_subprotocol(MSGPACK_SUBPROTOCOL) == "msgpack"
    assert encoding_for_subprotocol(None) == "json"


@pytest.mark.parametrize(
    "frame,encoding,code",
    [
        ("nope", "json", "bad_frame"),
        (b"{}", "json", "bad_frame"),
        ("[]", "json", "bad_frame"),
        ("{}", "json", "bad_message"),
        ('{"type": "hello"}', "json", "bad_message"),
        ('{"type": "hello", "name": "a", "token": "short"}', "json", "bad_message"),
        ('{"type": "act", "action_id": "has space", "action": {"type": "rematch"}}', "json",
         "bad_message"),
        ("{}", "msgpack", "bad_frame"),
        (b"\xc1", "msgpack", "bad_frame"),
        (msgpack.packb([1]), "msgpack", "bad_frame"),
        (msgpack.packb({"type": "leave", "x": 1}), "msgpack", "bad_message"),
        ("x" * 20000, "json", "frame_too_large"),
    ],
)
def test_bad_frames(frame, encoding, code):
    with pytest.raises(ProtocolError) as err:
        decode_client(frame, encoding)
    assert err.value.code == code


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=20,
))
def test_arbitrary_data_never_escapes_protocol_error(value):
    for encoding, frame in (("json", json.dumps(value)), ("msgpack", msgpack.packb(value))):
        try:
            model = decode_client(frame, encoding)
        except ProtocolError as exc:
            assert exc.code in ("bad_frame", "bad_message")
        else:
            assert CLIENT_ADAPTER.validate_python(model.model_dump()) == model


@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_escape_protocol_error(data):
    for encoding, frame in (("msgpack", data), ("json", data.decode("latin-1"))):
        try:
            decode_client(frame, encoding)
        except ProtocolError as exc:
            assert exc.code in ("bad_frame", "bad_message")


@pytest.mark.parametrize(
    "data,code,reject_code",
    [
        ({"type": "create_room", "options": {"target": 100}}, "bad_options", None),
        ({"type": "create_room", "computers": {"1": "genius", "7": "easy"}}, "bad_options", None),
        ({"type": "create_room", "room": {"turn_seconds": 0, "nope": 1}}, "bad_options", None),
        ({"type": "set_computer", "seat": 1, "level": "hard", "creator_token": "A" * 32},
         "bad_options", None),
        ({"type": "set_computer", "seat": 1, "level": 3, "creator_token": "A" * 32},
         "bad_options", None),
        ({"type": "create_room", "options": [61]}, "bad_message", None),
        ({"type": "create_room", "room": {"hints": True}, "extra": 1}, "bad_message", None),
        ({"type": "create_room", "options": {"target": 100}, "extra": 1}, "bad_message", None),
        ({"type": "set_computer", "level": "hard", "creator_token": "A" * 32}, "bad_message",
         None),
        ({"type": "join", "room": "abcdef", "seat": 9}, "bad_message", None),
        ({"type": "act", "action_id": "a", "action": {"type": "play", "card": "10H"}},
         "bad_message", "bad_card"),
        ({"type": "act", "action_id": "a", "action": {"type": "discard", "cards": ["5H", "x"]}},
         "bad_message", "bad_card"),
        ({"type": "act", "action_id": "a", "action": {"type": "discard", "cards": ["5H", 5]}},
         "bad_message", "bad_action"),
        ({"type": "act", "action_id": "a", "action": {"type": "answer_timeout"}},
         "bad_message", "system_only"),
        ({"type": "act", "action_id": "a", "action": {"type": "forfeit", "sides": [1]}},
         "bad_message", "system_only"),
        ({"type": "act", "action_id": "a", "action": {"type": "fly"}}, "bad_message",
         "bad_action"),
        # a list or a map where the action's type is expected (an outside fuzzer's find:
        # it raised TypeError, unhashable, and the session closed with 1011)
        ({"type": "act", "action_id": "a", "action": {"type": ["KC", "TD"]}}, "bad_message",
         "bad_action"),
        ({"type": "act", "action_id": "a", "action": {"type": {"answer_timeout": 1}}},
         "bad_message", "bad_action"),
        ({"type": "act", "action_id": "a b", "action": {"type": "play", "card": "ZZ"}},
         "bad_message", "bad_action"),
    ],
)
def test_what_kind_of_fault(data, code, reject_code):
    """Option values are ``bad_options``, shapes ``bad_message``; an act says which reject
    it gets (docs/protocol.md, "Error codes" and "Fine points")."""
    with pytest.raises(ProtocolError) as err:
        validate_client(data)
    assert err.value.code == code
    assert "pydantic" not in err.value.message and "\n" not in err.value.message
    if reject_code is not None:
        assert err.value.reject_code == reject_code


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("kind", [[1, 2], {"a": 1}, [], {}])
def test_a_type_that_is_not_text_is_bad_message(encoding, kind) -> None:
    """A ``type`` that is a list or a map (unhashable) is a frame like any other bad one:
    ``bad_message`` with no ``ref`` (found by the hypothesis property over a real server)."""
    frame = json.dumps({"type": kind, "options": {}}) if encoding == "json" else \
        msgpack.packb({"type": kind, "options": {}})
    with pytest.raises(ProtocolError) as caught:
        decode_client(frame, encoding, max_bytes=16384)
    assert caught.value.code == "bad_message" and caught.value.ref is None
