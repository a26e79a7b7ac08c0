"""CPU per accepted action, stage by stage, of the product's hot path (issue 9's accounting).

``bench/latency.py`` finds the product spending some 550 µs of server CPU per accepted action
where the floor (``bench/floor.py``) spends some 170 µs. This script answers *where the
product's own work goes*: in one process, without any network or Redis, it runs the
product's real functions on the inputs of real games and prints the CPU time per action of
each stage of the path of one accepted action. From the repository root::

    python bench/accounting.py                          # about 40 s
    python bench/accounting.py --actions 500 --repeats 3
    python bench/accounting.py --json /tmp/accounting.json
    python bench/accounting.py --profile views          # cProfile of one stage's loop

**The inputs.** Real 2-player games (``{"players": 2}``, the default room settings, two
human seats) are played through the product's own ``RoomService`` (in-process store) the
way ``bench/loadclient.py`` plays them in the closed-loop bench: each seat acts from its own
view, seat 0 first when both may act; it discards the first cards of its hand, plays the
first card of its hand that keeps the count at 31 or under, and seat 0 asks for a rematch
at game over, so games never stop. Go, the show and the next deal are automatic (the
engine does them inside the action that makes them due; there is no ``go`` or ``next``
action), so the mix is about 80 % ``play``, 20 % ``discard`` and one ``rematch`` a game.
For each action the script keeps the ``act`` frame as the load client writes it, the room
record and engine state before and after (the very objects the service produced) and the
events.

**Where it runs.** Everything runs inside one task of a uvloop event loop, as in the
server, and the Redis client is the app's own (``server.app.redis_client``: a
``BlockingConnectionPool`` with the 1 s socket timeout). Only the socket is not real: the
pool's ``make_connection`` hands out a redis-py ``Connection`` with its real hiredis parser
whose writer keeps what is written and feeds the reply Redis would send
(``commit.lua``'s ``{0, version, ''}``) to the connection's ``asyncio.StreamReader``. So
the pool, the store's write lane, packing, the send and the reply parsing all run as they
do in production, up to the system calls. The product's coroutines are driven to their end
without waiting (one that would wait is an error: the figures would be wrong).

**The stages** (each times one loop over all recorded actions with
``time.process_time_ns`` and divides by their number; after a warm-up run of each, every
stage runs ``--repeats`` times, the stages interleaved, each with the collector on and
then off or the other way round; medians are reported):

1. ``decode``: ``protocol.codec.decode_client`` of the ``act`` frame (``json.loads`` and the
   pydantic validation), as ``Session.handle_frame`` does.
2. ``exactly_once``: what ``Session._commit_act`` and ``RoomService.act`` do for
   exactly-once and the seat's token: ``model_dump`` of the action, ``action_digest``
   (canonical JSON + SHA-256), the ``ActionRef`` and its key, ``token_matches`` (SHA-256
   of the seat token, constant-time compare).
3. ``rules``: ``engine.apply`` from the state before (its legal-action cache filled, as at
   steady state: the previous version's views computed it).
4. ``prepare``: ``RoomService._prepare`` (the state's ``to_dict``, the new record, the room
   settings, the deadline plan, the ``Commit``), the new state's legal-action cache empty
   as it is fresh from the engine.
5. ``commit``: ``RedisStore.commit`` down to the socket and back: the message head,
   ``RoomRecord.to_json``, the log entry JSON, noting the message in
   ``PublishedMessages``, the keys and arguments, the write lane (a kept connection, its
   readiness check, one ``asyncio.timeout``), packing, redis-py's send and the hiredis
   parse of the reply. Two of its parts are also shown apart (not added to the sum): the
   JSON it encodes, and the packing.
6. ``dispatch``: ``RedisBroker._dispatch`` of the published message as it comes back on
   this process's subscription. At steady state this process published it, so
   ``PublishedMessages.take`` finds it by its text and nothing is parsed (the listener's
   work is in the stages below). What a process that did *not* publish it would pay (the
   parse, the record, the state) is shown apart as a reference.
7. ``views``: ``LocalRoom.ingest`` of the new version and ``VersionData.view`` of both
   seats, incremental (``previous`` linked, so ``engine.view``'s ``since`` path runs),
   computing the new state's legal actions as the fan-out does.
8. ``events``: ``VersionData.events_for`` both seats (the redaction table).
9. ``diffs``: ``protocol.patch.diff`` from each seat's previous wire view to the new one
   (views from the incremental path, so unchanged parts are shared as in the product).
10. ``updates``: ``server.frames.update`` and the connection codec's ``encode`` (JSON
    text), 2 seats.
11. ``ack``: ``server.frames.ack`` and ``encode``.

**Cross-checks.** *The stages in sequence*: the stages' own calls one after another for
each action, in the product's order, with nothing around them. Its figure minus the
stages' sum is what running them interleaved costs over running each alone in a tight
loop (caches, branch predictors: on the machine this was written on it was 30 % more).
The column *in sequence* splits that run by stage (``perf_counter_ns`` laps, the clock's own
cost taken off): where the interleaving cost lands, to be read as an indication (a stage
that opens an action may pay for the caches the previous action's stages took).
*The whole in-process path*: the same actions go through the real
``Session.handle_frame`` of the acting seat's session (decode, admission gate, the room
service's transaction from its cache, ``RedisStore.commit`` on the stand-in socket, the own
update, the ack, the metrics), then the published message (a fresh copy of its text, as the
subscription's parser would make) through the real ``RedisBroker._dispatch`` to
``LocalRooms`` and the other seat's session, and each session's queue is drained as its
writer task would. Its figure minus the stages in sequence is the glue between the stages
(coroutines, dataclasses, the sessions' queues and events, the record cache, the metrics
histogram, and the stand-ins' own few microseconds). Still not counted anywhere: the
stack the floor runs too (uvicorn's WebSocket protocol, the event loop, the sockets, the
writer tasks — the product sends 3 frames an action, the floor 2 —, reading the pub/sub
message) and Redis itself.

**The floor's own work** for comparison: ``json.loads`` of a ``play``-sized act frame with
its type checks, and ``RedisHub.act`` of ``bench/floor.py`` (its ``EVALSHA`` through
redis-py's ``Script`` call and pool) on the same kind of stand-in socket, awaited for real:
redis-py gives the floor's connections its default 5 s socket timeout, so each send runs
in a task of its own (``asyncio.wait_for``) that the event loop schedules, and that is
counted. ``floor.py`` does no ``json.dumps`` per action: its Lua script builds the
update's text by concatenation and the process sends the published text as it arrives.

**Steady state, not flattering.** The records and states are the objects the service made
(shared structure included); per-object caches are emptied before each repeat where the
product would find them empty (the legal actions of a new state, the views and redacted
events of a new version); the message noted by a commit is looked up with a distinct copy
of its text (hashed and compared as a received one is). The recorded inputs are frozen
out of the cyclic collector's sight (``gc.freeze``, as the server's ``GcPolicy`` freezes
what survives) and the collector is otherwise left as Python starts it; every stage is
also run with the collector off, and one whose median moves by more than 10 % is flagged
(on a noisy machine runs of the same stage can differ by as much: the spread of the runs
is printed).
The settings are the defaults with the limits off, as ``bench/latency.py`` runs the product
(``--limits off``). See docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import inspect
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

import floor  # noqa: E402  (bench/floor.py)
import hiredis  # noqa: E402
from loadclient import choose_move  # noqa: E402  (bench/loadclient.py)
from redis.asyncio import Redis  # noqa: E402
from redis.asyncio.connection import AbstractConnection  # noqa: E402

import engine  # noqa: E402
from protocol import jsontext  # noqa: E402
from protocol.codec import Codec, decode_client  # noqa: E402
from protocol.patch import diff  # noqa: E402
from server import frames  # noqa: E402
from server.app import redis_client  # noqa: E402
from server.broker import MemoryBroker, PublishedMessages, RedisBroker, channel_name  # noqa: E402
from server.fanout import LocalRoom, LocalRooms  # noqa: E402
from server.metrics import Metrics  # noqa: E402
from server.overload import ActionGate  # noqa: E402
from server.rooms import ActionRef, Change, Room, RoomService, token_matches  # noqa: E402
from server.session import Session, SessionState  # noqa: E402
from server.settings import Settings  # noqa: E402
from server.store.base import Commit, RoomRecord, action_digest  # noqa: E402
from server.store.memory import MemoryStore  # noqa: E402
from server.store.redis import RedisStore  # noqa: E402
from server.tokens import TokenIssuer  # noqa: E402
from server.views import VersionData  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/0"
"""Only parsed: no connection is ever made."""

KEY_PREFIX = "bench:accounting:"
BASE_URL = "http://127.0.0.1:8000"
GC_FLAG = 0.10
"""A stage whose median with the collector off differs by more than this share is flagged."""

LIMITS_OFF = {
    "frame_rate": 0, "max_connections_per_address": 0, "rooms_per_minute": 0,
    "failed_joins_per_minute": 0, "idle_seconds": 0, "connections_per_minute": 0,
    "wire_frame_rate": 0, "wire_bytes_rate": 0,
}
"""``bench/latency.py``'s ``--limits off`` (its ``LIMITS["off"]``) as settings."""


