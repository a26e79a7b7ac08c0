"""Every frame builder of ``server/frames.py`` against its message model, and nothing built
elsewhere (issue 11, "the wire code's shape").

Two whole games (Muggins, Back-up 10, to 61) are played through the real room service
(in-memory store): two seats, random legal actions, the answer window's timeouts as the
sweeper applies them, a computer's stand-in for an absent player. Every
builder is called with what that game produced — records, views and redacted events for
each seat and a spectator, patches, the log's history, hints — and each frame is validated
in strict mode by ``protocol.messages.SERVER_ADAPTER``, after a trip through both
encodings, and against the committed JSON Schema. The optional parts are all exercised
(snapshot with and without ``missed``, ``history_from`` and ``seat_token``; update with
and without ``seats``; pong with and without ``room``/``version``; every error and reject
code).

A scan of ``server/`` then makes sure no module builds a server message itself.
"""

from __future__ import annotations

import ast
import inspect
import json
import random
import typing
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

import engine
from engine.computer import suggest
from protocol import codes
from protocol.codec import ProtocolError, decode_plain, encode
from protocol.messages import SERVER_ADAPTER, ServerMessage
from protocol.patch import diff
from protocol.schema import SCHEMA_PATH
from server import frames
from server.broker import MemoryBroker
from server.computer_seats import seat_knowledge
from server.lobby.entry import entry_of
from server.matchmaking.tables import Table
from server.rooms import RoomService
from server.settings import Settings
from server.store.base import RoomRecord, SeatRecord
from server.store.memory import MemoryStore
from server.views import VersionData, redact, seat_infos

ROOT = Path(__file__).resolve().parents[2]

SERVER_TYPES = frozenset(
    typing.get_args(m.model_fields["type"].annotation)[0]
    for m in typing.get_args(typing.get_args(ServerMessage)[0])
)
"""The ``type`` of every server message."""

BUILDERS = frozenset(
    name for name, fn in inspect.getmembers(frames, inspect.isfunction)
    if fn.__module__ == frames.__name__ and not name.startswith("_")
)


@cache
def schema_validator() -> jsonschema.protocols.Validator:
    document = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    root = {"$schema": document["$schema"], "$ref": "#/$defs/ServerMessage",
            "$defs": document["$defs"]}
    return jsonschema.validators.validator_for(root)(root)


class Built:
    """Calls builders, validates what they build and remembers what was covered."""

    def __init__(self) -> None:
        self.builders: Counter[str] = Counter()
        self.variants: set[tuple[str, frozenset[str]]] = set()
        self.count = 0
        self.events: set[str] = set()
        self.stand_ins: set[tuple[int, bool, bool]] = set()

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        frame = getattr(frames, name)(*args, **kwargs)
        model = SERVER_ADAPTER.validate_python(frame, strict=True)
        kinds = ("error", "reject") if name == "protocol_error" else (name,)
        assert model.type == frame["type"] and frame["type"] in kinds
        for encoding in ("json", "msgpack"):
            wire = decode_plain(encode(frame, encoding), encoding)
            SERVER_ADAPTER.validate_python(wire, strict=True)
            if encoding == "json":
                schema_validator().validate(wire)
        self.builders[name] += 1
        for event in frame.get("events") or []:
            self.events.add(event["type"])
        if name == "update" and frame.get("seats"):
            self.stand_ins |= {(e["seat"], e["active"], frame["seats"][1]["computer_standin"])
                               for e in frame["events"] if e["type"] == "computer_standin"}
        self.variants.add((name, frozenset(k for k, v in frame.items() if v is not None)))
        self.count += 1
        return frame

    def has(self, name: str, *keys: str, without: tuple[str, ...] = ()) -> bool:
        return any(n == name and set(keys) <= k and not set(without) & k
                   for n, k in self.variants)


