"""Load client worker of ``bench/latency.py`` (started by it; not meant to be run by hand).

A lean client, so that the load it puts on the server costs it little: every connection is
an ``asyncio.Protocol`` driving the ``websockets`` library's Sans-I/O ``ClientProtocol``
(the library does the handshake, framing and masking; there is no task, queue or future per
frame), frames are decoded with ``json.loads`` once, and a seat keeps its view with a small
in-place JSON Patch applier (the server's patches only ``add``, ``remove`` and ``replace``).
Actions are sent from frame callbacks and timers, never from a task per seat.

Rooms (2 connections each) are driven in one of two modes:

* ``closed``: one action in flight per room; the next action is sent as soon as the previous
  one is answered and the seat whose move it is has seen it.
* ``paced``: every room gets one credit a second (rooms start at random offsets in the first
  second) and spends it on its next action as soon as it may act; a credit that is still
  unspent at the next second is lost (counted as a missed tick: the server was too slow).
  An action belongs to the recorded window when its credit was given inside it.

The product (``python -m server``): rooms made with ``POST /api/rooms``, seats with
``hello`` + ``join`` over ``/ws`` (``cribbage.v1.json``). Each seat plays legal moves
computed from its own view only: it discards the first cards of its hand; on its turn it
plays the first card of its hand that keeps the count at 31 or under; seat 0 asks for a
rematch at game over, so games never stop. A ``play`` is timed from just before its ``act``
is written to the moment the acting seat's connection decodes its **own ``update``** carrying
that card; an action is accepted when its ``ack`` comes (after that update).

The floor (``bench/floor.py``): each room's two seats take turns sending a ``play`` act of
the product's size; the acting seat's copy of the update is its answer and its time.

Protocol with the parent (one JSON object per line, stdin → commands, stdout → events):
``{"cmd": "setup", "kind": "product"|"floor", "port", "rooms", "first", "mode", ...}`` →
``{"event": "ready"}``; ``{"cmd": "run", "start", "end", "grace"}`` (``time.monotonic()``
values, which are system-wide on Linux) → ``{"event": "progress"}``… then
``{"event": "result", ...}``; ``{"cmd": "close"}`` → ``{"event": "closed"}``;
``{"cmd": "exit"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import random
import sys
import time
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

CARD_VALUES = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10, **{str(d): d for d in range(2, 10)}}


def choose_move(view: dict[str, Any], me: int) -> dict[str, Any] | None:
    """The load's move for seat ``me`` from its own view, or None when it has none: the
    first cards of the hand to the crib, the first card of the hand that keeps the count at
    31 or under, and a rematch by seat 0 at game over (so games never stop)."""
    phase = view["phase"]
    if phase == "play":
        if view["turn"] == me:
            room_left = 31 - view["count"]
            for card in view["hand"]:
                if CARD_VALUES[card[0]] <= room_left:
                    return {"type": "play", "card": card}
        return None
    if phase == "discard":
        hand = view["hand"]
        if not view["discarded"][me] and len(hand) > 4:
            return {"type": "discard", "cards": hand[: len(hand) - 4]}
        return None
    if phase == "game_over" and me == 0:
        return {"type": "rematch"}
    return None
perf = time.perf_counter
mono = time.monotonic


def emit(event: dict[str, Any]) -> None:
    """One line to the parent."""
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- connection
class LeanWS(asyncio.Protocol):
    """One WebSocket client connection; ``on_text(data: bytes)`` gets each text frame."""

    def __init__(self, uri: str, subprotocol: str | None, on_text: Any) -> None:
        self.proto = ClientProtocol(
            parse_uri(uri), subprotocols=[Subprotocol(subprotocol)] if subprotocol else None,
            max_size=4 << 20,
        )
        self.on_text = on_text
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.proto.send_request(self.proto.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        self.proto.receive_data(data)
        for ev in self.proto.events_received():
            if type(ev) is Frame:
                if ev.opcode is Opcode.TEXT:
                    self.on_text(ev.data)
                elif ev.opcode is Opcode.CLOSE:
                    self.closed = True
            elif type(ev) is Response and not self.opened.done():
                if self.proto.handshake_exc is not None:
                    self.opened.set_exception(self.proto.handshake_exc)
                else:
                    self.opened.set_result(None)
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))

    def _flush(self) -> None:
        t = self.transport
        if t is None or t.is_closing():
            return
        for chunk in self.proto.data_to_send():
            if chunk:
                t.write(chunk)
            elif t.can_write_eof():
                t.write_eof()

    def send(self, text: str) -> None:
        if self.closed:
            return
        self.proto.send_text(text.encode())
        self._flush()

    def close(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if not self.closed:
            try:
                self.proto.send_close(1000)
                self._flush()
            except Exception:
                pass
        self.transport.close()


async def open_ws(host: str, port: int, path: str, subprotocol: str | None, on_text: Any,
                  timeout: float) -> LeanWS:
    loop = asyncio.get_running_loop()
    _, ws = await asyncio.wait_for(
        loop.create_connection(
            lambda: LeanWS(f"ws://{host}:{port}{path}", subprotocol, on_text), host, port),
        timeout,
    )
    await asyncio.wait_for(ws.opened, timeout)
    return ws


async def http_post_json(host: str, port: int, path: str, body: dict, timeout: float) -> tuple[
        int, dict]:
    """A bare HTTP/1.1 POST of JSON (``Connection: close``) → (status, decoded body)."""
    payload = json.dumps(body).encode()
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    try:
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, rest = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"chunked" in head.lower():
        out = b""
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        rest = out
    return status, json.loads(rest) if rest else {}


# --------------------------------------------------------------------------- patches
def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~") if "~" in part else part


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """Apply the server's RFC 6902 ops (add / remove / replace) in place; returns the doc."""
    for op in ops:
        kind = op["op"]
        path = op["path"]
        if path == "":
            if kind == "remove":
                doc = None
            else:
                doc = op["value"]
            continue
        parts = path[1:].split("/")
        target = doc
        for part in parts[:-1]:
            target = target[int(part)] if type(target) is list else target[_unescape(part)]
        last = _unescape(parts[-1])
        if type(target) is list:
            if kind == "add":
                if last == "-":
                    target.append(op["value"])
                else:
                    target.insert(int(last), op["value"])
            elif kind == "replace":
                target[int(last)] = op["value"]
            elif kind == "remove":
                del target[int(last)]
            else:
                raise ValueError(f"unsupported op {kind}")
        else:
            if kind in ("add", "replace"):
                target[last] = op["value"]
            elif kind == "remove":
                del target[last]
            else:
                raise ValueError(f"unsupported op {kind}")
    return doc