def bench_settings() -> Settings:
    """The product's settings as the latency bench runs it: defaults, Redis, limits off
    (``CRIBBAGE_*`` variables are ignored, as ``bench/latency.py`` removes them from the
    servers' environment)."""
    for name in [n for n in os.environ if n.upper().startswith("CRIBBAGE_")]:
        del os.environ[name]
    return Settings(redis_url=REDIS_URL, key_prefix=KEY_PREFIX, **LIMITS_OFF)


# --------------------------------------------------------------------------- recording
@dataclass
class Step:
    """One accepted action of a recorded game."""

    seat: int
    token: str
    action_id: str
    action: dict[str, Any]
    frame: str
    before: RoomRecord
    after: RoomRecord
    state_before: engine.GameState
    state_after: engine.GameState
    events: list[dict[str, Any]]


@dataclass
class Recording:
    """Actions of real games played through the room service, in order."""

    settings: Settings
    room_id: str
    tokens: list[str]
    secret: bytes
    start: RoomRecord
    start_state: engine.GameState
    steps: list[Step]
    games: int


async def record_games(actions: int, seed: str) -> Recording:
    """Play 2-player games through ``RoomService`` (in-process store) until ``actions``
    actions were accepted; keep each action's inputs and outputs."""
    settings = bench_settings()
    secret = b"accounting-bench-token-secret-32"
    service = RoomService(MemoryStore(MemoryBroker()), settings, seed_factory=lambda: seed,
                          tokens=TokenIssuer(secret))
    record, _ = await service.create_room({"players": 2})
    room_id = record.id
    service.cache.follow(room_id)  # as LocalRooms does for a room with local sessions
    tokens = [service.tokens.issue(), service.tokens.issue()]
    for seat in (0, 1):
        await service.join(room_id, seat, tokens[seat], f"p0s{seat}")
    cached = service.cache.get(room_id)
    assert cached is not None and cached[1] is not None, "the game did not start"
    start, state = cached
    record = start
    prefix = f"{os.getpid():x}{id(service) & 0xFFFFFF:x}"  # like the load client's ids
    steps: list[Step] = []
    games = 1
    while len(steps) < actions:
        for seat in (0, 1):
            move = choose_move(engine.view(state, seat), seat)
            if move is not None:
                break
        else:
            raise RuntimeError("nobody can act: the load client's policy is stuck")
        action_id = f"{prefix}-{len(steps) + 1}"
        frame = json.dumps({"type": "act", "action_id": action_id, "action": move},
                           separators=(",", ":"))
        result = await service.act(room_id, seat, tokens[seat], action_id, move)
        assert result.record is not None and result.state is not None
        steps.append(Step(seat, tokens[seat], action_id, move, frame, record, result.record,
                          state, result.state, result.events))
        games += move["type"] == "rematch"
        record, state = result.record, result.state
    return Recording(settings, room_id, tokens, secret, start, steps[0].state_before, steps,
                     games)