async def play(build: Built, seed: int) -> None:
    """A whole 2-seat Muggins game to 61 through the room service, building every frame a
    connection of each seat and of a spectator would be sent."""
    rnd = random.Random(seed)
    broker = MemoryBroker()
    await broker.start()
    store = MemoryStore(broker)
    service = RoomService(store, Settings(), seed_factory=lambda: f"frames-{seed}")
    base = "http://127.0.0.1:8000"
    try:
        with_computer, creator = await service.create_room(
            {"players": 2}, computers={1: "standard"}, room=None)
        frame = build("room_created", with_computer, creator, base,
                      service.room_settings(with_computer))
        assert frame["computers"] == {"1": "standard"}

        record, creator = await service.create_room(
            {"players": 2, "target": 61, "muggins": True, "backup10": True},
            room={"answer_window": 5})
        settings = service.room_settings(record)
        build("room_created", record, creator, base, settings)
        room = record.id
        tokens = [service.tokens.issue(), service.tokens.issue()]
        for token, name in zip(tokens, ("Ann", "Bob"), strict=True):
            build("welcome", "json", token, name, 16384)
            build("welcome", "msgpack", token, name, 16384)

        presence = {0: 1}
        first = await service.join(room, 0, tokens[0], "Ann")
        waiting = VersionData(first.record, first.events, True)
        build("snapshot", first.record, 0, settings, seat_infos(first.record, presence),
              waiting.view(0), seat_token=tokens[0])
        build("hint", room, 0, first.record.version, {"kind": "none", "best": None})
        build("presence", room, 0, True, "Ann", False)

        presence[1] = 1
        second = await service.join(room, 1, tokens[1], "Bob")
        started = VersionData(second.record, second.events, True)
        seats = seat_infos(second.record, presence)
        assert second.record.game_from == second.record.version
        # seat 0 gets the update that starts the game, with the seats
        frame = build("update", room, started.version, second.record.status,
                      started.events_for(0), diff(waiting.view(0), started.view(0)), seats)
        assert [e["type"] for e in frame["events"]][:2] == ["seat_taken", "game_start"]
        # seat 1 the snapshot that answers its join, with what it missed
        build("snapshot", second.record, 1, settings, seats, started.view(1),
              seat_token=tokens[1],
              missed=[{"version": started.version, "events": started.events_for(1)}])
        # a spectator joining now
        build("snapshot", second.record, None, settings, seats, started.view(None))

        last = {seat: started for seat in (0, 1, None)}
        previous = started
        ids = [0, 0]
        standin_done = False
        while True:
            state = previous.state()
            assert state is not None
            if state.phase == "game_over":
                break
            moves = [(s, a) for s in (0, 1) for a in engine.legal_actions(state, s)
                     if a["type"] != "rematch"]
            if state.phase == "show" and state.show_pending and rnd.random() < 0.15:
                pending = state.show_pending
                if pending.get("announced") is not None:
                    moves = []  # let the answer window run out
            if not standin_done and previous.version >= 30:
                # seat 1's player is away: a computer stands in (the seats change), until
                # the player's next action ends it (the seats change again)
                standin_done = True
                record = await service.set_standin(room, 1, True)
                assert record is not None
                events = (await store.log(room, record.version - 1, 1))[0]["events"]
            elif not moves:
                version = await service.apply_system(
                    room, {"type": "answer_timeout"}, lambda r: True)
                assert version is not None
                record = await service.load(room)
                events = (await store.log(room, version - 1, 1))[0]["events"]
            else:
                seat, action = rnd.choice(moves)
                ids[seat] += 1
                action_id = f"s{seat}-{ids[seat]}"
                result = await service.act(room, seat, tokens[seat], action_id, action)
                build("ack", action_id, result.version, False)
                again = await service.act(room, seat, tokens[seat], action_id, action)
                assert again.duplicate
                build("ack", action_id, again.version, True)
                record, events = result.record, result.events
                assert record is not None
            changed = record.seats != previous.record.seats
            data = VersionData(record, events, changed, previous=previous)
            for seat in (0, 1, None):
                build("update", room, data.version, record.status, data.events_for(seat),
                      diff(last[seat].view(seat), data.view(seat)),
                      seat_infos(record, presence) if changed else None)
                last[seat] = data
            for seat in (0, 1):
                view, legal = seat_knowledge(data.state(), seat)
                build("hint", room, seat, data.version, suggest(view, legal))
            previous = data
            if data.version % 25 == 0:
                # a connection that fell behind: a snapshot with the versions it missed
                log = await store.log(room, data.version - 5)
                missed = [{"version": e["v"], "events": [redact(ev, 0) for ev in e["events"]]}
                          for e in log]
                build("snapshot", record, 0, settings, seats, data.view(0), missed=missed)
                build("pong", 7, 1795000000.5, room, data.version)

        record = previous.record
        assert record.status == "game_over"
        build("snapshot", record, 0, settings, seats, previous.view(0))
        build("snapshot", record, 1, settings, seats, previous.view(1), seat_token=tokens[1],
              missed=[])
        # history, as a seat and in public, in pages
        log = await store.log(room, record.game_from - 1)
        for seat, public in ((0, False), (1, False), (None, True)):
            versions = [{"version": e["v"], "events": [redact(ev, seat) for ev in e["events"]]}
                        for e in log]
            build("history", room, record.game_number, record.game_from, versions[-50:],
                  len(versions) > 50, public)
        build("history", room, 0, 0, [], False, False)
        build("presence", room, 1, False, "Bob", False)
        build("presence", room, 1, False, "Bob", True)
    finally:
        await store.close()
        await broker.close()


