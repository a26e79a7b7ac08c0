"""A small asyncio client of the ``cribbage.v1`` protocol, on the ``websockets`` library.

It keeps the room's view up to date (applying each ``update``'s JSON Patch), matches
``ack``/``reject`` to action ids, and records every frame it received (for tests and audits)::

    client = await Client.connect("ws://127.0.0.1:8000/ws", name="Ann", encoding="msgpack")
    created = await client.create_room({"players": 2, "target": 61})
    await client.join(created["room"], seat=0)
    answer = await client.act({"type": "discard", "cards": ["5H", "TD"]})
    await client.close()

Used by the tests, the computer players and the benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import secrets
from collections.abc import Callable
from typing import Any

import websockets
from pydantic import BaseModel, ValidationError

from . import patch as jpatch
from .codec import Encoding, decode_plain, encode, subprotocol_for_encoding
from .messages import SERVER_ADAPTER

Predicate = Callable[[dict[str, Any]], bool]

RETRY_CODES = frozenset({"outcome_unknown", "store_unavailable", "busy"})
"""Answers after which the same request (the same ``action_id`` or ``request_id``) may be
sent again: nothing was done, or it was done at most once."""


class ClientError(Exception):
    """The server answered with ``error`` (``code``, ``message``, and ``retry_after``
    seconds when the error has them, else None) or broke the protocol."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after