# --------------------------------------------------------------------------- stand-in socket
class StandInWriter:
    """A connection's writer without a socket: keeps what is written and feeds ``reply``
    (what Redis would answer) to the connection's reader."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.reply = b""
        self.sent: Any = None

    def writelines(self, chunks: Any) -> None:
        self.sent = chunks
        self.reader.feed_data(self.reply)

    def write(self, data: bytes) -> None:
        self.writelines([data])

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    @property
    def transport(self) -> StandInWriter:
        """redis-py 8 asks ``writer.transport.is_closing()`` before it writes."""
        return self

    def command(self) -> list[str]:
        """The last command written, parsed back from RESP (untimed use only)."""
        data = b"".join(self.sent)
        assert data[:1] == b"*"
        head, _, rest = data.partition(b"\r\n")
        args = []
        for _ in range(int(head[1:])):
            size, _, rest = rest.partition(b"\r\n")
            n = int(size[1:])
            args.append(rest[:n].decode())
            rest = rest[n + 2:]
        return args


def stand_in(client: Redis) -> StandInWriter:
    """Make ``client``'s pool hand out one connection (made as the pool makes them, with
    its real parser) whose socket is a :class:`StandInWriter`; returns that writer."""
    pool = client.connection_pool
    conn: AbstractConnection = pool.make_connection()
    reader = asyncio.StreamReader()
    writer = StandInWriter(reader)
    conn._reader, conn._writer = reader, writer  # type: ignore[assignment]
    conn._parser.on_connect(conn)
    pool.make_connection = lambda: conn  # type: ignore[method-assign]
    return writer


def ok_reply(version: int) -> bytes:
    """``commit.lua``'s answer to an applied commit: ``{0, version, ''}``."""
    return b"*3\r\n:0\r\n:%d\r\n$0\r\n\r\n" % version


def stand_in_store(settings: Settings, published: PublishedMessages | None
                   ) -> tuple[RedisStore, StandInWriter]:
    """The product's ``RedisStore`` on the app's Redis client, on a stand-in socket."""
    client = redis_client(settings)
    writer = stand_in(client)
    return RedisStore(client, settings.key_prefix, settings.room_ttl_seconds,
                      published=published), writer


class NotingPublished(PublishedMessages):
    """``PublishedMessages`` that also keeps the text of the last message noted (what the
    subscription will bring back)."""

    last = ""

    def add(self, room_id: str, text: str, message: dict[str, Any]) -> bool:
        self.last = text
        return super().add(room_id, text, message)


def run_now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits (the stand-ins answer at once) to its end."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the in-process path waited for something; the figures would be wrong")


def fresh_text(text: str) -> str:
    """An equal but distinct str (no cached hash), as a received message is."""
    return text.encode().decode()


def clear_legal(states: list[engine.GameState]) -> None:
    """Forget the states' legal-action caches (``engine.legal_actions``)."""
    for s in states:
        s.__dict__.pop("_legal", None)


def fill_legal(states: list[engine.GameState]) -> None:
    """Compute the legal actions of both seats of each state, as the views do."""
    for s in states:
        engine.legal_actions(s, 0)
        engine.legal_actions(s, 1)


# --------------------------------------------------------------------------- derived inputs
@dataclass
class Inputs:
    """Everything the stages need, computed once (untimed) from a recording."""

    rec: Recording
    service: RoomService
    codec: Codec
    messages: list[Any] = field(default_factory=list)
    refs: list[ActionRef] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    noted: list[dict[str, Any]] = field(default_factory=list)
    views: list[list[dict[str, Any] | None]] = field(default_factory=list)
    seat_events: list[list[list[dict[str, Any]]]] = field(default_factory=list)
    patches: list[list[list[dict[str, Any]]]] = field(default_factory=list)
    floor_frames: list[str] = field(default_factory=list)

    @property
    def steps(self) -> list[Step]:
        return self.rec.steps

    @property
    def states(self) -> list[engine.GameState]:
        return [self.rec.start_state] + [s.state_after for s in self.steps]


def change_of(step: Step) -> Change:
    """The ``Change`` the ``act`` change function returns for this step (two human seats,
    no stand-in, no turn-clock timeouts)."""
    return Change(step.events, {"seat": step.seat, "id": step.action_id, "action": step.action},
                  state=step.state_after, actor=step.seat)


def incremental_views(rec: Recording) -> list[list[dict[str, Any] | None]]:
    """Each version's wire views of both seats, through ``LocalRoom.ingest`` and
    ``VersionData.view`` as the fan-out computes them (index 0: the start)."""
    local = LocalRoom(rec.room_id)
    first = local.ingest(rec.start, [], False, rec.start_state)
    out = [[first.view(0), first.view(1)]]
    for step in rec.steps:
        data = local.ingest(step.after, step.events, False, step.state_after)
        out.append([data.view(0), data.view(1)])
    return out


def derive(rec: Recording) -> Inputs:
    """Compute every stage's inputs from the recording (untimed), checking on the way that
    the product's functions give back what the recorded run made."""
    settings = rec.settings
    published = NotingPublished(lambda room: True, len(rec.steps) + 16)
    store, writer = stand_in_store(settings, published)
    inputs = Inputs(rec, RoomService(store, settings, tokens=TokenIssuer(rec.secret)),
                    Codec("json"))
    now = time.time()
    for step in rec.steps:
        message = decode_client(step.frame, "json", max_bytes=settings.max_frame_bytes)
        inputs.messages.append(message)
        action = message.action.model_dump(exclude_none=True)
        assert action == step.action, (action, step.action)
        ref = ActionRef(step.seat, step.action_id, action_digest(action),
                        action.get("type") == "rematch")
        inputs.refs.append(ref)
        change = change_of(step)
        inputs.changes.append(change)
        new, _, commit = inputs.service._prepare(Room(step.before, step.state_before, False),
                                                 change, now, ref)
        assert new.version == step.after.version and new.state == step.after.state
        inputs.commits.append(commit)
        writer.reply = ok_reply(new.version)
        result = run_now(store.commit(commit))
        assert result.status == "ok" and result.version == new.version, result
        inputs.commands.append(writer.command())
        inputs.published.append(published.last)
        noted = published.take(published.last)
        assert noted is not None, "the commit did not note its message"
        inputs.noted.append(noted)
    clear_legal(inputs.states)
    inputs.views = incremental_views(rec)
    for i, step in enumerate(rec.steps):
        data = VersionData(step.after, step.events, False, step.state_after)
        inputs.seat_events.append([data.events_for(0), data.events_for(1)])
        inputs.patches.append([diff(inputs.views[i][s], inputs.views[i + 1][s]) for s in (0, 1)])
        card = "5H" if i & 1 else "TD"  # bench/loadclient.py's FloorSeat.act
        inputs.floor_frames.append(f'{{"type":"act","action_id":"{step.action_id}",'
                                   f'"action":{{"type":"play","card":"{card}"}}}}')
    return inputs