# --------------------------------------------------------------------------- statistics
class Stats:
    """What one worker saw in the recorded window."""

    gc_t0 = 0.0

    def __init__(self) -> None:
        self.gc_max = 0.0  # longest collection of this process while running (seconds)
        self.gc_total = 0.0
        self.start = float("inf")
        self.end = float("inf")
        self.plays: list[float] = []  # seconds, play → own update (product) / update (floor)
        self.acks: list[float] = []  # seconds, act → ack, accepted actions (product)
        self.watched_acks: list[float] = []  # the same, of watched rooms (bench/spectators.py)
        self.watched_plays: list[float] = []
        self.accepted = 0
        self.accepted_plays = 0
        self.games_finished = 0
        self.missed_ticks = 0
        self.sent = 0
        self.rejects: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.snapshots = 0

    def inside(self, t_mono: float) -> bool:
        return self.start <= t_mono < self.end

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


STATS = Stats()


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        Stats.gc_t0 = perf()
        return
    d = perf() - Stats.gc_t0
    STATS.gc_total += d
    if d > STATS.gc_max:
        STATS.gc_max = d


gc.callbacks.append(_on_gc)


# --------------------------------------------------------------------------- rooms
class RoomBase:
    """Pacing and the one-action-in-flight rule, shared by product and floor rooms."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.credit = 0
        self.credit_t = 0.0
        self.skip = 0
        self.running = False
        # (seat, kind, card, action_id, perf_counter at send, monotonic time that places it
        # in or out of the window: at send (closed) or of its second's credit (paced)
        # [, perf_counter of the own update])
        self.inflight: tuple[Any, ...] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.watched = False  # spectators watch this room (bench/spectators.py)
        self.room_id: str | None = None

    def tick(self) -> None:
        if self.skip > 0:  # see Worker.run: rooms start their games out of step
            self.skip -= 1
            return
        if self.credit > 0:
            STATS.missed_ticks += 1
        self.credit = 1
        self.credit_t = mono()
        self.poke()

    def may_act(self) -> bool:
        if not self.running or self.inflight is not None:
            return False
        if self.mode == "closed":
            return mono() < STATS.end
        return self.credit > 0  # no credit is given after the window

    def sent(self, seat: int, kind: str, card: str | None, action_id: str) -> None:
        # Paced actions belong to the window their second (credit) was given in, so that a
        # server lagging at the window's start cannot carry earlier seconds into it.
        self.inflight = (seat, kind, card, action_id, perf(),
                         mono() if self.mode == "closed" else self.credit_t)
        if self.mode != "closed":
            self.credit -= 1
        STATS.sent += 1

    def check_timeout(self, now_mono: float, limit: float) -> None:
        if self.inflight is not None and now_mono - self.inflight[5] > limit:
            STATS.error("act_timeout")
            self.inflight = None
            self.poke()

    def poke(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class ProductSeat:
    """One seat's connection to the product."""

    __slots__ = ("room", "seat", "ws", "view", "version", "waiter", "prefix", "ids")

    def __init__(self, room: ProductRoom, seat: int) -> None:
        self.room = room
        self.seat = seat
        self.ws: LeanWS | None = None
        self.view: dict[str, Any] | None = None
        self.version = -1
        self.waiter: tuple[str, asyncio.Future[dict]] | None = None
        self.prefix = f"{os.getpid():x}{id(self) & 0xFFFFFF:x}"
        self.ids = 0

    def expect(self, kind: str) -> asyncio.Future[dict]:
        fut: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self.waiter = (kind, fut)
        return fut

    def on_text(self, data: bytes) -> None:
        t = perf()
        frame = json.loads(data)
        kind = frame["type"]
        room = self.room
        if kind == "update":
            v = frame["version"]
            if v != self.version + 1:
                STATS.error("version_gap")
                self.ws.send('{"type":"resync"}')  # type: ignore[union-attr]
                return
            self.version = v
            try:
                self.view = apply_patch(self.view, frame["patch"])
            except Exception:
                STATS.error("patch_failed")
                self.ws.send('{"type":"resync"}')  # type: ignore[union-attr]
                return
            inf = room.inflight
            if inf is not None and inf[0] == self.seat and inf[1] == "play" and len(inf) == 6:
                for e in frame["events"]:
                    if e["type"] == "play" and e["seat"] == self.seat and e["card"] == inf[2]:
                        if STATS.inside(inf[5]):
                            (STATS.watched_plays if room.watched else STATS.plays).append(
                                t - inf[4])
                        room.inflight = (*inf, t)  # marked: own update seen
                        break
            room.poke()
        elif kind == "ack" or kind == "reject":
            inf = room.inflight
            if inf is not None and inf[0] == self.seat and inf[3] == frame["action_id"]:
                room.inflight = None
                if kind == "reject":
                    STATS.rejects[frame["code"]] = STATS.rejects.get(frame["code"], 0) + 1
                elif STATS.inside(inf[5]):
                    STATS.accepted += 1
                    (STATS.watched_acks if room.watched else STATS.acks).append(t - inf[4])
                    if inf[1] == "play":
                        STATS.accepted_plays += 1
                        if len(inf) == 6:
                            STATS.error("play_without_own_update")
                    elif inf[1] == "rematch":
                        STATS.games_finished += 1
            room.poke()
        elif kind == "snapshot":
            self.version = frame["version"]
            self.view = frame["view"]
            if room.running:
                STATS.snapshots += 1
            room.poke()
        elif kind == "error":
            if room.running:
                STATS.error(f"error {frame.get('code')}")
            inf = room.inflight
            if frame.get("ref") == "act" and inf is not None and inf[0] == self.seat:
                room.inflight = None
        if self.waiter is not None and self.waiter[0] == kind:
            _, fut = self.waiter
            self.waiter = None
            if not fut.done():
                fut.set_result(frame)
        elif self.waiter is not None and kind == "error" and not self.waiter[1].done():
            self.waiter[1].set_exception(RuntimeError(f"server error {frame}"))
            self.waiter = None

    def next_move(self) -> dict[str, Any] | None:
        """A legal action for this seat from its own view (None: nothing to do now)."""
        return None if self.view is None else choose_move(self.view, self.seat)

    def act(self, action: dict[str, Any]) -> None:
        self.ids += 1
        aid = f"{self.prefix}-{self.ids}"
        self.room.sent(self.seat, action["type"], action.get("card"), aid)
        self.ws.send(json.dumps(  # type: ignore[union-attr]
            {"type": "act", "action_id": aid, "action": action}, separators=(",", ":")))


