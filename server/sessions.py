"""WebSocket sessions and the per-process fan-out of room changes to them.

A :class:`Session` is one WebSocket connection: it decodes frames (``protocol.codec``),
answers ``hello``/``ping``, asks the room service to create rooms, seat players and apply
actions, and sends each connection what its seat may see: a ``snapshot`` on join, then one
``update`` per accepted change, holding the events redacted for that seat
(``engine.redact_event``) and the RFC 6902 patch from the view it last sent to the new view.

:class:`LocalRooms` subscribes this process to the channel of every room that has a local
session and hands each published change to those sessions. Views and redacted events are
computed once per (version, seat) and shared by the sessions of one seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

import engine
from engine.computer import suggest
from protocol import messages as m
from protocol.codec import Codec, ProtocolError, decode_client
from protocol.events import redact as redact_event
from protocol.patch import diff

from .broker import Broker
from .computer_seats import ComputerSeats, seat_knowledge
from .rooms import RoomError, RoomService
from .settings import Settings
from .store.base import RoomRecord

log = logging.getLogger(__name__)

SERVER_NAME = "cribbage-server/0.1"
DELIVERY_WAIT_SECONDS = 5.0
"""How long an ``act`` waits for its own update to reach the session before resyncing."""


@dataclass
class VersionData:
    """One version of a room as this process knows it, with per-seat caches.

    ``previous`` is the room's version just before this one when this process knew it
    (its views let this version's views share their unchanged parts, see
    ``engine.view``'s ``since``); only the newest version keeps that link, so versions do
    not chain up in memory.

    Views are shared by every session of a seat and by the patches sent from them: they
    must never be mutated.
    """

    record: RoomRecord
    events: list[dict[str, Any]]
    seats_changed: bool
    _state: engine.GameState | None = None
    previous: VersionData | None = None
    _views: dict[int | None, dict[str, Any] | None] = field(default_factory=dict)
    _events: dict[int | None, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def version(self) -> int:
        """The room version."""
        return self.record.version

    def state(self) -> engine.GameState | None:
        """The game state (None before the game starts), decoded once (never mutate it)."""
        if self._state is None and self.record.state is not None:
            self._state = engine.GameState.from_dict(self.record.state)
        return self._state

    def view(self, seat: int | None) -> dict[str, Any] | None:
        """``engine.view(state, seat)`` (None before the game starts), computed once."""
        if seat not in self._views:
            state = self.state()
            if state is None:
                self._views[seat] = None
            else:
                since = None
                prev = self.previous
                if prev is not None and prev._state is not None:
                    before = prev._views.get(seat)
                    if before is not None:
                        since = (prev._state, before)
                self._views[seat] = engine.view(state, seat, since)
        return self._views[seat]

    def events_for(self, seat: int | None) -> list[dict[str, Any]]:
        """The events as ``seat`` may see them (:func:`redact`)."""
        if seat not in self._events:
            self._events[seat] = [redact(e, seat) for e in self.events]
        return self._events[seat]


def redact(event: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """An event (engine or server) as ``seat`` may see it: ``protocol.events.redact``, the
    one default-deny table of what each seat sees of every event type."""
    return redact_event(event, seat)


def seat_infos(record: RoomRecord, presence: dict[int, int]) -> list[dict[str, Any]]:
    """Public seat facts of a room, as ``SeatInfo`` plain data: ``{"seat", "taken", "name",
    "kind", "connected", "level", "computer_standin"}`` (``level``: a computer seat's level,
    or ``standard`` for a human seat while a computer stands in for it)."""
    return [
        {
            "seat": i,
            "taken": s.taken,
            "name": s.name,
            "kind": s.kind,
            "connected": presence.get(i, 0) > 0,
            "level": s.playing_level,
            "computer_standin": s.standin,
        }
        for i, s in enumerate(record.seats)
    ]


def room_created(
    record: RoomRecord, creator: str, base_url: str, settings: dict[str, Any]
) -> dict[str, Any]:
    """The ``room_created`` message (also the body of ``POST /api/rooms``'s answer, less
    ``type``): ``{"type", "room", "url", "options", "creator_token", "room_settings",
    "computers"}`` (``computers``: seat (as text) -> level)."""
    return {
        "type": "room_created",
        "room": record.id,
        "url": f"{base_url.rstrip('/')}/r/{record.id}",
        "options": record.options,
        "creator_token": creator,
        "room_settings": settings,
        "computers": {str(i): s.level for i, s in enumerate(record.seats)
                      if s.kind == "computer"},
    }


class LocalRoom:
    """The sessions of one room in this process, and the room's recent versions."""

    KEEP_VERSIONS = 16

    def __init__(self, room_id: str) -> None:
        self.room_id = room_id
        self.sessions: set[Session] = set()
        self.presence: dict[int, int] = {}
        self.versions: OrderedDict[int, VersionData] = OrderedDict()
        self.ready: asyncio.Future[None] | None = None

    def ingest(
        self,
        record: RoomRecord,
        events: list[dict[str, Any]],
        seats_changed: bool,
        state: engine.GameState | None = None,
    ) -> VersionData:
        """Remember a version (or return the one already known).

        ``state``: ``record.state`` as a :class:`engine.GameState` when the caller has it
        (saves decoding it again)."""
        data = self.versions.get(record.version)
        if data is None:
            data = VersionData(record, events, seats_changed, state)
            self.versions[record.version] = data
            prev = self.versions.get(record.version - 1)
            if prev is not None:
                prev.previous = None
                data.previous = prev
            while len(self.versions) > self.KEEP_VERSIONS:
                self.versions.popitem(last=False)
        elif data._state is None and state is not None:
            data._state = state
        return data

    def latest(self) -> VersionData | None:
        """The newest known version, if any."""
        if not self.versions:
            return None
        return self.versions[max(self.versions)]

    def seats(self, record: RoomRecord) -> list[dict[str, Any]]:
        """Seat facts with this process's view of presence."""
        return seat_infos(record, self.presence)


class LocalRooms:
    """Subscriptions of this process to rooms with local sessions, and the fan-out."""

    def __init__(self, broker: Broker, service: RoomService) -> None:
        self.broker = broker
        self.service = service
        self.rooms: dict[str, LocalRoom] = {}
        self._lock = asyncio.Lock()

    async def attach(self, room_id: str, session: Session) -> LocalRoom:
        """Add a session to a room, subscribing this process to the room first if needed.

        Returns once the subscription is active, so a read of the room made afterwards
        cannot miss a later change.
        """
        async with self._lock:
            local = self.rooms.get(room_id)
            if local is None:
                local = LocalRoom(room_id)
                self.rooms[room_id] = local
                await self.broker.subscribe(room_id, lambda msg: self._on_message(local, msg))
                with contextlib.suppress(Exception):
                    local.presence = await self.service.store.presence(room_id)
            local.sessions.add(session)
            return local

    async def detach(self, room_id: str, session: Session) -> None:
        """Remove a session; unsubscribe when it was the room's last local session."""
        async with self._lock:
            local = self.rooms.get(room_id)
            if local is None:
                return
            local.sessions.discard(session)
            if not local.sessions:
                del self.rooms[room_id]
                self.service.forget(room_id)
                with contextlib.suppress(Exception):
                    await self.broker.unsubscribe(room_id)

    def _on_message(self, local: LocalRoom, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "u":
            # A message this process published itself may come with the committed record
            # and engine state (server.broker.PublishedMessages) instead of "room".
            record = msg.get("record")
            if record is None:
                record = RoomRecord.from_dict(msg["room"])
            state = msg.get("state")
            self.service.remember(record, state)
            data = local.ingest(
                record, msg.get("events", []), bool(msg.get("seats_changed")), state
            )
            for session in list(local.sessions):
                session.on_version(local, data)
            for event in data.events:
                if event.get("type") == "computer_standin":
                    # A stand-in starts (the player is away) or ends (the owner is back).
                    self._presence(local, int(event["seat"]), not event.get("active"),
                                   event.get("name"), bool(event.get("active")))
        elif kind == "p":
            seat = int(msg["seat"])
            local.presence[seat] = 1 if msg.get("connected") else 0
            latest = local.latest()
            standin = bool(
                latest is not None and 0 <= seat < len(latest.record.seats)
                and latest.record.seats[seat].standin
            )
            self._presence(local, seat, bool(msg.get("connected")), msg.get("name"), standin)

    @staticmethod
    def _presence(
        local: LocalRoom, seat: int, connected: bool, name: str | None, standin: bool
    ) -> None:
        frame = {
            "type": "presence",
            "room": local.room_id,
            "seat": seat,
            "connected": connected,
            "name": name,
            "computer_standin": standin,
        }
        for session in list(local.sessions):
            session.on_presence(frame)


class Session:
    """One WebSocket connection.

    Args:
        websocket: the accepted starlette WebSocket.
        codec: the connection's encoding (from the negotiated subprotocol).
        service: the room service.
        rooms: this process's :class:`LocalRooms`.
        settings: server settings (frame size, queue limit).
        base_url: used to build share links, e.g. ``http://host:8000``.
        computers: computer seats and takeovers (told when a seat's connections come and
            go); None disables takeovers.
    """

    def __init__(
        self,
        websocket: WebSocket,
        codec: Codec,
        service: RoomService,
        rooms: LocalRooms,
        settings: Settings,
        base_url: str,
        computers: ComputerSeats | None = None,
    ) -> None:
        self.ws = websocket
        self.computers = computers
        self.codec = codec
        self.service = service
        self.rooms = rooms
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        self.name: str | None = None
        self.player_token: str | None = None
        self.local: LocalRoom | None = None
        self.seat: int | None = None
        self.seat_token: str | None = None
        self.seat_name: str | None = None
        self.last_version = -1
        self.last_view: dict[str, Any] | None = None
        self._joining = False
        self._buffer: list[VersionData] = []
        self._progress = asyncio.Event()
        self._queue: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._closing = False

    # -- outgoing ------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Queue one message (plain data of a server message) for sending, in order.

        A connection that lets more than ``send_queue_limit`` frames pile up is closed.
        """
        if self._closing:
            return
        if self._queue.qsize() >= self.settings.send_queue_limit:
            log.warning("closing a connection that does not read its frames")
            self._closing = True
            self._queue.put_nowait(None)
            return
        self._queue.put_nowait(self.codec.encode(message))

    async def _writer(self) -> None:
        while True:
            frame = await self._queue.get()
            if frame is None:
                with contextlib.suppress(Exception):
                    await self.ws.close(code=1013)
                return
            try:
                if isinstance(frame, str):
                    await self.ws.send_text(frame)
                else:
                    await self.ws.send_bytes(frame)
            except Exception:
                self._closing = True
                return

    def error(self, code: str, message: str, ref: str | None = None) -> None:
        """Send an ``error`` frame."""
        self.send({"type": "error", "code": code, "message": message, "ref": ref})

    # -- incoming ------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the connection until it closes. Never raises for anything a client sends."""
        writer = asyncio.create_task(self._writer())
        try:
            while not self._closing:
                msg = await self.ws.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                frame = msg.get("text")
                if frame is None:
                    frame = msg.get("bytes")
                if frame is None:
                    continue
                await self.handle_frame(frame)
        except Exception:
            log.exception("session loop failed")
        finally:
            self._closing = True
            with contextlib.suppress(Exception):
                await self._leave_room()
            self._queue.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 1.0)
            if not writer.done():
                writer.cancel()
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                with contextlib.suppress(Exception):
                    await self.ws.close()

    async def handle_frame(self, frame: str | bytes) -> None:
        """Decode and handle one client frame; every failure becomes a frame to the client."""
        try:
            message = decode_client(
                frame, self.codec.encoding, max_bytes=self.settings.max_frame_bytes
            )
        except ProtocolError as exc:
            raw = exc.raw if isinstance(exc.raw, dict) else None
            action_id = raw.get("action_id") if raw else None
            if (
                exc.code == "bad_message"
                and exc.ref == "act"
                and isinstance(action_id, str)
                and 0 < len(action_id) <= 64
            ):
                self.send({"type": "reject", "action_id": action_id, "code": "bad_action",
                           "message": exc.message})
            else:
                self.error(exc.code, exc.message, exc.ref)
            return
        try:
            await self.handle(message)
        except RoomError as exc:
            self.error(exc.code, exc.message, message.type)
        except Exception:
            log.exception("handling %s failed", message.type)
            self.error("internal", "the server could not handle this message", message.type)

    async def handle(self, message: Any) -> None:
        """Handle one validated client message."""
        kind = message.type
        if kind == "ping":
            self.send({"type": "pong", "nonce": message.nonce, "time": time.time()})
        elif kind == "hello":
            await self._hello(message)
        elif self.player_token is None:
            self.error("hello_required", "say hello first", kind)
        elif kind == "create_room":
            record, creator = await self.service.create_room(
                message.options.model_dump(),
                computers=dict(message.computers),
                room=message.room.model_dump(),
            )
            self.send(room_created(record, creator, self.base_url,
                                   self.service.room_settings(record)))
        elif kind == "set_computer":
            room_id = message.room or (self.local.room_id if self.local else None)
            if room_id is None:
                self.error("not_joined", "join the room (or name it) first", kind)
                return
            await self.service.set_computer(
                room_id, message.seat, message.level, message.creator_token
            )
        elif kind == "hint":
            await self._hint()
        elif kind == "join":
            await self._join(message)
        elif kind == "act":
            await self._act(message)
        elif kind == "resync":
            if self.local is None:
                self.error("not_joined", "join a room first", kind)
            else:
                record = await self.service.load(self.local.room_id)
                self._send_snapshot(record)
        elif kind == "leave":
            if self.local is None:
                self.error("not_joined", "join a room first", kind)
            else:
                room_id = self.local.room_id
                await self._leave_room()
                self.send({"type": "left", "room": room_id})

    async def _hint(self) -> None:
        """Answer ``hint``: the ``standard`` player's suggestion for this seat, from the
        seat's view and legal actions (``engine.computer.suggest``)."""
        if self.local is None or self.seat is None:
            self.error("not_seated", "join a room in a seat first", "hint")
            return
        record = await self.service.load(self.local.room_id)
        if not self.service.room_settings(record)["hints"]:
            self.error("hints_disabled", "this room does not allow hints", "hint")
            return
        if record.state is None:
            suggestion: dict[str, Any] = {"kind": "none", "best": None}
        else:
            view, legal = seat_knowledge(record.state, self.seat)
            suggestion = suggest(view, legal)
        self.send({"type": "hint", "room": record.id, "seat": self.seat,
                   "version": record.version, "suggestion": suggestion})

    async def _hello(self, message: m.Hello) -> None:
        if self.player_token is not None:
            self.error("already_welcomed", "hello was already said on this connection", "hello")
            return
        self.name = message.name
        # Only a token this server issued is taken back; any other (made up by a client,
        # or from a deployment with another secret) is replaced by a fresh one, so nobody
        # can bind a seat to a guessable token.
        known = message.token is not None and self.service.tokens.is_issued(message.token)
        self.player_token = message.token if known else self.service.tokens.issue()
        self.send({
            "type": "welcome",
            "protocol": m.PROTOCOL_VERSION,
            "encoding": self.codec.encoding,
            "player_token": self.player_token,
            "name": self.name,
            "server": SERVER_NAME,
            "max_frame_bytes": self.settings.max_frame_bytes,
        })

    async def _join(self, message: m.Join) -> None:
        await self._leave_room()
        if message.token is not None and not self.service.tokens.is_issued(message.token):
            self.error("bad_token", "that token was not issued by this server", "join")
            return
        token = message.token or self.player_token
        assert token is not None and self.name is not None
        local = await self.rooms.attach(message.room, self)
        self.local = local
        self._joining = True
        self._buffer = []
        try:
            result = await self.service.join(
                message.room, message.seat, token, self.name, token_given=bool(message.token)
            )
        except BaseException:
            self._joining = False
            self.local = None
            await self.rooms.detach(message.room, self)
            raise
        self.seat = result.seat
        self.seat_token = token if result.seat is not None else None
        if result.seat is not None:
            # Presence names the seat as the table knows it, not this connection's hello.
            self.seat_name = result.record.seats[result.seat].name or self.name
            with contextlib.suppress(Exception):
                await self.service.store.presence_change(
                    message.room, result.seat, +1, self.seat_name
                )
            if self.computers is not None:
                try:
                    await self.computers.seat_connected(message.room, result.seat)
                except Exception:
                    log.exception("could not cancel the takeover of seat %s", result.seat)
        local.ingest(result.record, [], False)
        self._send_snapshot(result.record, seat_token=self.seat_token)
        self._joining = False
        buffered, self._buffer = self._buffer, []
        for data in buffered:
            self.on_version(local, data)

    async def _leave_room(self) -> None:
        local, seat = self.local, self.seat
        if local is None:
            return
        self.local = None
        self.seat = None
        self.seat_token = None
        self.last_version = -1
        self.last_view = None
        if seat is not None:
            left = 1
            with contextlib.suppress(Exception):
                left = await self.service.store.presence_change(
                    local.room_id, seat, -1, self.seat_name or self.name
                )
            if left == 0 and self.computers is not None:
                try:
                    await self.computers.seat_disconnected(local.room_id, seat)
                except Exception:
                    log.exception("could not record the takeover of seat %s", seat)
        await self.rooms.detach(local.room_id, self)

    async def _act(self, message: m.Act) -> None:
        action_id = message.action_id
        if self.local is None or self.seat is None or self.seat_token is None:
            self.send({"type": "reject", "action_id": action_id, "code": "not_seated",
                       "message": "join a room in a seat first"})
            return
        local, seat = self.local, self.seat
        action = message.action.model_dump(exclude_none=True)
        try:
            result = await self.service.act(
                local.room_id, seat, self.seat_token, action_id, action
            )
        except engine.RulesError as exc:
            self.send({"type": "reject", "action_id": action_id, "code": exc.code,
                       "message": exc.message})
            return
        except RoomError as exc:
            self.send({"type": "reject", "action_id": action_id, "code": exc.code,
                       "message": exc.message})
            return
        if result.record is not None and self.local is local:
            # Send our own update at once when nothing is missing before it, instead of
            # waiting for it to come back through the room's channel.
            if result.version not in local.versions and self.last_version == result.version - 1:
                self.on_version(
                    local, local.ingest(result.record, result.events, False, result.state)
                )
        await self._wait_for(result.version)
        self.send({"type": "ack", "action_id": action_id, "version": result.version,
                   "duplicate": result.duplicate})

    async def _wait_for(self, version: int) -> None:
        deadline = time.monotonic() + DELIVERY_WAIT_SECONDS
        while self.local is not None and self.last_version < version:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                record = await self.service.load(self.local.room_id)
                self._send_snapshot(record)
                return
            event = self._progress
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)

    def _advance(self, version: int, view: dict[str, Any] | None) -> None:
        self.last_version = version
        self.last_view = view
        self._progress.set()
        self._progress = asyncio.Event()

    def _send_snapshot(self, record: RoomRecord, seat_token: str | None = None) -> None:
        local = self.local
        assert local is not None
        data = local.ingest(record, [], False)
        view = data.view(self.seat)
        frame: dict[str, Any] = {
            "type": "snapshot",
            "room": record.id,
            "version": record.version,
            "seat": self.seat,
            "status": record.status,
            "options": record.options,
            "room_settings": self.service.room_settings(record),
            "seats": local.seats(record),
            "view": view,
        }
        if seat_token is not None:
            frame["seat_token"] = seat_token
        self.send(frame)
        self._advance(record.version, view)

    # -- from the room's channel ----------------------------------------------------------
    def on_version(self, local: LocalRoom, data: VersionData) -> None:
        """A new version of the room: send this connection its update (or a snapshot when
        versions are missing in between). Called on the event loop; never blocks."""
        if self._joining:
            self._buffer.append(data)
            return
        if self.local is not local or data.version <= self.last_version:
            return
        if data.version != self.last_version + 1:
            self._send_snapshot(data.record)
            return
        view = data.view(self.seat)
        frame: dict[str, Any] = {
            "type": "update",
            "room": local.room_id,
            "version": data.version,
            "status": data.record.status,
            "events": data.events_for(self.seat),
            "patch": diff(self.last_view, view),
        }
        if data.seats_changed:
            frame["seats"] = local.seats(data.record)
        self.send(frame)
        self._advance(data.version, view)

    def on_presence(self, frame: dict[str, Any]) -> None:
        """A seat's presence changed: forward it."""
        if not self._joining:
            self.send(frame)

