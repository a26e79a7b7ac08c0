"""Every frame a client sends gets an answer that can be encoded, or a documented close
(issue 10, "Every error reply is encodable"); frame limits count bytes.

* A hypothesis property over the codec and the answer builder (``server.frames``), for
  JSON text frames (with ``\\udfff``-style escapes that decode to lone surrogates) and
  msgpack binary frames: decoding either yields a client message or a ``ProtocolError``
  whose answer encodes under both encodings and validates as a server message.
* The same property against a real server: arbitrary frames on real connections, each
  followed by a ``ping``; everything before the ``pong`` decodes as a server message and at
  least one answer comes, or the connection is closed with a documented code.
* Probes with lone surrogates in ``type``, ``action_id``, ``name``, extra keys: an
  ``error`` (or ``reject``) comes back, not a silent close.
* A frame of € signs under ``max_frame_bytes`` characters but over it in bytes is
  ``frame_too_large`` (text and msgpack).
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from protocol.codec import (
    MSGPACK_SUBPROTOCOL,
    ProtocolError,
    decode_client,
    decode_server,
    encode,
)
from server import frames

CLIENT_TYPES = ["hello", "create_room", "join", "act", "resync", "leave", "ping",
                "set_computer", "hint", "history"]
KEYS = ["type", "action_id", "action", "name", "token", "room", "seat", "nonce", "since",
        "level", "creator_token", "options", "computers", "client", "before", "limit",
        "public", "card", "cards"]
DOCUMENTED_CLOSES = {1008, 1009}
"""Closes the protocol documents for a misbehaving client (policy, too big)."""

any_text = st.text(st.characters(codec=None, categories=None), max_size=12)
"""Text with anything in it: lone surrogates, controls, format characters, astral."""
surrogate_text = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
texts = any_text | surrogate_text | st.sampled_from(CLIENT_TYPES)
scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False) | texts)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS) | texts, inner, max_size=3),
    max_leaves=6,
)
fields = st.dictionaries(st.sampled_from(KEYS[1:]) | texts, values, max_size=3)
messages = st.one_of(
    st.builds(lambda kind, rest: {**rest, "type": kind},
              st.sampled_from(CLIENT_TYPES) | texts, fields),
    st.builds(lambda aid, kind, rest: {"type": "act", "action_id": aid,
                                       "action": {**rest, "type": kind}},
              texts, texts | values, fields),
    values,
)
"""Plain data shaped like client messages, and anything else."""


def json_frame(value: Any) -> str:
    """A JSON text frame as a client could send it: lone surrogates as escapes (a text
    frame must be UTF-8, so ``ensure_ascii`` writes them as ``\\udxxx``)."""
    return json.dumps(value, ensure_ascii=True)


def msgpack_frame(value: Any) -> bytes:
    """A msgpack frame; strings msgpack cannot carry (lone surrogates) are sent as bytes,
    so the frame holds invalid UTF-8 where the JSON frame held an escape."""

    def fix(v: Any) -> Any:
        if isinstance(v, str):
            try:
                v.encode("utf-8")
                return v
            except UnicodeEncodeError:
                return v.encode("utf-8", "surrogatepass")
        if isinstance(v, dict):
            return {fix(k): fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, int) and not -(2**63) <= v < 2**64:
            return float(v)
        return v

    return msgpack.packb(fix(value), use_bin_type=False)


json_frames = messages.map(json_frame) | st.text(max_size=40) | st.binary(max_size=20)
msgpack_frames = (messages.map(msgpack_frame) | st.binary(max_size=40)
                  | st.text(max_size=20))


def assert_answer_encodes(answer: dict[str, Any]) -> None:
    """The answer encodes under both encodings (JSON as valid UTF-8) and decodes back as
    a server message."""
    text = encode(answer, "json")
    assert isinstance(text, str)
    text.encode("utf-8")  # a text frame must be UTF-8: no lone surrogate
    decode_server(text, "json")
    packed = encode(answer, "msgpack")
    decode_server(packed, "msgpack")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=json_frames)
def test_every_json_frame_is_answered_encodably(frame: str | bytes) -> None:
    try:
        decode_client(frame, "json")
    except ProtocolError as exc:
        assert exc.code in {"bad_frame", "bad_message", "bad_name", "bad_options",
                            "frame_too_large"}
        assert_answer_encodes(frames.protocol_error(exc))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=msgpack_frames)
def test_every_msgpack_frame_is_answered_encodably(frame: str | bytes) -> None:
    try:
        decode_client(frame, "msgpack")
    except ProtocolError as exc:
        assert exc.code in {"bad_frame", "bad_message", "bad_name", "bad_options",
                            "frame_too_large"}
        assert_answer_encodes(frames.protocol_error(exc))


def test_encode_replaces_lone_surrogates() -> None:
    """The last line of defence: whatever reaches ``encode`` leaves as valid UTF-8."""
    frame = {"type": "error", "code": "bad_message", "message": "x\udfffy", "ref": "\ud800"}
    text = encode(frame, "json")
    assert json.loads(text)["message"] == "x\ufffdy"
    assert msgpack.unpackb(encode(frame, "msgpack"))["ref"] == "\ufffd"


# -- against a real server ------------------------------------------------------------------


class Probe:
    """A real connection that sends one frame, then a ``ping``, and collects what comes
    back up to the ``pong``; reconnects after a documented close."""

    def __init__(self, url: str, encoding: str) -> None:
        self.url = url
        self.encoding = encoding
        self.nonce = 0
        self.ws: ClientConnection | None = None

    def open(self) -> ClientConnection:
        if self.ws is None:
            subprotocols = [MSGPACK_SUBPROTOCOL] if self.encoding == "msgpack" else None
            self.ws = connect(self.url, subprotocols=subprotocols, open_timeout=5).__enter__()
            self.send_plain({"type": "hello", "name": "Probe"})
            assert self.recv()["type"] == "welcome"
        return self.ws

    def send_plain(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        self.ws.send(encode(message, self.encoding))

    def recv(self) -> dict[str, Any]:
        assert self.ws is not None
        frame = self.ws.recv(timeout=5)
        return decode_server(frame, self.encoding).model_dump(mode="json")

    def exchange(self, frame: str | bytes) -> list[dict[str, Any]] | int:
        """Send ``frame`` and a ping: the frames answered before the pong, or the close
        code when the server closed the connection."""
        ws = self.open()
        self.nonce += 1
        try:
            ws.send(frame)
            self.send_plain({"type": "ping", "nonce": self.nonce})
            got = []
            while True:
                message = self.recv()
                if message["type"] == "pong" and message["nonce"] == self.nonce:
                    return got
                if message["type"] == "error" and message["code"] == "rate_limited":
                    # a limit on how fast one connection may send (issue 10, part A):
                    # an answer too; the ping may be refused the same way, so ask again
                    got.append(message)
                    self.nonce += 1
                    ws.send(encode({"type": "ping", "nonce": self.nonce}, self.encoding))
                    continue
                got.append(message)
        except ConnectionClosed as exc:
            self.ws = None
            return exc.rcvd.code if exc.rcvd is not None else 1006

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


def check_answered(probe: Probe, frame: str | bytes) -> None:
    outcome = probe.exchange(frame)
    if isinstance(outcome, int):
        assert outcome in DOCUMENTED_CLOSES, f"closed with {outcome} after {frame!r}"
        return
    if isinstance(frame, str) and probe.encoding == "json":
        try:
            data = json.loads(frame)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("type") in ("set_computer", "ping"):
            return  # a valid set_computer is answered by the room's update; a ping by a pong
    assert outcome, f"no answer to {frame!r}"


@pytest.fixture
def memory_server(make_server):
    return make_server(redis=False)


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_arbitrary_frames_to_a_real_server(memory_server, encoding: str) -> None:
    probe = Probe(memory_server.ws, encoding)
    strategy = json_frames if encoding == "json" else msgpack_frames

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(frame=strategy)
    def run(frame: str | bytes) -> None:
        check_answered(probe, frame)

    try:
        run()
    finally:
        probe.close()


SURROGATE_PROBES = [
    '{"type": "\\udfff"}',
    '{"type": "\\ud800\\udc00\\ud800"}',
    '{"type": "act", "action_id": "\\udfff", "action": {"type": "go"}}',
    '{"type": "act", "action_id": "a\\udfffb", "action": {"type": "go", "\\udfff": 1}}',
    '{"type": "act", "action_id": "c1", "action": {"type": "\\udfff"}}',
    '{"type": "join", "room": "\\udfff"}',
    '{"type": "ping", "nonce": "\\udfff"}',
    '{"type": "history", "\\udfff": true}',
    '{"\\udfff": "\\udfff"}',
    '{"type": "hello", "name": "\\udfff"}',
]


@pytest.mark.parametrize("hello_first", [True, False])
def test_lone_surrogates_get_an_error_not_a_silent_close(memory_server, hello_first) -> None:
    """Each probe is sent as raw text with escaped surrogates (what a hostile client can
    put in a UTF-8 text frame) and answered with an error or reject that names nothing
    unencodable; the connection stays open."""
    with connect(memory_server.ws, open_timeout=5) as ws:
        if hello_first:
            ws.send('{"type": "hello", "name": "Probe"}')
            assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
        for raw in SURROGATE_PROBES:
            ws.send(raw)
            answer = json.loads(ws.recv(timeout=5))
            decode_server(json.dumps(answer), "json")
            if '"ping"' in raw:
                # a nonce is at most 64 characters of text: the surrogate is refused
                assert answer["type"] == "error" and answer["code"] == "bad_message"
                continue
            assert answer["type"] in ("error", "reject"), (raw, answer)
            if answer["type"] == "error":
                assert answer["code"] in ("bad_message", "bad_name", "hello_required"), answer
                assert answer["ref"] is None or "\ufffd" not in answer["ref"]
            else:
                assert answer["action_id"] == "c1" and answer["code"] == "bad_action"
            if '"hello"' in raw:
                assert answer["code"] == "bad_name", answer
        ws.send('{"type": "ping", "nonce": 1}')
        assert json.loads(ws.recv(timeout=5))["type"] == "pong"


# -- frame limits in bytes -------------------------------------------------------------------


def euro_frame(encoding: str) -> str | bytes:
    """A hello whose name is 16,000 € signs: 16,026 characters, 48,026 bytes."""
    message = {"type": "hello", "name": "€" * 16000}
    if encoding == "json":
        frame = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        assert len(frame) == 16026 < 16384 < len(frame.encode()) == 48026
        return frame
    return msgpack.packb(message, use_bin_type=True)


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_frame_limit_counts_bytes(memory_server, encoding: str) -> None:
    """16,384 bytes by default: 16,026 characters of € signs are 48,022 bytes, too large
    (before, the limit counted characters and the frame got ``bad_message``)."""
    probe = Probe(memory_server.ws, encoding)
    try:
        outcome = probe.exchange(euro_frame(encoding))
        assert isinstance(outcome, list) and outcome[0]["type"] == "error", outcome
        assert outcome[0]["code"] == "frame_too_large"
        # a frame within the limit in bytes is decoded (and refused for what it is: a name
        # longer than 32 characters)
        name = "€" * 5000  # 15,000 bytes
        message = {"type": "hello", "name": name}
        frame = (json.dumps(message, ensure_ascii=False) if encoding == "json"
                 else msgpack.packb(message, use_bin_type=True))
        outcome = probe.exchange(frame)
        assert isinstance(outcome, list) and outcome[0]["code"] == "bad_name", outcome
    finally:
        probe.close()


def test_frame_bytes_unit() -> None:
    from protocol.codec import frame_bytes

    assert frame_bytes("€" * 10) == 30
    assert frame_bytes("€" * 10, limit=20) == 30  # near the limit: measured exactly
    assert frame_bytes("a" * 10, limit=40) == 10
    assert frame_bytes("€" * 100, limit=40) > 40
    assert frame_bytes(b"\xe2\x82\xac") == 3
    with pytest.raises(ProtocolError) as err:
        decode_client("€" * 6000, "json", max_bytes=16384)
    assert err.value.code == "frame_too_large"


# -- a wrong shape in every field (issue 17) --------------------------------------------------
#
# An outside fuzzer found that an ``act`` whose ``action.type`` was a list crashed the
# session (``TypeError: unhashable type: 'list'`` in the codec, close 1011). The property
# below puts a value of the wrong shape — a list, a map, a number, a boolean, null, a huge
# integer, something nested — in each field of a valid message of every type, and asserts
# that a real server answers it with exactly the documented code and keeps the connection.

TEMPLATES: dict[str, dict[str, Any]] = {
    "hello": {"type": "hello", "name": "Probe", "token": "A" * 32, "client": "fuzz"},
    "create_room": {
        "type": "create_room",
        "options": {"players": 2, "partnerships": False, "target": 61, "muggins": False,
                    "lowball": False, "backup10": False},
        "computers": {"1": "standard"},
        "room": {"hints": True, "answer_window": 15.0, "takeover_grace": 60.0,
                 "turn_seconds": 30.0, "match": 3},
        "request_id": "fuzz-request-000000001",
    },
    "set_computer": {"type": "set_computer", "seat": 1, "level": "easy",
                     "creator_token": "A" * 32, "room": "abcdefgh"},
    "hint": {"type": "hint"},
    "history": {"type": "history", "before": 5, "limit": 10, "public": False},
    "join": {"type": "join", "room": "abcdefgh", "seat": 0, "token": "A" * 32, "since": 1},
    "act_play": {"type": "act", "action_id": "f-1", "action": {"type": "play", "card": "5H"}},
    "act_discard": {"type": "act", "action_id": "f-2",
                    "action": {"type": "discard", "cards": ["5H", "TD"]}},
    "act_announce": {"type": "act", "action_id": "f-3",
                     "action": {"type": "announce", "points": 4}},
    "act_answer": {"type": "act", "action_id": "f-4",
                   "action": {"type": "answer", "call": "accept", "ref": 3}},
    "resync": {"type": "resync", "since": 2},
    "leave": {"type": "leave"},
    "ping": {"type": "ping", "nonce": 9},
}
"""A valid message of every client type (and of every action shape), each field set."""

Path = tuple[Any, ...]


def leaves(value: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every field of a template at any depth, with its value (maps and lists included:
    a list or map where a map is expected is a wrong shape too)."""
    found: list[tuple[Path, Any]] = [(path, value)] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += leaves(v, (*path, i))
    return found