class ProductRoom(RoomBase):
    def __init__(self, mode: str) -> None:
        super().__init__(mode)
        self.seats = [ProductSeat(self, 0), ProductSeat(self, 1)]

    def poke(self) -> None:
        if not self.may_act():
            return
        for s in self.seats:
            move = s.next_move()
            if move is not None:
                s.act(move)
                return

    async def setup(self, host: str, port: int, n: int, timeout: float) -> None:
        status, body = await http_post_json(
            host, port, "/api/rooms", {"options": {"players": 2}}, timeout)
        if status != 201:
            raise RuntimeError(f"POST /api/rooms: {status} {body}")
        room_id = self.room_id = body["room"]
        for s in self.seats:
            s.ws = await open_ws(host, port, "/ws", "cribbage.v1.json", s.on_text, timeout)
            fut = s.expect("welcome")
            s.ws.send(json.dumps({"type": "hello", "name": f"p{n}s{s.seat}"}))
            await asyncio.wait_for(fut, timeout)
            fut = s.expect("snapshot")
            s.ws.send(json.dumps({"type": "join", "room": room_id, "seat": s.seat}))
            await asyncio.wait_for(fut, timeout)
        end = mono() + timeout
        while any(s.view is None for s in self.seats):  # the game starts after the 2nd join
            if mono() > end:
                raise RuntimeError("the game did not start")
            await asyncio.sleep(0.02)

    def close(self) -> None:
        for s in self.seats:
            if s.ws is not None:
                s.ws.close()