class Client:
    """One connection to a cribbage server.

    Create with :meth:`connect`. Attributes kept up to date by a reader task:

    * ``player_token``: from ``welcome``.
    * ``room``, ``seat``, ``seat_token``, ``status``, ``seats``: from the last snapshot/update.
    * ``version``, ``view``: the room version and this seat's view at that version.
    * ``frames``: every frame received, decoded to plain data, in order (if ``record``).
    * ``views``: view by version (if ``record``), for audits.
    * ``problems``: protocol violations noticed (a version gap, a patch that did not apply,
      an invalid frame). A correct server leaves it empty.
    """

    def __init__(
        self, ws: Any, encoding: Encoding, *, record: bool = True, validate: bool = True
    ) -> None:
        self.ws = ws
        self.encoding = encoding
        self.record = record
        self.validate = validate
        self.player_token: str | None = None
        self.welcome: dict[str, Any] | None = None
        self.room: str | None = None
        self.seat: int | None = None
        self.seat_token: str | None = None
        self.status: str | None = None
        self.seats: list[dict[str, Any]] = []
        self.version = -1
        self.view: dict[str, Any] | None = None
        self.lobby: dict[str, dict[str, Any]] | None = None
        """The lobby as this connection follows it (``lobby_subscribe``): room id -> its
        ``LobbyTable`` entry, kept up to date by ``lobby_update`` frames; None when not
        following."""
        self.chat: list[dict[str, Any]] = []
        """The room's talk as this connection reads it (``ChatMessage``s, oldest first):
        from the join's snapshot, then each ``chat`` frame (``chat_hidden`` removes)."""
        self.frames: list[dict[str, Any]] = []
        self.views: dict[int, dict[str, Any] | None] = {}
        self.problems: list[str] = []
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        """The WebSocket close code once closed (1006 when the connection just died)."""
        self._waiters: list[tuple[Predicate, asyncio.Future[dict[str, Any]]]] = []
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)
        self._prefix = secrets.token_hex(4)
        self._reader: asyncio.Task[None] | None = None
        self._rate = 0.0
        """The frames a second this client sends at most (a little under the ``frame_rate``
        the ``welcome`` names; 0: no limit), from a budget of ``frame_burst``."""
        self._burst = 0.0
        self._tokens = 0.0
        self._stamp = 0.0
        self._pace = 0.0
        """From a server whose ``welcome`` names no ``frame_rate``: seconds between two frames
        sent once it refused one ``rate_limited`` (at least the longest ``retry_after`` it
        named, half as long again at each later refusal); 0: unpaced."""
        self._next_send = 0.0

    # -- connecting ----------------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str = "player",
        token: str | None = None,
        player: dict[str, str] | None = None,
        encoding: Encoding = "json",
        hello: bool = True,
        record: bool = True,
        validate: bool = True,
        timeout: float = 5.0,
    ) -> Client:
        """Open a connection (and say hello unless ``hello`` is False).

        Args:
            url: the server's WebSocket URL, e.g. ``ws://127.0.0.1:8000/ws``.
            name: display name sent in ``hello``.
            token: a player token from an earlier ``welcome`` (to resume seats).
            player: ``{"id", "secret"}`` of a player (``POST /api/players``) to be.
            encoding: ``json`` or ``msgpack`` (picks the subprotocol).
            hello: send ``hello`` and wait for ``welcome``.
            record: keep every frame in ``frames`` and every view in ``views``.
            validate: check every server frame against the message models.
            timeout: seconds to wait for the connection and the welcome.

        Raises:
            ClientError: the server refused the hello.
            OSError, websockets.exceptions.InvalidHandshake: could not connect.
        """
        ws = await websockets.connect(
            url,
            subprotocols=[subprotocol_for_encoding(encoding)],  # type: ignore[list-item]
            open_timeout=timeout,
            compression=None,
            max_size=4 * 1024 * 1024,
        )
        client = cls(ws, encoding, record=record, validate=validate)
        client._reader = asyncio.create_task(client._read())
        if hello:
            msg: dict[str, Any] = {"type": "hello", "name": name}
            if token:
                msg["token"] = token
            if player:
                msg["player"] = {"id": player["id"], "secret": player["secret"]}
            await client.request(msg, lambda f: f["type"] in ("welcome", "error"), timeout)
        return client

    async def close(self) -> None:
        """Close the connection and stop the reader."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 2.0)

    async def abort(self) -> None:
        """Drop the TCP connection without a closing handshake (a crashed client)."""
        transport = getattr(self.ws, "transport", None)
        if transport is not None:
            transport.abort()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 2.0)

    # -- sending -------------------------------------------------------------------------
    async def send(self, message: BaseModel | dict[str, Any]) -> None:
        """Send one message (a model or plain data), encoded for this connection.

        Frames keep within the connection's budget that the ``welcome`` names
        (``frame_rate``, ``frame_burst``), at 95 % of its rate: a message waits here for
        its turn rather than be refused ``rate_limited``. (A client that only waited out
        each refusal before sending that frame again was still refused once a request when
        its requests came faster than the rate, and the server closes a connection with
        more than ``flood_refusals`` refusals in its window.) From a server that names no
        rate, once it refused a frame, frames go no closer together than the longest
        ``retry_after`` it named, half as long again at each later refusal.

        Raises:
            ClientError: ``closed`` when the connection is gone.
        """
        loop = asyncio.get_running_loop()
        if self._rate:
            now = loop.time()
            self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
            self._stamp = now
            self._tokens -= 1.0  # this frame's token, taken now (later frames queue behind)
            if self._tokens < 0:
                await asyncio.sleep(-self._tokens / self._rate)
        elif self._pace:
            now = loop.time()
            slot = max(now, self._next_send)
            self._next_send = slot + self._pace
            if slot > now:
                await asyncio.sleep(slot - now)
        try:
            await self.ws.send(encode(message, self.encoding))
        except websockets.exceptions.ConnectionClosed:
            raise ClientError("closed", "the connection closed") from None

    async def send_raw(self, frame: str | bytes) -> None:
        """Send a frame as-is (tests of malformed input)."""
        await self.ws.send(frame)

    async def request(
        self, message: BaseModel | dict[str, Any], until: Predicate, timeout: float = 5.0,
        retry: bool = True,
    ) -> dict[str, Any]:
        """Send a message and return the first later frame matching ``until``.

        With ``retry``, a message the server refuses for now — over the connection's rate
        (``rate_limited``), an act refused ``busy`` with a ``retry_after`` by the
        server's admission control, or a hint refused ``busy`` with a ``retry_after``
        because the server makes ``hints_in_flight`` at once or ``too_many_hints`` (the
        address's ``hints_per_minute``) — is sent again after its ``retry_after`` seconds,
        within ``timeout``; a refusal whose ``retry_after`` ends past ``timeout`` is the
        answer (an ``error`` raised as ``ClientError`` with its code and ``retry_after``, a
        ``reject`` returned). Only refusals of this message
        count: an ``error`` whose ``ref`` is its type, a ``reject`` of its ``action_id``.

        Raises:
            ClientError: the matching frame is an ``error``.
            TimeoutError: nothing matched within ``timeout`` seconds.
        """
        if isinstance(message, BaseModel):
            kind, action_id = getattr(message, "type", None), getattr(message, "action_id", None)
        else:
            kind, action_id = message.get("type"), message.get("action_id")

        def limited(f: dict[str, Any]) -> bool:
            # A refusal of this message: a reject names its action_id, an error its type
            # (another request waiting on the connection has its own refusals).
            if f["type"] == "reject":
                ours = action_id is not None and f.get("action_id") == action_id
            else:
                ours = f.get("ref") == kind
            return retry and ours and f["type"] in ("error", "reject") and (
                f.get("code") == "rate_limited"
                or (f.get("code") in ("busy", "too_many_hints")
                    and f.get("retry_after") is not None)
            )

        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            fut = self._expect(lambda f: limited(f) or until(f))
            try:
                await self.send(message)
            except ClientError:
                fut.cancel()
                raise
            remaining = deadline - asyncio.get_running_loop().time()
            frame = await asyncio.wait_for(fut, max(remaining, 0.001))
            if limited(frame):
                wait = float(frame.get("retry_after") or 0.05)
                if frame.get("code") == "rate_limited":
                    # Refused although paced: too fast still (half as slow again), at
                    # least the wait named.
                    self._pace = max(self._pace * 1.5, wait)
                if frame.get("code") == "busy":
                    # Many clients refused together must not all come back together.
                    wait *= 1.0 + random.random() / 2
                if wait >= deadline - asyncio.get_running_loop().time():
                    # Asking again would come after the timeout: the refusal is the answer
                    # (a reject returned, as any reject is; an error raised).
                    if frame["type"] == "reject":
                        return frame
                    raise ClientError(frame["code"], frame["message"], frame.get("retry_after"))
                await asyncio.sleep(wait)
                continue
            if frame["type"] == "error":
                raise ClientError(frame["code"], frame["message"], frame.get("retry_after"))
            return frame

    def new_action_id(self) -> str:
        """A fresh action id unique to this client."""
        return f"{self._prefix}-{next(self._ids)}"

    async def create_room(
        self, options: dict[str, Any] | None = None, *,
        computers: dict[str, str] | None = None, room: dict[str, Any] | None = None,
        request_id: str | None = None, retries: int = 5, timeout: float = 5.0,
    ) -> dict[str, Any]:
        """Create a room; returns the ``room_created`` frame.

        The request carries a ``request_id`` (a fresh random one unless given), so sending
        it again is safe: the server answers a repeat with the same room and creator token.
        An answer ``outcome_unknown``, ``store_unavailable`` or ``busy`` (the room may or may
        not exist, or nothing was done) is sent again with the same id after a short pause
        (0.25 s doubling, with jitter), up to ``retries`` times.

        Raises:
            ClientError: any other error (``bad_options``, ``too_many_rooms``,
                ``request_id_reused``, …), or the last retried one.
        """
        message: dict[str, Any] = {
            "type": "create_room", "options": options or {},
            "request_id": request_id or self.new_request_id(),
        }
        if computers:
            message["computers"] = computers
        if room:
            message["room"] = room
        for attempt in range(retries + 1):
            try:
                return await self.request(
                    message,
                    lambda f: f["type"] == "room_created"
                    or (f["type"] == "error" and f.get("ref") == "create_room"),
                    timeout,
                )
            except ClientError as exc:
                if exc.code not in RETRY_CODES or attempt == retries:
                    raise
            await asyncio.sleep(0.25 * 2 ** attempt * (1.0 - random.random() / 2))
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def new_request_id() -> str:
        """A fresh request id for ``create_room``: 128 random bits, 22 url-safe characters."""
        return secrets.token_urlsafe(16)

    async def join(
        self, room: str, seat: int | None, token: str | None = None, timeout: float = 5.0
    ) -> dict[str, Any]:
        """Join a room (seat None: spectator); returns the ``snapshot`` frame.

        Raises:
            ClientError: e.g. ``seat_taken``, ``room_not_found``.
        """
        msg: dict[str, Any] = {"type": "join", "room": room, "seat": seat}
        if token:
            msg["token"] = token
        return await self.request(
            msg,
            lambda f: f["type"] == "snapshot" or (f["type"] == "error" and f.get("ref") == "join"),
            timeout,
        )

    async def act(
        self, action: dict[str, Any], action_id: str | None = None, timeout: float = 5.0,
        retry: bool = True,
    ) -> dict[str, Any]:
        """Submit an action; returns its ``ack`` or ``reject`` frame (by the time an ``ack``
        returns, this client's view is at the acked version). ``retry``: see
        :meth:`request` (refusals for now are sent again with the same ``action_id``)."""
        action_id = action_id or self.new_action_id()
        return await self.request(
            {"type": "act", "action_id": action_id, "action": action},
            lambda f: f["type"] in ("ack", "reject") and f.get("action_id") == action_id,
            timeout, retry,
        )

    async def lobby_subscribe(self, timeout: float = 5.0, **filters: Any) -> dict[str, Any]:
        """Follow the lobby (filters: ``players``, ``partnerships``, ``language``,
        ``rated``); returns the ``lobby`` frame (then :attr:`lobby` follows the updates).

        Raises:
            ClientError: e.g. ``too_many_lobby_subscriptions``.
        """
        return await self.request(
            {"type": "lobby_subscribe", **filters},
            lambda f: f["type"] == "lobby"
            or (f["type"] == "error" and f.get("ref") == "lobby_subscribe"), timeout)

    async def lobby_unsubscribe(self) -> None:
        """Stop following the lobby (:attr:`lobby` becomes None)."""
        await self.send({"type": "lobby_unsubscribe"})
        self.lobby = None

    async def say(self, preset: str | None = None, text: str | None = None,
                  timeout: float = 5.0) -> dict[str, Any]:
        """Say a preset phrase (an id of ``protocol.chat.PRESETS``) or free text at the
        joined table; returns the ``ChatMessage`` as the server numbered it (this
        connection's own ``chat`` frame).

        Raises:
            ClientError: ``chat_off``, ``chat_presets_only``, ``chat_rate_limited`` … (the
                error's code).
        """
        mine = self.welcome["name"] if self.welcome else None
        message: dict[str, Any] = {"type": "chat"}
        if preset is not None:
            message["preset"] = preset
        if text is not None:
            message["text"] = text
        frame = await self.request(message, lambda f: (
            f["type"] == "error" and f.get("ref") == "chat") or (
            f["type"] == "chat" and f["message"]["name"] == mine
            and f["message"]["preset"] == preset
            and (text is None or f["message"]["text"] == text.strip())), timeout, retry=False)
        return frame["message"]

    async def hint(self, timeout: float = 10.0) -> dict[str, Any]:
        """Ask for the ``expert`` computer's suggestion for this seat (``hint``; the room's
        ``hints`` setting must allow it; docs/protocol.md "hint").

        Returns:
            The ``hint`` frame: ``{"type": "hint", "room", "seat", "version", "suggestion"}``.
            ``version`` is the room version the suggestion is for: while seats discard at
            once another may move meanwhile, so it can be newer than this client's view.
            A refusal for now (``busy`` or ``too_many_hints`` with ``retry_after``) is
            asked again after it, within ``timeout`` seconds. A ``hint`` frame names no
            request, so ask one at a time: a late answer to an earlier call that timed out
            is taken for this one's if it is for this client's version or a newer one (one
            for an older version is passed over).

        Raises:
            ClientError: an ``error`` for the hint (``hints_disabled``, ``not_seated``, or a
                refusal whose wait ends past ``timeout``, with its ``retry_after``).
            TimeoutError: no answer within ``timeout`` seconds.
        """
        asked_at = self.version
        return await self.request({"type": "hint"}, lambda f: (
            f["type"] == "hint" and f.get("version", asked_at) >= asked_at) or (
            f["type"] == "error" and f.get("ref") == "hint"), timeout)

    async def ping(self, nonce: str | int | None = None, timeout: float = 5.0) -> dict[str, Any]:
        """Ping; returns the ``pong``."""
        return await self.request(
            {"type": "ping", "nonce": nonce}, lambda f: f["type"] == "pong", timeout
        )

    # -- receiving -----------------------------------------------------------------------
    def _expect(self, until: Predicate) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((until, fut))
        return fut

    async def next_frame(self, until: Predicate, timeout: float = 5.0) -> dict[str, Any]:
        """Wait for the next frame (received from now on) matching ``until``."""
        return await asyncio.wait_for(self._expect(until), timeout)

    async def wait_until(self, condition: Callable[[Client], bool], timeout: float = 5.0) -> None:
        """Wait until ``condition(self)`` holds (checked after every frame).

        Raises:
            TimeoutError: it did not hold within ``timeout`` seconds.
            ClientError: the connection closed first.
        """
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not condition(self):
            if self.closed.is_set():
                raise ClientError("closed", "the connection closed")
            remaining = end - loop.time()
            if remaining <= 0:
                raise TimeoutError("condition not reached")
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                try:
                    frame = decode_plain(raw, self.encoding)
                except Exception as exc:
                    self.problems.append(f"undecodable frame: {exc}")
                    continue
                self._handle(frame)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            code = getattr(self.ws, "close_code", None)
            self.close_code = 1006 if code is None else code
            self.closed.set()
            for _, fut in self._waiters:
                if not fut.done():
                    fut.set_exception(ClientError("closed", "the connection closed"))
            self._waiters.clear()
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _handle(self, frame: dict[str, Any]) -> None:
        if self.validate:
            try:
                SERVER_ADAPTER.validate_python(frame)
            except ValidationError as exc:
                self.problems.append(f"invalid {frame.get('type')} frame: {exc}")
        if self.record:
            self.frames.append(frame)
        kind = frame.get("type")
        if kind == "welcome":
            self.welcome = frame
            self.player_token = frame["player_token"]
            rate = float(frame.get("frame_rate") or 0.0)
            if rate > 0:
                # The server's budget started full when the connection opened; hello took
                # one of it.
                self._rate = 0.95 * rate
                self._burst = max(1.0, float(frame.get("frame_burst") or 1) - 1.0)
                self._tokens = self._burst - 1.0
                self._stamp = asyncio.get_running_loop().time()
        elif kind == "snapshot":
            self.room = frame["room"]
            self.seat = frame["seat"]
            self.version = frame["version"]
            self.view = frame["view"]
            self.status = frame["status"]
            self.seats = frame["seats"]
            if frame.get("seat_token"):
                self.seat_token = frame["seat_token"]
            if frame.get("chat") is not None:
                self.chat = list(frame["chat"])
            self._keep_view()
        elif kind == "update":
            if frame["version"] != self.version + 1:
                self.problems.append(f"update {frame['version']} after {self.version}")
            try:
                self.view = jpatch.apply(self.view, frame["patch"])
            except Exception as exc:
                self.problems.append(f"patch to {frame['version']} failed: {exc}")
            self.version = frame["version"]
            self.status = frame["status"]
            if frame.get("seats") is not None:
                self.seats = frame["seats"]
            self._keep_view()
        elif kind == "presence":
            for s in self.seats:
                if s["seat"] == frame["seat"]:
                    s["connected"] = frame["connected"]
                    s["computer_standin"] = frame["computer_standin"]
                    s["abandoned"] = frame.get("abandoned", False)
        elif kind == "chat":
            self.chat.append(frame["message"])
        elif kind == "chat_hidden":
            self.chat = [c for c in self.chat if c["id"] != frame["id"]]
        elif kind == "left":
            self.room = None
            self.seat = None
        elif kind == "lobby":
            self.lobby = {t["room"]: t for t in frame["tables"]}
        elif kind == "lobby_update" and self.lobby is not None:
            for t in frame["added"] + frame["changed"]:
                self.lobby[t["room"]] = t
            for room in frame["removed"]:
                self.lobby.pop(room, None)
        for entry in list(self._waiters):
            until, fut = entry
            if fut.done():
                self._waiters.remove(entry)
                continue
            try:
                hit = until(frame)
            except Exception:
                hit = False
            if hit:
                fut.set_result(frame)
                self._waiters.remove(entry)
        self._notify()

    def _keep_view(self) -> None:
        if self.record:
            self.views[self.version] = self.view