NULLABLE = {("seat",), ("token",), ("since",), ("before",), ("nonce",), ("client",),
            ("request_id",),
            ("room",), ("action", "ref"), ("room", "answer_window"),
            ("room", "takeover_grace"), ("room", "turn_seconds"), ("room", "match"),
            ("room", "hints")}
"""Fields where null is valid (for ``set_computer`` and ``join``, ``room`` is text: null is
allowed only for ``set_computer``; see :func:`null_is_valid`)."""


def null_is_valid(kind: str, path: Path) -> bool:
    if path == ("room",):
        return kind == "set_computer"
    return path in NULLABLE and not (kind == "create_room" and path == ("room",))


FIELDS = [(name, path, value) for name, template in TEMPLATES.items()
          for path, value in leaves(template)]

huge_ints = st.integers(2**63, 2**200) | st.integers(-(2**200), -(2**63) - 1)
card_texts = st.sampled_from(["KC", "TD", "5H", "AS"])
nested = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | card_texts,
    lambda inner: st.lists(inner, min_size=1, max_size=3)
    | st.dictionaries(st.sampled_from(["type", "card", "x"]), inner, min_size=1, max_size=2),
    max_leaves=5,
)
SHAPES: dict[str, st.SearchStrategy[Any]] = {
    "list": st.lists(card_texts | st.integers(0, 3), max_size=3),
    "map": st.dictionaries(st.sampled_from(["type", "card", "0", "x"]),
                           card_texts | st.integers(0, 3), max_size=2),
    "nested": nested.filter(lambda v: isinstance(v, list | dict)),
    "int": st.integers(-5, 5) | huge_ints,
    "float": st.floats(allow_nan=False, allow_infinity=False) | st.just(1e300),
    "bool": st.booleans(),
    "null": st.none(),
    "text": st.sampled_from(["", "x", "5H", "standard", "0", "true"]),
}