# --------------------------------------------------------------------------- stages
Loop = Callable[[], Any]
"""A stage's loop over all actions; it may be a coroutine function (then it is awaited)."""


@dataclass(frozen=True)
class Stage:
    """One timed stage: ``build(inputs)`` prepares a run (untimed) and returns the loop
    over all actions to time. ``group``: ``product`` (a stage of the path, summed),
    ``part`` (a part of the stage before it, not summed), ``floor``, ``reference`` or
    ``whole``."""

    key: str
    label: str
    build: Callable[[Inputs], Loop]
    group: str = "product"


def build_decode(inputs: Inputs) -> Loop:
    texts = [s.frame for s in inputs.steps]
    limit = inputs.rec.settings.max_frame_bytes

    def loop() -> None:
        for text in texts:
            decode_client(text, "json", max_bytes=limit)
    return loop


def build_exactly_once(inputs: Inputs) -> Loop:
    hashes = [s.before.seats[s.seat].token_hash for s in inputs.steps]
    work = list(zip(inputs.steps, inputs.messages, hashes, strict=True))

    def loop() -> None:
        for step, message, token_hash in work:
            action = message.action.model_dump(exclude_none=True)
            ref = ActionRef(step.seat, step.action_id, action_digest(action),
                            action.get("type") == "rematch")
            _ = ref.key
            if not token_matches(step.token, token_hash):
                raise RuntimeError("the seat token does not match")
    return loop


def build_rules(inputs: Inputs) -> Loop:
    fill_legal([s.state_before for s in inputs.steps])
    work = [(s.state_before, s.seat, s.action) for s in inputs.steps]
    apply = engine.apply

    def loop() -> None:
        for state, seat, action in work:
            apply(state, seat, action)
    return loop


def build_prepare(inputs: Inputs) -> Loop:
    clear_legal(inputs.states)
    prepare = inputs.service._prepare
    work = [(Room(s.before, s.state_before, False), c, r)
            for s, c, r in zip(inputs.steps, inputs.changes, inputs.refs, strict=True)]
    now = time.time()

    def loop() -> None:
        for room, change, ref in work:
            prepare(room, change, now, ref)
    return loop


def build_commit(inputs: Inputs) -> Loop:
    published = PublishedMessages(lambda room: True, len(inputs.steps) + 16)
    store, writer = stand_in_store(inputs.rec.settings, published)
    work = [(c, ok_reply(c.record.version)) for c in inputs.commits]
    commit = store.commit

    def loop() -> None:
        for c, reply in work:
            writer.reply = reply
            run_now(commit(c))
    return loop


def build_commit_json(inputs: Inputs) -> Loop:
    """The JSON ``RedisStore.commit`` encodes (head, record, log entry), as it builds it."""
    commits = inputs.commits
    dumps = jsontext.dumps

    def loop() -> None:
        for c in commits:
            dumps({"t": "u", "v": c.record.version, "events": c.events,
                   "seats_changed": c.seats_changed})
            c.record.to_json()
            dumps(c.log_entry)
    return loop


def build_commit_pack(inputs: Inputs) -> Loop:
    """Packing the commit's ``EVALSHA`` as the write lane does (``hiredis.pack_command``)."""
    commands = [tuple(c) for c in inputs.commands]
    pack = hiredis.pack_command

    def loop() -> None:
        for args in commands:
            pack(args)
    return loop


def _broker(inputs: Inputs, listener: Callable[[dict[str, Any]], None]
            ) -> tuple[RedisBroker, str]:
    """A ``RedisBroker`` of the app's client following the room (what ``subscribe`` sets
    up, without the round trip)."""
    broker = RedisBroker(redis_client(inputs.rec.settings), KEY_PREFIX)
    room_id = inputs.rec.room_id
    channel = channel_name(KEY_PREFIX, room_id)
    broker._listeners[room_id] = listener
    broker._rooms_by_channel[channel] = room_id
    return broker, channel


def _messages(inputs: Inputs, channel: str) -> list[dict[str, Any]]:
    """The published messages as redis-py's subscription hands them over (new text
    objects, as read from the socket)."""
    return [{"type": "message", "pattern": None, "channel": channel, "data": fresh_text(t)}
            for t in inputs.published]


def build_dispatch(inputs: Inputs) -> Loop:
    broker, channel = _broker(inputs, lambda msg: None)
    broker.published = PublishedMessages(broker._listeners.__contains__,
                                         len(inputs.steps) + 16)
    for text, noted in zip(inputs.published, inputs.noted, strict=True):
        broker.published.add(inputs.rec.room_id, text, noted)
    msgs = _messages(inputs, channel)
    dispatch = broker._dispatch

    def loop() -> None:
        for msg in msgs:
            dispatch(msg)
        if broker.published.take(inputs.published[-1]) is not None:
            raise RuntimeError("a noted message was not taken")
    return loop


def build_dispatch_parsed(inputs: Inputs) -> Loop:
    """Reference: a message this process did not publish (another process's commit)."""
    seen: list[dict[str, Any]] = []

    def listener(msg: dict[str, Any]) -> None:
        # What LocalRooms._on_message and the first view then do with a parsed message:
        # the record from its plain data, the engine state from the record.
        record = RoomRecord.from_dict(msg["room"])
        VersionData(record, msg["events"], False).state()
        seen.append(msg)

    broker, channel = _broker(inputs, listener)
    msgs = _messages(inputs, channel)
    dispatch = broker._dispatch

    def loop() -> None:
        for msg in msgs:
            dispatch(msg)
        if len(seen) != len(msgs):
            raise RuntimeError("a published message did not reach the listener")
        seen.clear()
    return loop


def build_views(inputs: Inputs) -> Loop:
    clear_legal(inputs.states)
    rec = inputs.rec
    local = LocalRoom(rec.room_id)
    first = local.ingest(rec.start, [], False, rec.start_state)
    first.view(0), first.view(1)
    work = [(s.after, s.events, s.state_after) for s in inputs.steps]
    ingest = local.ingest

    def loop() -> None:
        for record, events, state in work:
            data = ingest(record, events, False, state)
            data.view(0)
            data.view(1)
    return loop


def build_events(inputs: Inputs) -> Loop:
    versions = [VersionData(s.after, s.events, False, s.state_after) for s in inputs.steps]

    def loop() -> None:
        for data in versions:
            data.events_for(0)
            data.events_for(1)
    return loop