class FloorSeat:
    __slots__ = ("room", "seat", "ws", "version", "waiter", "prefix", "ids")

    def __init__(self, room: FloorRoom, seat: int) -> None:
        self.room = room
        self.seat = seat
        self.ws: LeanWS | None = None
        self.version = -1
        self.waiter: asyncio.Future[dict] | None = None
        self.prefix = f"{os.getpid():x}{id(self) & 0xFFFFFF:x}"
        self.ids = 0

    def on_text(self, data: bytes) -> None:
        t = perf()
        frame = json.loads(data)
        kind = frame["type"]
        room = self.room
        if kind == "update":
            self.version = frame["version"]
            inf = room.inflight
            if inf is not None and inf[0] == self.seat and frame["act"]["action_id"] == inf[3]:
                room.inflight = None
                room.version = self.version
                if STATS.inside(inf[5]):
                    STATS.plays.append(t - inf[4])
                    STATS.accepted += 1
                    STATS.accepted_plays += 1
            room.poke()
        elif kind == "joined":
            self.version = frame["version"]
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(frame)
        else:
            STATS.error(f"floor {kind}")

    def act(self) -> None:
        self.ids += 1
        aid = f"{self.prefix}-{self.ids}"
        card = "5H" if self.ids & 1 else "TD"
        self.room.sent(self.seat, "play", card, aid)
        self.room.next_seat = 1 - self.seat
        self.ws.send(  # type: ignore[union-attr]
            f'{{"type":"act","action_id":"{aid}","action":{{"type":"play","card":"{card}"}}}}')