async def test_every_builder_makes_a_valid_frame():
    build = Built()
    for seed in (11, 14):
        await play(build, seed)
    for nonce in (None, 42, "x" * 64, -(2**63)):
        build("pong", nonce, 1795000000.0)
    build("pong", 1, 1795000000.0, "k3JfQ9xa2B", 0)
    build("left", "k3JfQ9xa2B")
    # the lobby's frames, with an entry as server.lobby makes it from a record
    seats = (SeatRecord(name="Ann", token_hash="x", kind="human", player="a" * 16),
             SeatRecord(), SeatRecord(name="Computer (easy)", kind="computer", level="easy"))
    record = RoomRecord("k3JfQ9xa2B", 2, {"players": 3, "partnerships": False,
                                         "target": 121, "muggins": False, "lowball": False,
                                         "backup10": False}, seats, None, "s", "c", 1.0, 2.0)
    entry = entry_of(record, {"public": True, "rated": False, "match": 1, "language": "sv"},
                     {"a" * 16: 1234})
    assert entry is not None and entry["seats"][0]["rating"] == 1234
    build("lobby", [])
    build("lobby", [entry])
    build("lobby_update", [entry], [], [])
    build("lobby_update", [], [entry], ["Zz9yX8wV7u"])
    table = Table.from_dict({"players": 4, "partnerships": True, "rated": True}).to_dict()
    build("queue_status", "2x2-121-r-m1", table, 3, 4.25, False)
    build("queue_status", "2x2-121-r-m1", table, 0, 25.0, True)
    for reason in ("cancelled", "replaced", "expired", "failed"):
        build("queue_left", "2x2-121-r-m1", reason)
    build("queue_left", "", "cancelled")
    build("matched", "2x2-121-r-m1", table, "k3JfQ9xa2B", 2, "Qm9vbGVhbl9hbmRfc3R1ZmY",
          "http://h/r/k3JfQ9xa2B", "0123456789abcdef", ["A", "B", "C", "D"], False)
    build("matched", "2x2-121-r-m1", table, "k3JfQ9xa2B", 0, "Qm9vbGVhbl9hbmRfc3R1ZmY",
          "http://h/r/k3JfQ9xa2B", "c-0123456789abcdef", ["A", None, None, None], True)
    info = {"id": "m4xq7zt5wq2ra6d3", "challenger": {"id": "q3zq6v2fkm4xw7ra", "name": "Anna"},
            "challenged": {"id": "b7kq2m4xw5zt3ra6", "name": None}, "options": {"players": 2},
            "room": {}, "created": 1.0, "expires": 61.0, "status": "pending",
            "room_id": None, "answered": None}
    build("challenge_sent", info)
    build("challenge_received", info)
    build("challenge_declined", {**info, "status": "declined", "answered": 5.0})
    build("challenge_expired", {**info, "status": "expired"})
    build("challenge_accepted", {**info, "status": "accepted", "answered": 5.0,
                                 "room_id": "k3JfQ9xa2B"}, "k3JfQ9xa2B", 1)
    entry = {"id": 3, "at": 1764680000000, "name": "Åse", "seat": None, "player": None,
             "by": "q3zq6v2fkm4xw7ra", "audience": "spectators", "preset": None,
             "text": "<img src=x>", "game": 1}
    build("chat", "k3JfQ9xa2B", entry)
    build("chat", "k3JfQ9xa2B", {**entry, "seat": 0, "player": "q3zq6v2fkm4xw7ra",
                                 "audience": "table", "preset": "nice_go", "text": None})
    build("chat_hidden", "k3JfQ9xa2B", 3)
    build("chat_muted", "q3zq6v2fkm4xw7ra", "Bo", True, False)
    build("chat_muted", "q3zq6v2fkm4xw7ra", None, False, False)
    build("chat_reported", 3, "r2x7q4m9k3t5w8za")
    for code in codes.ERROR_CODES:
        build("error", code, codes.MEANINGS[code])
        build("error", code, codes.MEANINGS[code], "join")
    for code in codes.REJECT_CODES:
        build("reject", "c1-7", code, codes.MEANINGS[code])
    # answers to frames that are not valid messages (tests/server/test_encodable.py tries
    # arbitrary ones): a reject for an act with a usable action_id, else an error
    build("protocol_error", ProtocolError("bad_message", "act.action: Field required",
                                          ref="act", raw={"type": "act", "action_id": "c1-8"}))
    build("protocol_error", ProtocolError("bad_message", "no such type \udfff",
                                          ref="\udfff", raw={"type": "\udfff"}))
    build("protocol_error", ProtocolError("bad_name", "hello.name: blank", ref="hello",
                                          raw={"type": "hello", "name": "\u3164"}))

    assert set(build.builders) == BUILDERS, BUILDERS - set(build.builders)
    assert {n for n, _ in build.variants} == BUILDERS
    assert build.builders["update"] > 200, build.builders  # whole games, three viewers
    assert build.events >= {
        "seat_taken", "game_start", "game_commitment", "cut_for_deal", "deal_commitment",
        "deal", "discard", "starter", "play", "go",
        "count_reset", "peg", "show_hand", "announce", "answer", "muggins_result", "backup",
        "computer_standin", "game_over",
    }, build.events
    assert build.has("snapshot", "missed", "history_from", "seat_token")
    assert build.has("snapshot", "history_from", without=("missed", "seat_token"))
    assert build.has("snapshot", without=("missed", "history_from", "view"))
    assert build.has("snapshot", "missed", without=("seat_token",))
    assert build.has("update", "seats") and build.has("update", without=("seats",))
    # a stand-in started and ended, each shown by an update with the seats
    assert build.stand_ins == {(1, True, True), (1, False, False)}
    assert build.has("pong", "room", "version") and build.has("pong", without=("room",))
    assert build.has("error", "ref") and build.has("error", without=("ref",))