def build_diffs(inputs: Inputs) -> Loop:
    views = inputs.views
    pairs = [(views[i][s], views[i + 1][s]) for i in range(len(inputs.steps)) for s in (0, 1)]

    def loop() -> None:
        for old, new in pairs:
            diff(old, new)
    return loop


def build_updates(inputs: Inputs) -> Loop:
    room_id = inputs.rec.room_id
    encode = inputs.codec.encode
    work = [(s.after.version, s.after.status, inputs.seat_events[i], inputs.patches[i])
            for i, s in enumerate(inputs.steps)]

    def loop() -> None:
        for version, status, events, patches in work:
            for seat in (0, 1):
                encode(frames.update(room_id, version, status, events[seat], patches[seat]))
    return loop


def build_ack(inputs: Inputs) -> Loop:
    encode = inputs.codec.encode
    work = [(s.action_id, s.after.version) for s in inputs.steps]

    def loop() -> None:
        for action_id, version in work:
            encode(frames.ack(action_id, version, False))
    return loop


def build_floor_decode(inputs: Inputs) -> Loop:
    texts = inputs.floor_frames

    def loop() -> None:
        for text in texts:  # bench/floor.py's ws_endpoint
            frame = json.loads(text)
            if not (isinstance(frame, dict) and isinstance(frame.get("action_id"), str)):
                raise RuntimeError("bad floor frame")
    return loop


def build_floor_commit(inputs: Inputs) -> Loop:
    hub = floor.RedisHub(REDIS_URL, KEY_PREFIX)
    writer = stand_in(hub.redis)
    room = floor.Room(inputs.rec.room_id, KEY_PREFIX)
    work = [(s.seat, text, b"*2\r\n:0\r\n:%d\r\n" % (i + 1))
            for i, (s, text) in enumerate(zip(inputs.steps, inputs.floor_frames, strict=True))]
    act = hub.act

    async def loop() -> None:
        # Awaited for real: redis-py gives the floor's connections its default 5 s socket
        # timeout, so each send runs in a task of its own (asyncio.wait_for) that the event
        # loop has to schedule; that cost is the floor's too.
        room.version = 0
        for seat, text, reply in work:
            writer.reply = reply
            await act(room, seat, text)
        if room.version != len(work):
            raise RuntimeError("the floor's commits did not all apply")
    return loop


SEQUENCE_KEYS = ("decode", "exactly_once", "rules", "prepare", "commit", "dispatch", "views",
                 "events", "diffs", "updates", "ack")
"""The product stages, in the order the sequence runs them."""


def build_sequence(inputs: Inputs, laps: list[int] | None = None) -> Loop:
    """The stages' own calls one after another for each action, in the product's order
    (each on the objects the previous one made where the product does so: the commit
    notes the message the dispatch takes, the views feed the diffs), without the session,
    room service and fan-out code around them.

    With ``laps`` (one slot per :data:`SEQUENCE_KEYS`), the wall-clock nanoseconds of each
    stage are added to its slot (``perf_counter_ns`` between stages; the loop is CPU-bound
    and never waits, so wall time is CPU time unless the machine preempts it)."""
    clear_legal(inputs.states)
    rec = inputs.rec
    settings = rec.settings
    limit = settings.max_frame_bytes
    published = NotingPublished(lambda room: True)
    store, writer = stand_in_store(settings, published)
    broker, channel = _broker(inputs, lambda msg: None)
    broker.published = published
    local = LocalRoom(rec.room_id)
    first = local.ingest(rec.start, [], False, rec.start_state)
    start_views = [first.view(0), first.view(1)]
    now = time.time()
    work = [(s, s.before.seats[s.seat].token_hash, Room(s.before, s.state_before, False), c,
             ok_reply(s.after.version))
            for s, c in zip(inputs.steps, inputs.changes, strict=True)]
    prepare, commit, dispatch, ingest = (inputs.service._prepare, store.commit,
                                         broker._dispatch, local.ingest)
    encode, room_id = inputs.codec.encode, rec.room_id
    acc = laps if laps is not None else [0] * len(SEQUENCE_KEYS)
    clock = time.perf_counter_ns if laps is not None else _no_clock

    def loop() -> None:
        last = start_views
        for step, token_hash, room, change, reply in work:
            t0 = clock()
            message = decode_client(step.frame, "json", max_bytes=limit)
            t1 = clock()
            action = message.action.model_dump(exclude_none=True)
            ref = ActionRef(step.seat, step.action_id, action_digest(action),
                            action.get("type") == "rematch")
            _ = ref.key
            token_matches(step.token, token_hash)
            t2 = clock()
            engine.apply(step.state_before, step.seat, action)
            t3 = clock()
            c = prepare(room, change, now, ref)[2]
            t4 = clock()
            writer.reply = reply
            run_now(commit(c))
            t5 = clock()
            msg = {"type": "message", "pattern": None, "channel": channel,
                   "data": fresh_text(published.last)}  # the stand-in's work: not counted
            t5b = clock()
            dispatch(msg)
            t6 = clock()
            data = ingest(step.after, step.events, False, step.state_after)
            views = [data.view(0), data.view(1)]
            t7 = clock()
            events = [data.events_for(0), data.events_for(1)]
            t8 = clock()
            patches = [diff(last[0], views[0]), diff(last[1], views[1])]
            t9 = clock()
            version, status = step.after.version, step.after.status
            for seat in (0, 1):
                encode(frames.update(room_id, version, status, events[seat], patches[seat]))
            t10 = clock()
            encode(frames.ack(step.action_id, version, False))
            t11 = clock()
            last = views
            acc[0] += t1 - t0
            acc[1] += t2 - t1
            acc[2] += t3 - t2
            acc[3] += t4 - t3
            acc[4] += t5 - t4
            acc[5] += t6 - t5b
            acc[6] += t7 - t6
            acc[7] += t8 - t7
            acc[8] += t9 - t8
            acc[9] += t10 - t9
            acc[10] += t11 - t10
    return loop


def _no_clock() -> int:
    return 0


@functools.cache
def lap_overhead(rounds: int = 20000) -> float:
    """Nanoseconds one lap of :func:`build_sequence` adds to a stage: a
    ``perf_counter_ns`` call and the subtraction and sum (median of 5 tries)."""
    clock = time.perf_counter_ns
    tries = []
    for _ in range(5):
        acc = [0]
        t_start = clock()
        for _ in range(rounds):
            t0 = clock()
            t1 = clock()
            acc[0] += t1 - t0
        tries.append((clock() - t_start) / rounds / 2)
    return statistics.median(tries)