class FloorRoom(RoomBase):
    def __init__(self, mode: str) -> None:
        super().__init__(mode)
        self.seats = [FloorSeat(self, 0), FloorSeat(self, 1)]
        self.next_seat = 0
        self.version = -1

    def poke(self) -> None:
        if not self.may_act():
            return
        s = self.seats[self.next_seat]
        if s.version >= self.version:  # the next seat has seen the last update
            s.act()

    async def setup(self, host: str, port: int, n: int, room_id: str, timeout: float) -> None:
        for s in self.seats:
            fut = s.waiter = asyncio.get_running_loop().create_future()
            s.ws = await open_ws(host, port, f"/ws?room={room_id}&seat={s.seat}", None,
                                 s.on_text, timeout)
            await asyncio.wait_for(fut, timeout)
        self.version = max(s.version for s in self.seats)

    def close(self) -> None:
        for s in self.seats:
            if s.ws is not None:
                s.ws.close()


class Spectator(asyncio.Protocol):
    """A connection that watches a room and counts what it is sent (bench/spectators.py).

    The handshake, ``hello`` and ``join`` go through :class:`LeanWS`; once joined, the
    connection's transport is handed to this protocol, which reads the server's frames with
    a minimal parser (headers only; payloads are counted, never copied or decoded) and
    answers the server's keepalive pings. Spectators of a real site run on their own
    machines: here they share the server's two cores, so they must cost as little as
    possible, or the bench would measure them."""

    def __init__(self) -> None:
        self.ws: LeanWS | None = None
        self.frames = 0
        self.bytes = 0
        self.snapshots = 0
        self.chats = 0  # chat frames received (a message said at the table)
        self.errors = 0  # error frames received (a chat refused: room_chat_busy …)
        self.said = 0  # chat frames sent
        self.joined: asyncio.Future[None] | None = None
        self.refused: str | None = None
        self.transport: asyncio.Transport | None = None
        self._buf = b""
        self._skip = 0  # payload bytes of the current frame still to come
        self._ping: bytearray | None = None  # the payload of a ping being read

    def on_text(self, data: bytes) -> None:
        self.frames += 1
        self.bytes += len(data)
        if data.startswith(b'{"type":"snapshot"'):
            self.snapshots += 1
        joined = self.joined
        if joined is not None and not joined.done():
            if b'"type":"snapshot"' in data[:40]:
                joined.set_result(None)
            elif b'"type":"error"' in data[:40]:
                self.refused = json.loads(data).get("code")
                joined.set_result(None)

    async def take_over(self) -> None:
        """Read the connection with the minimal parser from the next frame boundary on."""
        ws = self.ws
        assert ws is not None and ws.transport is not None
        for _ in range(500):  # wait until the library's parser holds no partial frame
            if not ws.proto.reader.buffer:
                break
            await asyncio.sleep(0.01)
        self.transport = ws.transport
        ws.transport.set_protocol(self)

    def data_received(self, data: bytes) -> None:
        self.bytes += len(data)
        buf = self._buf + data if self._buf else data
        i, n = 0, len(buf)
        while i < n:
            if self._skip:
                take = min(self._skip, n - i)
                if self._ping is not None:
                    self._ping += buf[i:i + take]
                self._skip -= take
                i += take
                if not self._skip and self._ping is not None:
                    self._pong(bytes(self._ping))
                    self._ping = None
                continue
            if n - i < 2:
                break
            opcode, length = buf[i] & 0x0F, buf[i + 1] & 0x7F
            head = 2
            if length == 126:
                head = 4
                if n - i < head:
                    break
                length = int.from_bytes(buf[i + 2:i + 4], "big")
            elif length == 127:
                head = 10
                if n - i < head:
                    break
                length = int.from_bytes(buf[i + 2:i + 10], "big")
            i += head
            if opcode in (1, 2):
                self.frames += 1
                head8 = buf[i:i + 18]
                if head8 == b'{"type":"snapshot"':
                    self.snapshots += 1
                elif head8.startswith(b'{"type":"chat"'):
                    self.chats += 1
                elif head8.startswith(b'{"type":"error"'):
                    self.errors += 1
            elif opcode == 9:
                self._ping = bytearray()
                if not length:
                    self._pong(b"")
                    self._ping = None
            self._skip = length
        self._buf = buf[i:] if i < n else b""

    def say(self, payload: bytes) -> None:
        """Send one text frame (a client frame: masked; under 126 bytes)."""
        if self.transport is None or self.transport.is_closing():
            return
        mask = os.urandom(4)
        body = bytes(b ^ mask[k % 4] for k, b in enumerate(payload))
        self.transport.write(bytes([0x81, 0x80 | len(payload)]) + mask + body)
        self.said += 1

    def _pong(self, payload: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        mask = os.urandom(4)
        body = bytes(b ^ mask[k % 4] for k, b in enumerate(payload))
        self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + mask + body)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.ws is not None:
            self.ws.closed = True

    async def open(self, host: str, port: int, room: str, name: str, timeout: float,
                   player: list[str] | None = None) -> None:
        self.ws = await open_ws(host, port, "/ws", "cribbage.v1.json", self.on_text, timeout)
        hello: dict[str, Any] = {"type": "hello", "name": name}
        if player:
            hello["player"] = {"id": player[0], "secret": player[1]}
        self.ws.send(json.dumps(hello))
        self.joined = asyncio.get_running_loop().create_future()
        self.ws.send(json.dumps({"type": "join", "room": room, "seat": None}))
        await asyncio.wait_for(self.joined, timeout)

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


