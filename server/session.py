"""One WebSocket connection: decode, dispatch by message type, answer.

A :class:`Session` decodes each frame (``protocol.codec``), dispatches it by type to a
handler, asks the room service to create rooms, seat players and apply actions, and sends
the connection what its seat may see: a ``snapshot`` on join, then one ``update`` per
accepted change (``server.fanout`` calls :meth:`Session.on_version`). Every frame it sends
is built by ``server.frames``.

Its connection state is explicit (:class:`SessionState`): ``CONNECTED`` until ``hello``,
``READY`` after it, ``IN_ROOM`` while it follows a room (as a seat or a spectator),
``CLOSING`` once it is ending. Store outages are answered honestly: ``store_unavailable``
when nothing happened, ``outcome_unknown`` (for an ``act``, with its ``action_id``) when a
write may have been applied (re-send the same ``action_id`` to learn the outcome).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

import engine
from engine.computer import suggest
from protocol import messages as m
from protocol.codec import Codec, ProtocolError, decode_client
from protocol.patch import diff

from . import frames
from .budgets.base import TAKEN_FREE, Ticket
from .chat import handlers as chat_handlers
from .chat import rules as chat_rules
from .computer_seats import seat_knowledge
from .fanout import LocalRoom, LocalRooms
from .hints import SEARCHED as SEARCHED_HINTS
from .hints import HintDesk, HintsBusy
from .limits import AddressLimits, FrameBucket
from .lobby.service import LobbyLimit
from .matchmaking import handlers as queue_handlers
from .metrics import Metrics
from .overload import ActionGate
from .rooms import RoomError, RoomService, hash_token
from .settings import Settings
from .social.handlers import on_challenge, on_challenge_answer
from .store.base import OutcomeUnknown, RoomRecord, StoreError, StoreUnavailable
from .views import VersionData, redact
from .wsguard import PREPARED_SEND

log = logging.getLogger(__name__)

DELIVERY_WAIT_SECONDS = 5.0
"""How long an ``act`` waits for its own update to reach the session before resyncing."""

MAX_MISSED_VERSIONS = 500
"""Most versions a snapshot's ``missed`` carries (a client further behind reads
``history``)."""


class SessionState(enum.Enum):
    """Where a connection is in the protocol."""

    CONNECTED = "connected"
    """Accepted; only ``hello`` and ``ping`` are taken."""
    READY = "ready"
    """Said hello; may create rooms and join one."""
    IN_ROOM = "in_room"
    """Follows a room, as a seat or a spectator."""
    CLOSING = "closing"
    """Ending; nothing more is sent."""


class Session:
    """One WebSocket connection.

    Args:
        websocket: the accepted starlette WebSocket.
        codec: the connection's encoding (from the negotiated subprotocol).
        service: the room service.
        rooms: this process's :class:`LocalRooms`.
        settings: server settings (frame size, queue limit).
        base_url: used to build share links, e.g. ``http://host:8000``.
        metrics: the app's metrics (actions counted and timed), or None.
        address: the client's budget key (per-address limits: its address, an IPv6
            client's /64), e.g. ``"203.0.113.7"``.
        limits: the process's per-address limits, or None for none.
    """

    def __init__(
        self,
        websocket: WebSocket,
        codec: Codec,
        service: RoomService,
        rooms: LocalRooms,
        settings: Settings,
        base_url: str,
        metrics: Metrics | None = None,
        address: str = "unknown",
        limits: AddressLimits | None = None,
        actions: ActionGate | None = None,
        players: Any = None,
        lobby: Any = None,
        social: Any = None,
        chat: Any = None,
    ) -> None:
        self.ws = websocket
        self.chat = chat
        """The process's ``server.chat.service.ChatService`` (None: chat is refused as not
        joined)."""
        self.not_heard: set[str] = set()
        """Players whose messages this connection's player does not get (muted, blocked
        either way), loaded at ``hello``."""
        self.computers: Any = None
        """The process's ``server.computer_seats.ComputerSeats`` (hints are made in its
        computer processes); set by ``server.app``."""
        self.hints: HintDesk | None = None
        """The process's ``server.hints.HintDesk`` (None: each hint is made afresh, with
        no bound); set by ``server.app``."""
        self.sanctions: Any = None
        """The process's ``server.moderation.sanctions.Sanctions`` (None: nobody is
        banned); set by ``server.app``."""
        self.private = False
        """Whether this connection's player keeps a private profile (chat then shows no
        player id)."""
        self._chat_held: list[dict[str, Any]] = []
        """Chat entries that came while this connection was joining (sent after the
        snapshot, unless the snapshot had them)."""
        self.social = social
        """The process's ``server.social.service.SocialService`` (challenges, blocks, online
        now), or None."""
        self.players = players
        self.lobby = lobby
        """The process's ``server.lobby.service.Lobby`` (None: lobby_subscribe is refused
        as not available)."""
        self.language: str | None = None
        """``hello.language``: the default language of the rooms this connection makes."""
        """The process's ``server.players.PlayerStore`` (None: hello.player is refused)."""
        self.matchmaking: Any = None
        """The process's ``server.matchmaking.matcher.Matchmaker`` (None: no quick match)."""
        self.player: str | None = None
        """The id of the player this connection's hello presented (authenticated)."""
        self.actions = actions if actions is not None and actions.enabled else None
        self.address = address
        self.limits = limits
        self.bucket = (
            FrameBucket(settings.frame_rate, settings.frame_burst, settings.flood_refusals,
                        settings.flood_window_seconds)
            if settings.frame_rate > 0 else None
        )
        self.last_frame = time.monotonic()
        self._close_code = 1013
        self._timer: asyncio.TimerHandle | None = None
        self.metrics = metrics
        self.codec = codec
        self.service = service
        self.rooms = rooms
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        self.state = SessionState.CONNECTED
        self.name: str | None = None
        self.player_token: str | None = None
        self.local: LocalRoom | None = None
        self.seat: int | None = None
        self.seat_token: str | None = None
        self.watching = False
        """Whether this connection counts as a spectator of its room (the cap
        ``max_spectators_per_room``, ``Presence.watch``)."""
        self.last_version = -1
        self.last_view: dict[str, Any] | None = None
        self._joining = False
        self._told: dict[int, tuple[bool, str | None, bool]] = {}
        """Per seat, the presence this connection was last told (``connected``, name,
        stand-in) by a snapshot, an update's ``seats`` or a presence frame."""
        self._buffer: list[VersionData] = []
        self._progress = asyncio.Event()
        self._queue: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        scope = getattr(websocket, "scope", None) or {}  # (bench/accounting.py has none)
        prepared = (scope.get("extensions") or {}).get(PREPARED_SEND)
        self._prepared: Callable[[bytes], bool] | None = (
            prepared["send"] if isinstance(prepared, dict) else None)
        """The socket's direct write of a prepared frame (``server.wsguard``), if offered."""

    # -- outgoing ------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Queue one message (plain data of a server message) for sending, in order.

        A connection that lets more than ``send_queue_limit`` frames pile up is closed.
        """
        if self.state is SessionState.CLOSING:
            return
        if self._queue.qsize() >= self.settings.send_queue_limit:
            log.warning("closing a connection that does not read its frames")
            self.state = SessionState.CLOSING
            self._queue.put_nowait(None)
            return
        self._queue.put_nowait(self.codec.encode(message))

    def send_shared(self, frame: str | bytes, wire: bytes, backlog: int) -> bool:
        """Send a frame a spectator feed shares among many connections: ``frame`` encoded,
        ``wire`` the same as a whole WebSocket frame (``server.wsguard.prepared_frame``).
        With nothing queued before it, ``wire`` is written to the socket at once (no task
        switch: the writer is idle); otherwise ``frame`` is queued behind the rest, unless
        more than ``backlog`` frames are queued already.

        Returns:
            Whether it was sent or queued (False: this connection reads slowly — its socket
            buffer or its queue is full — or is closing).
        """
        if self.state is SessionState.CLOSING:
            return False
        if self._queue.empty() and self._prepared is not None:
            # The writer has nothing in hand (a frame it took is written before it waits,
            # unless the socket is full, and then this write is refused too), so writing
            # here keeps the order of the connection's frames.
            return bool(self._prepared(wire))
        if self._queue.qsize() > backlog:
            return False
        self._queue.put_nowait(frame)
        return True

    def watched(self, version: int, view: dict[str, Any] | None) -> None:
        """A spectator feed sent this connection ``version`` (whose view is ``view``)."""
        self.last_version = version
        self.last_view = view

    async def _writer(self) -> None:
        while True:
            frame = await self._queue.get()
            if frame is None:
                with contextlib.suppress(Exception):
                    await self.ws.close(code=self._close_code)
                return
            try:
                if isinstance(frame, str):
                    await self.ws.send_text(frame)
                else:
                    await self.ws.send_bytes(frame)
            except Exception:
                self.state = SessionState.CLOSING
                return

    def error(self, code: str, message: str, ref: str | None = None,
              retry_after: float | None = None) -> None:
        """Send an ``error`` frame."""
        self.send(frames.error(code, message, ref, retry_after))

    def close(self, code: int) -> None:
        """Close the connection with ``code`` once the frames already queued are sent."""
        if self.state is SessionState.CLOSING:
            return
        self._close_code = code
        self.state = SessionState.CLOSING
        self._queue.put_nowait(None)

    def banned(self) -> None:
        """A moderator banned this connection's player or address: ``error banned``, then
        close (1008) once the frames already queued are sent."""
        self.error("banned", "a moderator banned this player or this address")
        self.close(1008)

    def _count(self, what: str) -> None:
        if self.limits is not None:
            self.limits.refused[what] += 1

    # -- time limits ---------------------------------------------------------------------
    def _start_clock(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.settings.hello_timeout_seconds, self._tick)

    def _tick(self) -> None:
        """The connection's one timer: first the hello deadline, then the idle check."""
        self._timer = None
        if self.state is SessionState.CLOSING:
            return
        if self.state is SessionState.CONNECTED:
            log.info("closing a connection that did not say hello in time")
            self._count("hello_timeout")
            self.close(1008)
            return
        idle = self.settings.idle_seconds
        quiet = time.monotonic() - self.last_frame
        if quiet >= idle and self.seat is None:
            log.info("closing a connection without a seat, idle for %.0f s", quiet)
            self._count("idle")
            self.close(1001)
            return
        self._timer = asyncio.get_running_loop().call_later(
            max(idle - quiet, min(idle, 1.0)), self._tick
        )

    def _watch_idle(self) -> None:
        """After hello: the timer checks for idleness (``idle_seconds``; 0: never)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.settings.idle_seconds:
            self._timer = asyncio.get_running_loop().call_later(
                self.settings.idle_seconds, self._tick
            )

    # -- incoming ------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the connection until it closes. Never raises for anything a client sends."""
        writer = asyncio.create_task(self._writer())
        self._start_clock()
        try:
            while self.state is not SessionState.CLOSING:
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
            with contextlib.suppress(Exception):
                await self.ws.close(code=1011)  # a server fault: the client may reconnect
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.state = SessionState.CLOSING
            if self.lobby is not None:
                self.lobby.unsubscribe(self)
            if self.matchmaking is not None:
                with contextlib.suppress(Exception):
                    await self.matchmaking.disconnected(self)
            with contextlib.suppress(Exception):
                await self._leave_room()
            if self.social is not None and self.player is not None:
                with contextlib.suppress(Exception):
                    await self.social.disconnected(self)
            if self.chat is not None and self.player is not None:
                self.chat.unregister(self)
            self._queue.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 1.0)
            if not writer.done():
                writer.cancel()
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                with contextlib.suppress(Exception):
                    await self.ws.close()

    async def handle_frame(self, frame: str | bytes) -> None:
        """Decode and handle one client frame; every failure becomes a frame to the client.

        A frame over the connection's rate (:class:`server.limits.FrameBucket`) is refused
        unhandled (``rate_limited``); a connection that keeps flooding is closed (1008).
        """
        now = time.monotonic()
        self.last_frame = now
        if self.bucket is not None:
            wait = self.bucket.take(now)
            if wait:
                self._refuse_frame(frame, wait)
                # Read nothing more until a token is back: a flood then waits in the
                # socket's buffers (TCP pushes back on the sender) instead of costing CPU,
                # and this loop gives the event loop to the other connections.
                await asyncio.sleep(wait)
                return
        try:
            message = decode_client(
                frame, self.codec.encoding, max_bytes=self.settings.max_frame_bytes
            )
        except ProtocolError as exc:
            self.send(frames.protocol_error(exc))
            return
        except Exception:
            # A fault of the codec's own (it must raise only ProtocolError): answered, and
            # the connection stays usable, like a fault in a handler below.
            log.exception("decoding a client frame failed")
            self.error("internal", "the server could not read this message")
            return
        kind = message.type
        if self.state is SessionState.CONNECTED and kind not in ("hello", "ping"):
            self.error("hello_required", "say hello first", kind)
            return
        try:
            await HANDLERS[kind](self, message)
        except RoomError as exc:
            self.error(exc.code, exc.message, kind)
        except OutcomeUnknown:
            self.error("outcome_unknown", "the room store stopped answering mid-change; "
                       "repeat the request to learn what happened", kind)
        except StoreUnavailable:
            self.error("store_unavailable", "the room store cannot be reached; nothing "
                       "changed; try again", kind)
        except Exception:
            log.exception("handling %s failed", kind)
            self.error("internal", "the server could not handle this message", kind)

    def _refuse_frame(self, frame: str | bytes, wait: float) -> None:
        """Answer a frame over the rate limit without handling it (nothing of it is
        applied): an ``act`` gets ``reject rate_limited`` with its ``action_id``, any other
        message ``error rate_limited`` with its type in ``ref`` (null when it does not
        decode), both with ``retry_after``, so a client can match the refusal to its request
        and send it again; close the connection (1008) if it keeps flooding. (Decoding a
        refused frame costs a few microseconds, and a flood is closed after
        ``flood_refusals`` of them.)"""
        assert self.bucket is not None
        if self.bucket.flooding:
            log.info("closing a connection that keeps flooding")
            self._count("flood")
            self.close(1008)
            return
        self._count("rate_limited")
        retry_after = round(wait, 3)
        text = "too many frames; wait retry_after seconds and send it again"
        try:
            message = decode_client(
                frame, self.codec.encoding, max_bytes=self.settings.max_frame_bytes
            )
        except ProtocolError as exc:
            self.error("rate_limited", text, exc.ref, retry_after)
            return
        if isinstance(message, m.Act):
            self.send(frames.reject(message.action_id, "rate_limited", text, retry_after))
        else:
            self.error("rate_limited", text, message.type, retry_after)

    # -- handlers --------------------------------------------------------------------------
    async def _ping(self, message: m.Ping) -> None:
        local = self.local
        self.send(frames.pong(
            message.nonce, time.time(),
            local.room_id if local is not None else None,
            local.latest_version if local is not None else None,
        ))

    async def _hello(self, message: m.Hello) -> None:
        if self.state is not SessionState.CONNECTED:
            self.error("already_welcomed", "hello was already said on this connection", "hello")
            return
        if self.service.tokens.is_creator(message.token):
            self.error("not_player_token", "that is a room's creator token, which only "
                       "serves set_computer; say hello without it or with a player token",
                       "hello")
            return
        name = message.name
        if message.player is not None:
            player = await self._authenticate(message.player.id, message.player.secret)
            if player is None:
                return  # answered; the connection may say hello again
            if self.sanctions is not None and self.sanctions.player_banned(player.id):
                self.error("banned", "a moderator banned this player", "hello")
                self.close(1008)
                return
            self.player = player.id
            self.private = bool(getattr(player, "private", False))
            name = player.name or name
            if self.chat is not None:
                self.not_heard = await self.chat.not_heard(player.id)
        self.name = name
        self.language = message.language
        # Only a token this server issued is taken back; any other (made up by a client,
        # or from a deployment with another secret) is replaced by a fresh one, so nobody
        # can bind a seat to a guessable token.
        known = message.token is not None and self.service.tokens.is_issued(message.token)
        self.player_token = message.token if known else self.service.tokens.issue()
        self.state = SessionState.READY
        self._watch_idle()
        self.send(frames.welcome(self.codec.encoding, self.player_token, self.name,
                                 self.settings.max_frame_bytes, self.player,
                                 self.settings.frame_rate, self.settings.frame_burst))
        if self.chat is not None and self.player is not None:
            self.chat.register(self)
        if self.social is not None and self.player is not None:
            await self.social.connected(self)  # online now; its open challenges

    async def _authenticate(self, player_id: str, secret: str) -> Any:
        """The player of ``hello.player``, or None after answering ``error bad_player`` (or
        ``database_unavailable``)."""
        if self.players is None:
            self.error("bad_player", "this server keeps no players", "hello")
            return None
        try:
            player = await self.players.authenticate(player_id, secret)
        except Exception as exc:
            log.warning("player authentication failed: %s", exc)
            self.error("database_unavailable", "the players' database cannot be reached; "
                       "say hello again later, or without a player", "hello")
            return None
        if player is None:
            self.error("bad_player", "no such player, or a wrong secret (or the player was "
                       "deleted); say hello again with another player or none", "hello")
        return player

    async def _create_room(self, message: m.CreateRoom) -> None:
        limits = self.limits
        ticket = None
        if limits is not None:
            ticket = await limits.take(limits.rooms, self.address)
            if not ticket.taken:
                self._count("too_many_rooms")
                self.error("too_many_rooms", "this address created too many rooms; wait "
                           "retry_after seconds", "create_room", round(ticket.wait, 3))
                return
        try:
            record, creator = await self.service.create_room(
                message.options.model_dump(),
                computers=dict(message.computers),
                room=message.room.model_dump(),
                request_id=message.request_id,
                language=self.language,
            )
        except (RoomError, StoreUnavailable):
            if ticket is not None:  # nothing was created: the room does not count
                await ticket.refund()
            raise
        self.send(frames.room_created(record, creator, self.base_url,
                                      self.service.room_settings(record)))

    async def _set_computer(self, message: m.SetComputer) -> None:
        room_id = message.room or (self.local.room_id if self.local else None)
        if room_id is None:
            self.error("not_joined", "join the room (or name it) first", "set_computer")
            return
        await self.service.set_computer(
            room_id, message.seat, message.level, message.creator_token
        )

    async def _hint(self, message: m.HintRequest) -> None:
        """Answer ``hint``: the ``expert`` player's suggestion for this seat, from the
        seat's view and legal actions (``engine.computer.suggest``), made in a computer
        process when the server has them (``ComputerSeats.advise``), once per room version
        and seat and at most ``hints_in_flight`` at once (``server.hints.HintDesk``): beyond
        that the answer is ``error busy`` with ``retry_after``; a new hint is charged to the
        address's ``hints_per_minute`` (beyond it ``error too_many_hints`` with
        ``retry_after``; a repeat and a hint refused busy are not charged)."""
        if self.local is None or self.seat is None:
            self.error("not_seated", "join a room in a seat first", "hint")
            return
        record = await self.service.load(self.local.room_id)
        if not self.service.room_settings(record)["hints"]:
            self.error("hints_disabled", "this room does not allow hints", "hint")
            return
        if record.state is None:
            suggestion: dict[str, Any] = {"kind": "none", "best": None}
        elif self.hints is None:
            suggestion = await self._make_hint(*seat_knowledge(record.state, self.seat))
        else:
            answer = await self._desk_hint(record)
            if answer is None:
                return
            suggestion = answer
        self.send(frames.hint(record.id, self.seat, record.version, suggestion))

    async def _desk_hint(self, record: RoomRecord) -> dict[str, Any] | None:
        """The hint for this seat at ``record``'s version through the process's desk
        (``server.hints.HintDesk``), or None when the answer was an ``error`` (sent here:
        ``busy`` or ``too_many_hints``, each with ``retry_after``).

        A hint with nothing to search is answered at once, free, whatever the desk is
        doing; one kept or being made is shared, free; a new one is charged to the
        address's ``hints_per_minute``, and the charge is given back when the request turns
        out not to make it (the budget is read over the network on Redis: meanwhile
        another request may begin it, or take the last place of ``hints_in_flight``) or
        the search fails."""
        assert self.hints is not None and record.state is not None and self.seat is not None
        desk, key = self.hints, (record.id, record.created, record.version, self.seat)
        view: dict[str, Any] = {}
        legal: list[dict[str, Any]] = []
        ticket: Ticket | None = None
        if not desk.knows(key):
            view, legal = seat_knowledge(record.state, self.seat)
            if not any(a.get("type") in SEARCHED_HINTS for a in legal):
                # Nothing to search (not this seat's turn, the show, a rematch): made here,
                # at once, and it costs the address nothing.
                return dict(suggest(view, legal, level="expert"))
            if not desk.at_bound():
                ticket = await self._charge_hint()
                if not ticket.taken:
                    if not desk.knows(key):
                        self._count("too_many_hints")
                        self.error("too_many_hints", "this address had too many hints made "
                                   "in the last minute; ask again after retry_after", "hint",
                                   round(ticket.wait, 3))
                        return None
                    ticket = None  # begun meanwhile by another request: shared, free
        # From here to the desk nothing is awaited, so this says what get() will do.
        makes = desk.costs(key)
        try:
            suggestion = await desk.get(key, lambda: self._make_hint(view, legal))
        except HintsBusy as exc:
            if ticket is not None:
                await ticket.refund()
            self.error("busy", "the server is making as many hints as it may at once; ask "
                       "again", "hint", exc.retry_after)
            return None
        except Exception:
            if ticket is not None:  # nothing was made
                await ticket.refund()
            raise
        if ticket is not None and not makes:  # shared after all
            await ticket.refund()
        return suggestion

    async def _make_hint(self, view: dict[str, Any], legal: list[dict[str, Any]]
                         ) -> dict[str, Any]:
        """The ``expert``'s suggestion from a seat's view and legal actions: in a computer
        process when the server has them (``ComputerSeats.advise``), else here."""
        if self.computers is not None:
            return await self.computers.advise(view, legal)
        return dict(suggest(view, legal, level="expert"))

    async def _charge_hint(self) -> Ticket:
        """Charge one hint made to this connection's address (``hints_per_minute``, on
        every process with Redis): the ticket, taken (to give back if the hint is not made
        after all) or refused (``wait``: seconds until one is free; nothing charged)."""
        limits = self.limits
        if limits is None:
            return TAKEN_FREE
        return await limits.take(limits.hints, self.address)

    async def _resync(self, message: m.Resync) -> None:
        if self.local is None:
            self.error("not_joined", "join a room first", "resync")
            return
        record = await self.service.load(self.local.room_id)
        missed = await self._missed_from_log(record, message.since)
        self._send_snapshot(record, missed=missed)

    async def _history(self, message: m.HistoryRequest) -> None:
        """Answer ``history``: the current game's versions before ``before`` (at most
        ``limit``, the newest of them), oldest first, redacted for this seat (or, with
        ``public``, for a spectator), from the room's log."""
        if self.local is None:
            self.error("not_joined", "join a room first", "history")
            return
        record = await self.service.load(self.local.room_id)
        first = record.game_from
        if not first:
            self.send(frames.history(record.id, 0, 0, [], False, message.public))
            return
        before = min(message.before or record.version + 1, record.version + 1)
        start = max(first, before - message.limit)
        entries = await self.service.store.log(record.id, start - 1, before - start)
        seat = None if message.public else self.seat
        versions = [
            {"version": e["v"], "events": [redact(ev, seat) for ev in e.get("events") or []]}
            for e in entries if start <= e["v"] < before
        ]
        more = bool(versions) and versions[0]["version"] > first
        self.send(frames.history(record.id, record.game_number, first, versions, more,
                                 message.public))

    async def _missed_from_log(
        self, record: RoomRecord, since: int | None
    ) -> list[dict[str, Any]] | None:
        """``missed`` for a client that last saw version ``since``: the room log's events
        after it, redacted for this seat (``since`` 0: from the room's first version);
        ``[]`` when ``since`` is the room's version; None when not asked, too far back, no
        longer in the log, or newer than the room's version (a version the room does not
        have: nothing to tell, the snapshot replaces it)."""
        if since is None or since > record.version:
            return None
        if since == record.version:
            return []
        if record.version - since > MAX_MISSED_VERSIONS:
            return None
        try:
            entries = await self.service.store.log(record.id, since, record.version - since)
        except StoreError:
            return None
        if not entries or entries[0]["v"] != since + 1:
            return None
        return [
            {"version": e["v"], "events": [redact(ev, self.seat) for ev in e.get("events") or []]}
            for e in entries if e["v"] <= record.version
        ]

    async def _lobby_subscribe(self, message: m.LobbySubscribe) -> None:
        """Follow the lobby (``server.lobby.service.Lobby.subscribe``)."""
        if self.lobby is None:
            self.error("internal", "this server keeps no lobby", "lobby_subscribe")
            return
        try:
            await self.lobby.subscribe(self, message.model_dump(exclude={"type"}))
        except LobbyLimit as exc:
            self._count(exc.code)
            self.error(exc.code, exc.message, "lobby_subscribe")

    async def _lobby_unsubscribe(self, message: m.LobbyUnsubscribe) -> None:
        """Stop following the lobby."""
        if self.lobby is not None:
            self.lobby.unsubscribe(self)

    async def _leave(self, message: m.Leave) -> None:
        if self.local is None:
            self.error("not_joined", "join a room first", "leave")
            return
        room_id = self.local.room_id
        await self._leave_room()
        self.send(frames.left(room_id))

    async def _join(self, message: m.Join) -> None:
        """A ``join``, paid for in advance: one event of the address's refused-joins budget
        is taken before the room is asked (so concurrent guesses cannot all pass a check
        none of them has paid for) and given back unless the join is refused with one of
        :data:`FAILED_JOIN_CODES`."""
        limits = self.limits
        ticket = None
        if limits is not None:
            ticket = await limits.take(limits.failed_joins, self.address)
            if not ticket.taken:
                self._count("too_many_joins")
                self.error("too_many_joins", "too many refused joins from this address; wait "
                           "retry_after seconds", "join", round(ticket.wait, 3))
                return
        counted = False
        try:
            await self._join_room(message)
        except RoomError as exc:
            counted = exc.code in FAILED_JOIN_CODES
            raise
        finally:
            if ticket is not None and not counted:
                await ticket.refund()

    async def _join_room(self, message: m.Join) -> None:
        await self._leave_room()
        if self.service.tokens.is_creator(message.token):
            self.error("not_player_token", "a room's creator token cannot hold a seat", "join")
            return
        if message.token is not None and not self.service.tokens.is_issued(message.token):
            raise RoomError("bad_token", "that token was not issued by this server")
        token = message.token or self.player_token
        assert token is not None and self.name is not None
        # A player's seat token is derived from (room, seat, player) under the deployment's
        # secret: every connection of the player, on any device, gets the same one.
        owned = (self.service.tokens.derive(
            f"player-seat|{message.room}|{message.seat}|{self.player}".encode())
            if self.player is not None and message.seat is not None else None)
        if message.seat is not None and self.player is not None and self.social is not None:
            await self.social.check_seat(message.room, self.player)  # seat_blocked
        presence = self.service.presence
        watching = message.seat is None and presence is not None
        if watching and not await presence.watch(
                message.room, self.settings.max_spectators_per_room):
            self._count("too_many_spectators")
            raise RoomError("too_many_spectators", "this room has as many spectators as it "
                            f"may ({self.settings.max_spectators_per_room})")
        try:
            local = await self.rooms.attach(message.room, self)
        except BaseException:
            if watching:
                await presence.unwatch(message.room)
            raise
        self.local = local
        self._joining = True
        self._buffer = []
        self._chat_held = []
        try:
            result = await self.service.join(
                message.room, message.seat, token, self.name, token_given=bool(message.token),
                player=self.player, player_token=owned,
            )
            if result.seat is not None:
                # Counted before the snapshot, so the snapshot shows this seat connected.
                with contextlib.suppress(StoreError):
                    await self.service.seat_connected(message.room, result.seat)
                    local.presence[result.seat] = max(1, local.presence.get(result.seat, 0))
        except BaseException:
            self._joining = False
            self.local = None
            await self.rooms.detach(message.room, self)
            if watching:
                await presence.unwatch(message.room)
            raise
        self.watching = watching
        self.seat = result.seat
        if owned is not None and result.seat is not None and hash_token(owned) == (
                result.record.seats[result.seat].token_hash):
            token = owned
        self.seat_token = token if result.seat is not None else None
        self.state = SessionState.IN_ROOM
        data = local.ingest(result.record, result.events, bool(result.events))
        if message.since is not None:
            missed = await self._missed_from_log(result.record, message.since)
        elif result.events:
            missed = [{"version": data.version, "events": data.events_for(self.seat)}]
        else:
            missed = None
        talk = (await self.chat.recent_for(self, result.record)
                if self.chat is not None else None)
        self._send_snapshot(result.record, seat_token=self.seat_token, missed=missed,
                            chat=talk)
        self._joining = False
        buffered, self._buffer = self._buffer, []
        for data in buffered:
            self.on_version(local, data)
        held, self._chat_held = self._chat_held, []
        last = max((e["id"] for e in talk or ()), default=0)
        for entry in held:
            if entry.get("id", 0) > last:
                self.on_chat(local, entry)
        if result.seat is None and self.local is local:
            local.watch(self)  # served from now on by the room's spectator feed

    async def _leave_room(self) -> None:
        local, seat = self.local, self.seat
        if local is None:
            return
        watching, self.watching = self.watching, False
        self.local = None
        self.seat = None
        self.seat_token = None
        self.last_version = -1
        self.last_view = None
        self._told = {}
        if self.state is SessionState.IN_ROOM:
            self.state = SessionState.READY
        if seat is not None:
            latest = local.latest()
            with contextlib.suppress(StoreError):
                await self.service.seat_disconnected(
                    local.room_id, seat, latest.record if latest is not None else None
                )
        await self.rooms.detach(local.room_id, self)
        if watching and self.service.presence is not None:
            await self.service.presence.unwatch(local.room_id)

    async def _act(self, message: m.Act) -> None:
        started = time.perf_counter()
        answer = await self._apply_act(message)
        self.send(answer)
        if self.metrics is not None:
            stats = self.metrics.actions
            if answer["type"] == "ack":
                if answer["duplicate"]:
                    stats.duplicate += 1
                else:
                    stats.accepted += 1
            else:
                stats.rejected[answer["code"]] += 1
            self.metrics.action_seconds.observe(time.perf_counter() - started)

    async def _apply_act(self, message: m.Act) -> dict[str, Any]:
        """Apply an ``act``; returns its answer (``ack`` or ``reject``), not yet sent."""
        action_id = message.action_id
        if self.local is None or self.seat is None or self.seat_token is None:
            return frames.reject(action_id, "not_seated", "join a room in a seat first")
        gate = self.actions
        if gate is not None and not await gate.enter():
            return frames.reject(
                action_id, "busy", "the server is behind; nothing was applied; send the "
                "same action again after retry_after seconds", gate.max_wait,
            )
        try:
            outcome = await self._commit_act(message)
        finally:
            # The turn ends with the commit: waiting for the update to be delivered below
            # is no work of the store's, and must not hold a place in the gate.
            if gate is not None:
                gate.leave()
        if isinstance(outcome, dict):
            return outcome  # a reject
        local, result = outcome
        if result.record is not None and self.local is local:
            # Send our own update at once when nothing is missing before it, instead of
            # waiting for it to come back through the room's channel.
            if result.version not in local.versions and self.last_version == result.version - 1:
                self.on_version(
                    local, local.ingest(result.record, result.events, False, result.state)
                )
        await self._wait_for(result.version)
        return frames.ack(action_id, result.version, result.duplicate)

    async def _commit_act(self, message: m.Act) -> dict[str, Any] | tuple[LocalRoom, Any]:
        """Apply an admitted ``act``: ``(the local room, the service's result)``, or the
        ``reject`` to answer (see :meth:`_apply_act`)."""
        action_id = message.action_id
        local, seat, token = self.local, self.seat, self.seat_token
        if local is None or seat is None or token is None:  # left while it waited its turn
            return frames.reject(action_id, "not_seated", "join a room in a seat first")
        action = message.action.model_dump(exclude_none=True)
        try:
            result = await self.service.act(local.room_id, seat, token, action_id, action)
        except (engine.RulesError, RoomError) as exc:
            return frames.reject(action_id, exc.code, exc.message)
        except OutcomeUnknown:
            return frames.reject(
                action_id, "outcome_unknown",
                "the room store stopped answering while applying this action; re-send the "
                "same action_id to learn whether it was applied (it is applied at most once)",
            )
        except StoreUnavailable:
            return frames.reject(
                action_id, "store_unavailable",
                "the room store cannot be reached; the action was not applied",
            )
        return local, result

    async def _wait_for(self, version: int) -> None:
        deadline = time.monotonic() + DELIVERY_WAIT_SECONDS
        while self.local is not None and self.last_version < version:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                with contextlib.suppress(StoreError, RoomError):
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

    def _send_snapshot(
        self,
        record: RoomRecord,
        seat_token: str | None = None,
        missed: list[dict[str, Any]] | None = None,
        chat: list[dict[str, Any]] | None = None,
    ) -> None:
        local = self.local
        assert local is not None
        data = local.ingest(record, [], False)
        view = data.view(self.seat)
        seats = local.seats(record)
        self.send(frames.snapshot(
            record, self.seat, self.service.room_settings(record), seats, view,
            seat_token=seat_token, missed=missed, chat=chat,
        ))
        self._remember_seats(seats)
        self._advance(record.version, view)

    # -- from the room's channel ----------------------------------------------------------
    def on_version(self, local: LocalRoom, data: VersionData) -> None:
        """A new version of the room: send this connection its update (or a snapshot, with
        the events in between when known, when versions are missing). Called on the event
        loop; never blocks."""
        if self._joining:
            self._buffer.append(data)
            return
        if self.local is not local or data.version <= self.last_version:
            return
        if data.version != self.last_version + 1:
            missed = data.missed_since(self.seat, self.last_version)
            self._send_snapshot(data.record, missed=missed)
            return
        view = data.view(self.seat)
        seats = local.seats(data.record) if data.seats_changed else None
        self.send(frames.update(
            local.room_id, data.version, data.record.status, data.events_for(self.seat),
            diff(self.last_view, view), seats,
        ))
        if seats is not None:
            self._remember_seats(seats)
        self._advance(data.version, view)

    def on_chat(self, local: LocalRoom, entry: dict[str, Any]) -> None:
        """A chat message of the room (a stored entry, ``server.chat.rules``): send it
        unless this connection may not read it (a spectators-only message to a seated
        player, an author this player does not hear). Never blocks."""
        if self._joining:
            self._chat_held.append(entry)
            return
        if self.local is not local:
            return
        latest = local.latest()
        seated = self.seat is not None or (
            self.player is not None and latest is not None
            and self.player in chat_rules.seated_players(latest.record))
        if chat_rules.reads(entry, seated, self.not_heard, self.player):
            self.send(frames.chat(local.room_id, entry))

    def _remember_seats(self, seats: list[dict[str, Any]]) -> None:
        self._told = {s["seat"]: (s["connected"], s["name"], s["computer_standin"],
                                  s.get("takeover_at"), s.get("abandoned", False))
                      for s in seats}

    def on_presence(self, frame: dict[str, Any]) -> None:
        """A seat's presence changed (``server.fanout`` coalesces these per room): forward
        it, unless this connection already knows it (from its snapshot, an update's
        ``seats`` or an earlier frame): no frame that tells nothing new."""
        if self._joining:
            return
        told = (frame["connected"], frame["name"], frame["computer_standin"],
                frame.get("takeover_at"), frame.get("abandoned", False))
        if self._told.get(frame["seat"]) == told:
            return
        self._told[frame["seat"]] = told
        self.send(frame)