def run_laps(inputs: Inputs) -> dict[str, float]:
    """One run of :func:`build_sequence` with laps: each stage's µs per action inside the
    sequence, less the clock's own cost."""
    laps = [0] * len(SEQUENCE_KEYS)
    build_sequence(inputs, laps)()
    n, per_lap = len(inputs.steps), lap_overhead()
    return {key: max(0.0, (laps[k] / n - per_lap) / 1000) for k, key in enumerate(SEQUENCE_KEYS)}


class Harness:
    """The product's objects for one room of 2 seats in this process, wired as the app
    wires them (``server.app``), on a stand-in socket (see the module docstring)."""

    def __init__(self, rec: Recording) -> None:
        settings = rec.settings
        client = redis_client(settings)
        self.writer = stand_in(client)
        self.broker = RedisBroker(client, settings.key_prefix)
        self.published = NotingPublished(self.broker._listeners.__contains__)
        self.broker.published = self.published
        store = RedisStore(client, settings.key_prefix, settings.room_ttl_seconds,
                           published=self.published)
        self.service = RoomService(store, settings, tokens=TokenIssuer(rec.secret))
        self.rooms = LocalRooms(self.broker, self.service)
        room_id = rec.room_id
        local = LocalRoom(room_id)
        self.rooms.rooms[room_id] = local
        self.service.cache.follow(room_id)
        # What LocalRooms.attach and RedisBroker.subscribe set up (minus the round trip).
        self.channel = channel_name(settings.key_prefix, room_id)
        self.broker._listeners[room_id] = lambda msg: self.rooms._on_message(local, msg)
        self.broker._rooms_by_channel[self.channel] = room_id
        gate = ActionGate(settings.max_inflight_actions, settings.action_queue_seconds,
                          settings.max_waiting_actions, settings.overload_lag_seconds)
        # What the metrics read at scrape time (server.app.Services); only the action
        # counters and the action_seconds histogram are on the path.
        self.metrics = Metrics(SimpleNamespace(
            rooms=self.rooms, service=self.service, store=store, broker=self.broker,
            limits=None, actions=gate, presence=SimpleNamespace(reaped=0),
            sweeper=SimpleNamespace(fired=0, retried=0, lateness=[])))
        self.sessions = [
            Session(None, Codec("json"), self.service, self.rooms, settings,  # type: ignore[arg-type]
                    BASE_URL, self.metrics, "127.0.0.1", None, gate)
            for _ in (0, 1)
        ]
        self.service.cache.put(rec.start, rec.start_state)
        local.ingest(rec.start, [], False, rec.start_state)
        for seat, session in enumerate(self.sessions):
            session.name = f"p0s{seat}"
            session.player_token = session.seat_token = rec.tokens[seat]
            session.state = SessionState.IN_ROOM
            session.local, session.seat = local, seat
            local.sessions.add(session)
            session._send_snapshot(rec.start)
        self.drain()

    def drain(self) -> list[str | bytes | None]:
        """Take every queued frame, as the sessions' writer tasks would."""
        out = []
        for session in self.sessions:
            queue = session._queue
            while not queue.empty():
                out.append(queue.get_nowait())
        return out

    def act(self, step: Step, reply: bytes) -> list[str | bytes | None]:
        """One action: the acting session's frame, then the published message back."""
        self.writer.reply = reply
        run_now(self.sessions[step.seat].handle_frame(step.frame))
        self.broker._dispatch({"type": "message", "pattern": None, "channel": self.channel,
                               "data": fresh_text(self.published.last)})
        return self.drain()


def verify_harness(inputs: Inputs) -> None:
    """Play every action through the harness once: each must be accepted and answered with
    an update to each seat (the next version, the same patches as the stages' ones) and an
    ack."""
    harness = Harness(inputs.rec)
    for i, step in enumerate(inputs.steps):
        sent = [jsontext.loads(f) for f in harness.act(step, ok_reply(step.after.version))]  # type: ignore[arg-type]
        kinds = sorted(f["type"] for f in sent)
        if kinds != ["ack", "update", "update"]:
            raise RuntimeError(f"action {i} ({step.action}) was answered {kinds}: {sent}")
        if any(f["version"] != step.after.version for f in sent):
            raise RuntimeError(f"action {i}: versions {[f['version'] for f in sent]}")
        patches = sorted(jsontext.dumps(f["patch"]) for f in sent if f["type"] == "update")
        if patches != sorted(jsontext.dumps(p) for p in inputs.patches[i]):
            raise RuntimeError(f"action {i}: the patches differ from the stages' ones")
    if harness.metrics.actions.accepted != len(inputs.steps):
        raise RuntimeError(f"accepted {harness.metrics.actions.accepted} of "
                           f"{len(inputs.steps)} actions")


def build_whole(inputs: Inputs) -> Loop:
    harness = Harness(inputs.rec)
    work = [(s, ok_reply(s.after.version)) for s in inputs.steps]
    act = harness.act

    def loop() -> None:
        for step, reply in work:
            act(step, reply)
        if harness.metrics.actions.accepted != len(work):
            raise RuntimeError("an action was not accepted")
    return loop


STAGES: tuple[Stage, ...] = (
    Stage("decode", "decode act frame (decode_client: json + pydantic)", build_decode),
    Stage("exactly_once", "exactly-once + seat token (digest, key, token hash)",
          build_exactly_once),
    Stage("rules", "rules (engine.apply)", build_rules),
    Stage("prepare", "prepare commit (RoomService._prepare: record, plan)", build_prepare),
    Stage("commit", "commit (RedisStore.commit to the socket and back)", build_commit),
    Stage("commit_json", "  of which: record + log entry + head JSON", build_commit_json,
          "part"),
    Stage("commit_pack", "  of which: EVALSHA packing (hiredis.pack_command)",
          build_commit_pack, "part"),
    Stage("dispatch", "pub/sub dispatch (RedisBroker._dispatch, own message)", build_dispatch),
    Stage("views", "views, 2 seats (ingest + VersionData.view, since)", build_views),
    Stage("events", "events redaction, 2 seats (events_for)", build_events),
    Stage("diffs", "JSON Patch diffs, 2 seats (protocol.patch.diff)", build_diffs),
    Stage("updates", "update frames, 2 seats (frames.update + encode)", build_updates),
    Stage("ack", "ack frame (frames.ack + encode)", build_ack),
    Stage("sequence", "the stages' calls in sequence, per action", build_sequence, "whole"),
    Stage("whole", "whole in-process path (handle_frame + dispatch + drain)", build_whole,
          "whole"),
    Stage("floor_decode", "floor: json.loads of the act frame + checks", build_floor_decode,
          "floor"),
    Stage("floor_commit", "floor: RedisHub.act (EVALSHA via redis-py Script)",
          build_floor_commit, "floor"),
    Stage("dispatch_parsed", "not own message: parse + record + state", build_dispatch_parsed,
          "reference"),
)
STAGES_BY_KEY = {s.key: s for s in STAGES}