def wrong_shapes(kind: str, path: Path, value: Any) -> st.SearchStrategy[Any]:
    """Values of another shape than ``value`` (what the field expects), none of them valid
    there."""
    names = ["list", "map", "nested", "int", "float", "bool", "null", "text"]
    if isinstance(value, bool):
        names.remove("bool")
    elif isinstance(value, int):
        names.remove("int")
        names.append("huge")  # a whole number, but out of any range the protocol takes
    elif isinstance(value, float):
        names.remove("float")
        names.remove("int")
        names.append("huge")
    elif isinstance(value, str):
        names.remove("text")
    elif isinstance(value, dict):
        names.remove("map")
    elif isinstance(value, list):
        names.remove("list")
    if null_is_valid(kind, path) or value is None:
        names.remove("null")
    if path == ("nonce",):
        # Only too long a text: a nonce is a 64-bit integer or up to 64 characters (so ""
        # or "x" is a good nonce, not a wrong shape).
        if "text" in names:
            names.remove("text")
        names.append("text")
    strategies = [huge_ints if n == "huge" else SHAPES[n] for n in names]
    if path == ("nonce",):
        strategies[-1] = st.text(min_size=65, max_size=70)
    return st.one_of(strategies).filter(lambda v: type(v) is not type(value))


@st.composite
def misshapen(draw: Any) -> tuple[str, Path, dict[str, Any]]:
    """(template name, the path changed, the message with one field of the wrong shape)."""
    import copy

    name, path, value = draw(st.sampled_from(FIELDS))
    message = copy.deepcopy(TEMPLATES[name])
    target = message
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(wrong_shapes(message["type"], path, value))
    return name, path, message