FAILED_JOIN_CODES = frozenset(
    {"room_not_found", "bad_token", "bad_seat", "seat_taken", "already_seated"}
)
"""Codes of a refused ``join`` that count against ``failed_joins_per_minute`` (what a
client guessing rooms, seats or tokens gets; store and server faults do not count)."""


HANDLERS: dict[str, Callable[[Session, Any], Awaitable[None]]] = {
    "ping": Session._ping,
    "hello": Session._hello,
    "create_room": Session._create_room,
    "set_computer": Session._set_computer,
    "hint": Session._hint,
    "join": Session._join,
    "act": Session._act,
    "resync": Session._resync,
    "history": Session._history,
    "leave": Session._leave,
    "lobby_subscribe": Session._lobby_subscribe,
    "lobby_unsubscribe": Session._lobby_unsubscribe,
    "challenge": on_challenge,
    "challenge_answer": on_challenge_answer,
    "queue_join": queue_handlers.queue_join,
    "queue_leave": queue_handlers.queue_leave,
    "queue_accept_computer": queue_handlers.queue_accept_computer,
    "chat": chat_handlers.on_chat,
    "chat_mute": chat_handlers.on_chat_mute,
    "chat_unmute": chat_handlers.on_chat_unmute,
    "chat_report": chat_handlers.on_chat_report,
}
"""The handler of each client message type (one table for every session)."""