# --------------------------------------------------------------------------- timing
async def time_once(stage: Stage, inputs: Inputs) -> float:
    """CPU µs per action of one run of a stage's loop (its preparation untimed)."""
    loop = stage.build(inputs)
    t0 = time.process_time_ns()
    result = loop()
    if inspect.isawaitable(result):
        await result
    t1 = time.process_time_ns()
    return (t1 - t0) / 1000 / len(inputs.steps)


async def measure(inputs: Inputs, repeats: int) -> dict[str, dict[str, list[float]]]:
    """Every stage ``repeats`` times with the collector on and off, one right after the
    other (which goes first alternates), the stages interleaved, and the in-sequence laps
    once per repeat; after one warm-up run of each. Returns µs per action of every run:
    ``{"gc_on": {stage: [...]}, "gc_off": {...}, "in_sequence": {stage: [...]}}``."""
    out: dict[str, dict[str, list[float]]] = {
        "gc_on": {s.key: [] for s in STAGES},
        "gc_off": {s.key: [] for s in STAGES},
        "in_sequence": {k: [] for k in SEQUENCE_KEYS},
    }
    for stage in STAGES:
        await time_once(stage, inputs)  # warm-up: validators, code caches, connections
    run_laps(inputs)
    try:
        for r in range(repeats):
            for stage in STAGES:
                for gc_on in ((True, False) if r % 2 == 0 else (False, True)):
                    gc.collect()
                    if not gc_on:
                        gc.disable()
                    figure = await time_once(stage, inputs)
                    gc.enable()
                    out["gc_on" if gc_on else "gc_off"][stage.key].append(figure)
            gc.collect()
            for key, figure in run_laps(inputs).items():
                out["in_sequence"][key].append(figure)
    finally:
        gc.enable()
    return out


async def profile_stage(key: str, inputs: Inputs, top: int = 30) -> str:
    """cProfile of one stage's loop: the functions with the most own time."""
    stage = STAGES_BY_KEY[key]
    loop = stage.build(inputs)
    profiler = cProfile.Profile()
    profiler.enable()
    result = loop()
    if inspect.isawaitable(result):
        await result
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


# --------------------------------------------------------------------------- report
def machine() -> dict[str, Any]:
    """CPUs, Python, the event loop and the libraries on the path."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import orjson
    import pydantic
    import redis

    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "loop": type(asyncio.get_running_loop()).__module__.split(".")[0],
        "orjson": orjson.__version__,
        "pydantic": pydantic.VERSION,
        "redis": redis.__version__,
        "hiredis": getattr(hiredis, "__version__", "?"),
    }


def tree() -> dict[str, Any]:
    """The commit measured, and uncommitted changes to the product's code if any."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.rstrip("\n")
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = git("status", "--porcelain", "--", "engine", "protocol", "server")
    return {"commit": git("rev-parse", "--short", "HEAD"),
            "changed": [line[3:] for line in changed.splitlines()]}


def sizes(inputs: Inputs) -> dict[str, float]:
    """Mean bytes per action of what crosses the wire and Redis."""
    n = len(inputs.steps)
    encode = inputs.codec.encode

    def mean(values: list[int]) -> float:
        return round(sum(values) / n, 1)

    updates = [len(encode(frames.update(inputs.rec.room_id, s.after.version, s.after.status,
                                        inputs.seat_events[i][seat],
                                        inputs.patches[i][seat])).encode())
               for i, s in enumerate(inputs.steps) for seat in (0, 1)]
    return {
        "act_frame": mean([len(s.frame.encode()) for s in inputs.steps]),
        "record_json": mean([len(c.record.to_json().encode()) for c in inputs.commits]),
        "published_message": mean([len(t.encode()) for t in inputs.published]),
        "evalsha_command": mean([len(hiredis.pack_command(tuple(c))) for c in inputs.commands]),
        "update_frames_2_seats": mean(updates),
        "floor_act_frame": mean([len(t) for t in inputs.floor_frames]),
        "floor_published_message": mean(
            [len(f'{{"type":"update","version":{i},"seat":0,"act":{t}}}')
             for i, t in enumerate(inputs.floor_frames)]),
    }


def _header(info: dict[str, Any]) -> None:
    m, t = info["machine"], info["tree"]
    print(f"machine: {m['cpus']} CPUs ({m['cpu']}), {m['python']} on {m['loop']}, "
          f"{m['platform']}")
    print(f"libraries: orjson {m['orjson']}, pydantic {m['pydantic']}, redis {m['redis']}, "
          f"hiredis {m['hiredis']}")
    print(f"tree: {t['commit']}" + (f" with uncommitted changes to {', '.join(t['changed'])}"
                                    if t["changed"] else ""))
    mix = ", ".join(f"{k} {v}" for k, v in sorted(info["mix"].items(), key=lambda kv: -kv[1]))
    print(f"actions: {info['actions']} ({mix}) over {info['games']} game(s) of 2 players; "
          f"medians of {info['repeats']} runs; CPU time (process_time_ns)")
    sz = info["sizes"]
    print(f"mean bytes per action: act frame {sz['act_frame']:.0f}, record JSON "
          f"{sz['record_json']:.0f}, published message {sz['published_message']:.0f}, "
          f"EVALSHA command {sz['evalsha_command']:.0f}, update frames (2 seats) "
          f"{sz['update_frames_2_seats']:.0f}; floor: act frame {sz['floor_act_frame']:.0f}, "
          f"published message {sz['floor_published_message']:.0f}")


def _spread(runs: dict[str, list[float]], keys: list[str]) -> str:
    """``min-max`` over the runs of the sum of ``keys``."""
    sums = [sum(runs[k][i] for k in keys) for i in range(len(runs[keys[0]]))]
    return f"{min(sums):.0f}-{max(sums):.0f}"