def test_builders_make_every_server_message():
    made = set()
    for name in BUILDERS:
        source = inspect.getsource(getattr(frames, name))
        made |= {t for t in SERVER_TYPES if f'"type": "{t}"' in source}
    assert made == SERVER_TYPES


# -- nothing builds a server message outside frames.py ------------------------------------


def frames_built_in(source: str) -> list[tuple[int, str]]:
    """``(line, type)`` of every server message a module's code builds itself: a dict
    display with a ``"type"`` key whose value is a server message's type, ``dict(type=…)``,
    or ``x["type"] = …``."""

    def server_type(node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and node.value in SERVER_TYPES:
            return node.value
        return None

    found = []
    for node in ast.walk(ast.parse(source)):
        kind = None
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "type":
                    kind = kind or server_type(value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "dict":
            for kw in node.keywords:
                if kw.arg == "type":
                    kind = kind or server_type(kw.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
                        and target.slice.value == "type":
                    kind = kind or server_type(node.value)
        if kind is not None:
            found.append((node.lineno, kind))
    return sorted(found)


def test_the_scan_finds_hand_built_frames():
    source = '''
def f(session, ws):
    session.send({"type": "error", "code": "busy", "message": "x", "ref": None})
    frame = dict(type="pong", nonce=None, time=0.0)
    other = {}
    other["type"] = "update"
    event = {"type": "seat_taken", "seat": 0, "name": "Ann"}
    return frame, other, event
'''
    assert frames_built_in(source) == [(3, "error"), (4, "pong"), (6, "update")]


def test_no_server_message_is_built_outside_frames_py():
    modules = sorted((ROOT / "server").rglob("*.py"))
    assert len(modules) > 10
    offenders = []
    for path in modules:
        if path == ROOT / "server" / "frames.py":
            continue
        for line, kind in frames_built_in(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: builds {kind!r}")
    assert not offenders, (
        "server messages must be built by server/frames.py (checked against their models "
        "by tests/server/test_frames.py):\n" + "\n".join(offenders)
    )