def expected_answer(message: dict[str, Any], path: Path) -> tuple[str, str]:
    """(frame type, code) the protocol documents for this message with ``path`` wrong
    (docs/protocol.md "Error codes", "Fine points": a malformed ``act``)."""
    kind = message["type"]
    if path == ("type",):
        return "error", "bad_message"
    if kind == "act":
        return ("error", "bad_message") if path == ("action_id",) else ("reject", "bad_action")
    if kind == "create_room" and len(path) >= 2:
        return "error", "bad_options"  # a value inside options, computers or room
    if kind == "set_computer" and path == ("level",):
        return "error", "bad_options"
    return "error", "bad_message"


def seated_probe(url: str, encoding: str) -> Probe:
    """A probe that said hello and sits at a game in progress against the computer (so a
    frame that got past the codec would meet a room, a seat and the engine)."""
    probe = Probe(url, encoding)
    probe.open()
    probe.send_plain({"type": "create_room", "options": {"players": 2, "target": 61},
                      "computers": {"1": "standard"}})
    created = probe.recv()
    assert created["type"] == "room_created", created
    probe.send_plain({"type": "join", "room": created["room"], "seat": 0})
    while (frame := probe.recv())["type"] != "snapshot":
        pass
    assert frame["status"] == "playing" and frame["seat"] == 0
    return probe


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_wrong_shape_in_any_field_gets_its_code(make_server, encoding: str) -> None:
    """Every field of every client message (and of every action), given a list, a map, a
    number, a boolean, null, a huge integer or a nested value where it expects something
    else, is answered by exactly one ``error`` or ``reject`` with the documented code (and
    the ``act``'s ``action_id``), before the next frame's answer; the connection stays
    open throughout (a close would end the run: the probe does not reconnect)."""
    server = make_server(redis=False, frame_rate=0, wire_frame_rate=0, wire_bytes_rate=0)
    probe = seated_probe(server.ws, encoding)
    seen: set[tuple[str, Path]] = set()

    @settings(max_examples=300, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=misshapen())
    def run(case: tuple[str, Path, dict[str, Any]]) -> None:
        name, path, message = case
        seen.add((name, path))
        frame = json_frame(message) if encoding == "json" else msgpack_frame(message)
        outcome = probe.exchange(frame)
        assert not isinstance(outcome, int), f"closed with {outcome} after {message!r}"
        answers = [f for f in outcome if f["type"] in ("error", "reject")]
        others = [f for f in outcome if f["type"] not in ("update", "presence")]
        assert len(answers) == 1 and others == answers, (message, outcome)
        [answer] = answers
        assert (answer["type"], answer["code"]) == expected_answer(message, path), (
            message, answer)
        if answer["type"] == "reject":
            assert answer["action_id"] == message["action_id"]
        else:
            ref = message["type"] if path != ("type",) else None
            assert answer["ref"] == ref, (message, answer)

    try:
        run()
        # and the session still plays: the seat can act
        probe.send_plain({"type": "resync"})
        while (frame := probe.recv())["type"] != "snapshot":
            pass
        assert frame["view"]["legal"], frame
    finally:
        probe.close()
    assert len(seen) > len(FIELDS) // 2  # the run reached most fields