def print_report(info: dict[str, Any]) -> None:
    """The markdown tables and the summary."""
    _header(info)
    on, off, seq = info["gc_on"], info["gc_off"], info["in_sequence"]
    product = [s.key for s in STAGES if s.group == "product"]
    total, total_off = sum(on[k] for k in product), sum(off[k] for k in product)

    def gc_cell(a: float, b: float) -> str:
        return f"{b:9.2f}{' *' if a and abs(b - a) / a > GC_FLAG else '  '}"

    width = max(len(s.label) for s in STAGES) + 4
    print()
    print(f"| {'stage':<{width}} | µs per action | share of the stages' sum | in sequence µs "
          f"| gc off µs   |")
    print(f"|{'-' * (width + 2)}|--------------:|-------------------------:|---------------:"
          f"|------------:|")
    n = 0
    for s in STAGES:
        if s.group == "product":
            n += 1
            label, share = f"{n}. {s.label}", f"{100 * on[s.key] / total:.1f}%"
            in_seq = f"{seq[s.key]:.2f}"
        elif s.group == "part":
            label, share, in_seq = f"   {s.label}", f"({100 * on[s.key] / total:.1f}%)", ""
        else:
            continue
        print(f"| {label:<{width}} | {on[s.key]:13.2f} | {share:>24} | {in_seq:>14} | "
              f"{gc_cell(on[s.key], off[s.key])} |")
    print(f"| {'sum of the stages':<{width}} | {total:13.2f} | {'100.0%':>24} | "
          f"{sum(seq.values()):14.2f} | {gc_cell(total, total_off)} |")
    print()
    floor_keys = [s.key for s in STAGES if s.group == "floor"]
    rows = [
        (STAGES_BY_KEY["sequence"].label, on["sequence"], off["sequence"]),
        ("  minus the stages' sum: running them interleaved", on["sequence"] - total,
         off["sequence"] - total_off),
        (STAGES_BY_KEY["whole"].label, on["whole"], off["whole"]),
        ("  minus the stages in sequence: the glue", on["whole"] - on["sequence"],
         off["whole"] - off["sequence"]),
        *[(STAGES_BY_KEY[k].label, on[k], off[k]) for k in floor_keys],
        ("floor: its own work, total", sum(on[k] for k in floor_keys),
         sum(off[k] for k in floor_keys)),
        *[(s.label, on[s.key], off[s.key]) for s in STAGES if s.group == "reference"],
    ]
    print(f"| {'cross-check, floor, reference':<{width}} | µs per action | gc off µs   |")
    print(f"|{'-' * (width + 2)}|--------------:|------------:|")
    for label, a, b in rows:
        print(f"| {label:<{width}} | {a:13.2f} | {gc_cell(a, b)} |")
    print()
    runs = info["runs"]["gc_on"]
    print(f"Spread over the {info['repeats']} runs (min-max µs per action): the stages' sum "
          f"{_spread(runs, product)}, in sequence {_spread(runs, ['sequence'])}, the whole "
          f"path {_spread(runs, ['whole'])}.")
    counterpart = on["decode"] + on["commit"]
    print(f"The product's own work in this process: {on['whole']:.0f} µs per action (the "
          f"stages: {total:.0f} each alone, {on['sequence']:.0f} in sequence; glue "
          f"{on['whole'] - on['sequence']:.0f}). Decode + commit, the two steps the floor "
          f"also takes: {counterpart:.0f} µs (the floor's: "
          f"{sum(on[k] for k in floor_keys):.0f} µs). Work the floor does not do at all: "
          f"{total - counterpart:.0f} µs of stages (each alone) + "
          f"{on['whole'] - total:.0f} µs of interleaving and glue.")
    flagged = [s.key for s in STAGES if on[s.key] and abs(off[s.key] - on[s.key]) / on[s.key]
               > GC_FLAG]
    if flagged:
        print(f"* the collector off moves these by more than {GC_FLAG:.0%} (on this machine "
              f"runs of the same stage differ by as much; see the spread): "
              f"{', '.join(flagged)}")
    else:
        print(f"The collector off moves no stage by more than {GC_FLAG:.0%}.")


# --------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--actions", type=int, default=2000,
                   help="actions of real games replayed by each stage (default 2000)")
    p.add_argument("--repeats", type=int, default=7,
                   help="timed runs of each stage; medians are reported (default 7)")
    p.add_argument("--seed", default="5eed" * 8, help="the games' engine seed (hex text)")
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    p.add_argument("--profile", metavar="STAGE", choices=list(STAGES_BY_KEY),
                   help="print a cProfile of one stage's loop instead of the table "
                   f"({', '.join(STAGES_BY_KEY)})")
    args = p.parse_args(argv)
    if args.actions < 1 or args.repeats < 1:
        p.error("--actions and --repeats must be at least 1")
    return args


async def run(args: argparse.Namespace) -> dict[str, Any] | None:
    """Record, derive, check, then measure (or profile); returns the figures."""
    rec = await record_games(args.actions, args.seed)
    inputs = derive(rec)
    verify_harness(inputs)
    # The recorded inputs live through the run: out of the collector's sight, as the
    # server's GcPolicy freezes what survives.
    gc.collect()
    gc.freeze()
    if args.profile:
        print(await profile_stage(args.profile, inputs))
        return None
    runs = await measure(inputs, args.repeats)
    medians = {kind: {k: statistics.median(v) for k, v in figures.items()}
               for kind, figures in runs.items()}
    mix: dict[str, int] = {}
    for step in rec.steps:
        mix[step.action["type"]] = mix.get(step.action["type"], 0) + 1
    return {
        "machine": machine(),
        "tree": tree(),
        "actions": len(rec.steps),
        "games": rec.games,
        "mix": mix,
        "repeats": args.repeats,
        "sizes": sizes(inputs),
        **medians,
        "runs": runs,
        "stages": [{"key": s.key, "label": s.label.strip(), "group": s.group}
                   for s in STAGES],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    try:
        import uvloop

        loop_factory: Any = uvloop.new_event_loop
    except ImportError:  # the server falls back to asyncio's loop too
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        info = runner.run(run(args))
    if info is None:
        return 0
    print_report(info)
    info["seconds"] = round(time.monotonic() - started, 1)
    print(f"({info['seconds']:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(info, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