# --------------------------------------------------------------------------- commands
class Worker:
    def __init__(self) -> None:
        self.rooms: list[Any] = []
        self.spectators: list[Spectator] = []

    async def setup(self, cmd: dict[str, Any]) -> None:
        global STATS
        STATS = Stats()
        t0 = mono()
        kind, mode = cmd["kind"], cmd["mode"]
        host, port = cmd.get("host", "127.0.0.1"), cmd["port"]
        timeout = cmd.get("timeout", 30.0)
        sem = asyncio.Semaphore(cmd.get("concurrency", 16))
        first = cmd.get("first", 0)
        tag = cmd.get("tag", "r")
        watched = cmd.get("watched", 0)  # the first rooms of this worker are watched

        async def one(i: int) -> Any:
            async with sem:
                if kind == "product":
                    room = ProductRoom(mode)
                    await room.setup(host, port, first + i, timeout)
                else:
                    room = FloorRoom(mode)
                    await room.setup(host, port, first + i, f"{tag}{first + i}", timeout)
                return room

        tasks = [asyncio.ensure_future(one(i)) for i in range(cmd["rooms"])]
        try:
            self.rooms = await asyncio.wait_for(asyncio.gather(*tasks), cmd.get("setup_timeout",
                                                                               300.0))
        except BaseException:
            for t in tasks:
                t.cancel()
            for t in tasks:
                if t.done() and not t.cancelled() and t.exception() is None:
                    t.result().close()
            raise
        # The rooms live until the phase ends: keep them out of the cyclic collector's scans
        # (collections in the client would add to the latencies it measures: gc_max_ms).
        for room in self.rooms[:watched]:
            room.watched = True
        gc.collect()
        gc.freeze()
        emit({"event": "ready", "rooms": len(self.rooms), "seconds": mono() - t0,
              "watched_rooms": [r.room_id for r in self.rooms[:watched]]})

    async def run(self, cmd: dict[str, Any]) -> None:
        STATS.start, STATS.end = cmd["start"], cmd["end"]
        STATS.gc_max = STATS.gc_total = 0.0
        # What the client allocates while running (decoded frames, patches, act texts) is
        # freed by reference counting; no cyclic collection may pause it (until close).
        gc.disable()
        act_timeout = cmd.get("act_timeout", 30.0)
        loop = asyncio.get_running_loop()
        now = mono()
        for room in self.rooms:
            room.running = True
        if cmd.get("mode", "closed") == "paced":
            period = 1.0 / cmd.get("rate", 1.0)
            watched_period = 1.0 / cmd.get("watched_rate", cmd.get("rate", 1.0))
            rng = random.Random(cmd.get("seed", 1))
            loop_now = loop.time()  # loop.time() is monotonic too; offset from mono()

            def schedule(room: Any, due: float) -> None:
                if due >= STATS.end:
                    return

                def fire() -> None:
                    room.timer = None
                    room.tick()
                    schedule(room, due + (watched_period if room.watched else period))

                room.timer = loop.call_at(loop_now + (due - now), fire)

            # A deal of 2 is 10 actions (2 discards, 8 plays); rooms that all started together
            # would count their shows in the same second. Each room sits out 0-9 of its first
            # seconds (no more than the warm-up allows), so deals end at all times.
            skip_max = max(0, min(10, int((STATS.start - now) / period) - 1))
            for room in self.rooms:
                room.skip = rng.randrange(skip_max) if skip_max else 0
                schedule(room, now + rng.random() * period)
        else:
            for room in self.rooms:
                room.poke()
        next_progress = now + 5.0
        while mono() < STATS.end:
            await asyncio.sleep(min(0.5, max(0.0, STATS.end - mono())))
            t = mono()
            for room in self.rooms:
                room.check_timeout(t, act_timeout)
                if room.mode == "closed":
                    room.poke()  # a room that missed a poke (e.g. after a reject) resumes
            if t >= next_progress and t < STATS.end:
                emit({"event": "progress", "plays": len(STATS.plays), "accepted": STATS.accepted,
                      "errors": sum(STATS.errors.values()), "in_window": t >= STATS.start})
                next_progress += 5.0
        # Let the acts sent inside the window be answered (bounded).
        grace_end = mono() + cmd.get("grace", 10.0)
        while mono() < grace_end and any(
                r.inflight is not None and STATS.inside(r.inflight[5]) for r in self.rooms):
            await asyncio.sleep(0.05)
        unanswered = 0
        p_now = perf()
        for room in self.rooms:
            room.running = False
            inf = room.inflight
            if inf is not None and STATS.inside(inf[5]):
                unanswered += 1
                if inf[1] == "play" and len(inf) == 6:
                    STATS.plays.append(p_now - inf[4])  # a lower bound, so the tail shows it
            if room.timer is not None:
                room.timer.cancel()
                room.timer = None
        emit({
            "event": "result",
            "rooms": len(self.rooms),
            "plays_us": [round(x * 1e6) for x in STATS.plays],
            "acks_us": [round(x * 1e6) for x in STATS.acks],
            "watched_acks_us": [round(x * 1e6) for x in STATS.watched_acks],
            "watched_plays_us": [round(x * 1e6) for x in STATS.watched_plays],
            "accepted": STATS.accepted,
            "accepted_plays": STATS.accepted_plays,
            "games_finished": STATS.games_finished,
            "missed_ticks": STATS.missed_ticks,
            "rejects": STATS.rejects,
            "errors": STATS.errors,
            "snapshots": STATS.snapshots,
            "unanswered": unanswered,
            "gc_max_ms": STATS.gc_max * 1000,
            "gc_total_ms": STATS.gc_total * 1000,
        })

    async def watch(self, cmd: dict[str, Any]) -> None:
        """Open ``count`` spectators of room ``room`` (``hello``, ``join`` without a seat);
        they read every frame and count it without decoding it. ``stalled`` of them stop
        reading after their join (a slow client: TCP pushes back on the server)."""
        host, port = cmd.get("host", "127.0.0.1"), cmd["port"]
        timeout = cmd.get("timeout", 30.0)
        sem = asyncio.Semaphore(cmd.get("concurrency", 32))
        t0 = mono()
        refused: dict[str, int] = {}

        async def one(i: int) -> Spectator | None:
            async with sem:
                spectator = Spectator()
                players = cmd.get("players") or []
                await spectator.open(host, port, cmd["room"], f"w{i}", timeout,
                                     players[i] if i < len(players) else None)
                if spectator.refused is not None:
                    refused[spectator.refused] = refused.get(spectator.refused, 0) + 1
                    spectator.close()
                    return None
                if i < cmd.get("stalled", 0) and spectator.ws is not None \
                        and spectator.ws.transport is not None:
                    spectator.ws.transport.pause_reading()
                else:
                    await spectator.take_over()
                return spectator

        made = await asyncio.wait_for(
            asyncio.gather(*(one(i) for i in range(cmd["count"]))), cmd.get("setup_timeout",
                                                                            600.0))
        self.spectators = [s for s in made if s is not None]
        gc.collect()
        gc.freeze()
        emit({"event": "watching", "spectators": len(self.spectators), "refused": refused,
              "seconds": mono() - t0})

    async def chat_start(self, cmd: dict[str, Any]) -> None:
        """Every spectator says a preset phrase ``rate`` times a second (spread evenly over
        the second, in ticks of 0.05 s) until ``chat_stop``."""
        rate = float(cmd.get("rate", 1.0))
        frame = json.dumps({"type": "chat", "preset": cmd.get("preset", "wow")},
                           separators=(",", ":")).encode()

        async def loop() -> None:
            tick, k = 0.05, 0
            n = len(self.spectators)
            per_tick = n * rate * tick
            owed = 0.0
            while True:
                owed += per_tick
                while owed >= 1 and n:
                    self.spectators[k % n].say(frame)
                    k += 1
                    owed -= 1
                await asyncio.sleep(tick)

        self.chat_task = asyncio.ensure_future(loop())
        emit({"event": "chatting", "spectators": len(self.spectators)})

    async def chat_stop(self) -> None:
        task = getattr(self, "chat_task", None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.chat_task = None
        emit({"event": "chat_stopped"})

    def watch_stats(self) -> None:
        """What the spectators have received so far."""
        emit({"event": "watch_stats",
              "chats": sum(s.chats for s in self.spectators),
              "errors": sum(s.errors for s in self.spectators),
              "said": sum(s.said for s in self.spectators),
              "frames": sum(s.frames for s in self.spectators),
              "bytes": sum(s.bytes for s in self.spectators),
              "snapshots": sum(s.snapshots for s in self.spectators),
              "open": sum(1 for s in self.spectators if s.ws is not None and not s.ws.closed)})

    async def close(self) -> None:
        task = getattr(self, "chat_task", None)
        if task is not None:
            task.cancel()
            self.chat_task = None
        for room in self.rooms:
            room.close()
        self.rooms = []
        for spectator in self.spectators:
            spectator.close()
        self.spectators = []
        gc.unfreeze()
        gc.enable()
        await asyncio.sleep(0.2)
        emit({"event": "closed"})


async def main_async() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    worker = Worker()
    emit({"event": "started", "pid": os.getpid()})
    while True:
        line = await reader.readline()
        if not line:
            break
        cmd = json.loads(line)
        try:
            if cmd["cmd"] == "setup":
                await worker.setup(cmd)
            elif cmd["cmd"] == "run":
                await worker.run(cmd)
            elif cmd["cmd"] == "watch":
                await worker.watch(cmd)
            elif cmd["cmd"] == "watch_stats":
                worker.watch_stats()
            elif cmd["cmd"] == "chat_start":
                await worker.chat_start(cmd)
            elif cmd["cmd"] == "chat_stop":
                await worker.chat_stop()
            elif cmd["cmd"] == "close":
                await worker.close()
            elif cmd["cmd"] == "exit":
                break
        except Exception as exc:  # reported to the parent, which stops the run
            emit({"event": "error", "message": f"{type(exc).__name__}: {exc}"})
    await worker.close()


def main() -> None:
    try:
        import uvloop

        uvloop.run(main_async())
    except ImportError:
        asyncio.run(main_async())


if __name__ == "__main__":
    main()
