"""The WebSocket protocol under the app, with a budget for every frame on the wire.

The session's frame limit (``frame_rate``, :class:`server.limits.FrameBucket`) sees whole
messages only. What never reaches it — WebSocket control frames (a ``PING`` is answered by
the protocol layer itself, with a ``PONG`` that piles up unread in the server's buffers when
the sender does not read), unsolicited ``PONG`` frames, and messages cut into thousands of
tiny fragments — could keep the event loop busy for one client and starve every other
(docs/protocol.md "Limits"). :class:`GuardedWebSocketProtocol` is uvicorn's own
Sans-I/O websockets protocol with two token buckets per connection, counted on every frame
the client sends, whatever its kind: frames (``wire_frame_rate`` a second, ``wire_frame_burst``
at once) and bytes (``wire_bytes_rate`` a second, ``wire_bytes_burst`` at once). A client
past either is failed at once with close code 1008. The budgets are many times what any
client of this protocol needs (a person sends a few frames a second; the app limit is 20
messages a second), so only a flood meets them.

It also offers the app a way to send one frame to many connections cheaply (the ASGI
extension :data:`PREPARED_SEND`): a message framed once (:func:`prepared_frame`) is written
to a connection's transport as it is, when the connection is open and its send buffer is
not full — the spectators of a room all get the same frame (``server.spectators``).

It also shortens the wait for the client's answer to the server's close frame
(``ws_close_timeout_seconds``; uvicorn waits 10 s) so that a closed connection does not
hold its socket for long, and counts a handshake refused with an HTTP answer (429
``too_many_connections``) as complete, so that refusals do not write an ERROR line each.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode

PREPARED_SEND = "cribbage.prepared_send"
"""The ASGI extension (``scope["extensions"]``) :class:`GuardedWebSocketProtocol` offers:
``{"send": callable}``, where ``send(frame_bytes) -> bool`` writes a whole frame made by
:func:`prepared_frame` now, or answers False (nothing written) when the connection is not
open or its transport's buffer is full (the client reads slowly)."""


def prepared_frame(message: str | bytes) -> bytes:
    """The bytes of one unmasked, unfragmented WebSocket frame carrying ``message`` (text
    for ``str``, binary for ``bytes``), as a server sends it without compression (the server
    runs without permessage-deflate): the same bytes for every connection."""
    if isinstance(message, str):
        return Frame(Opcode.TEXT, message.encode()).serialize(mask=False, extensions=[])
    return Frame(Opcode.BINARY, message).serialize(mask=False, extensions=[])

log = logging.getLogger("server.limits")


class _Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``burst``; starts full."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def spend(self, amount: float, now: float) -> bool:
        """Take ``amount`` tokens at ``now``; False (nothing taken) when there are too few."""
        tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if tokens < amount:
            self.tokens = tokens
            return False
        self.tokens = tokens - amount
        return True


class GuardedWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets-sansio protocol with per-connection budgets of wire frames and
    bytes (class attributes, set by :func:`ws_protocol`); past either: close 1008."""

    frame_rate: float = 200.0
    frame_burst: float = 400.0
    bytes_rate: float = 256 * 1024.0
    bytes_burst: float = 2 * 1024 * 1024.0
    close_wait: float = 2.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = self.close_wait
        self._frames = _Bucket(self.frame_rate, self.frame_burst) if self.frame_rate else None
        self._bytes = _Bucket(self.bytes_rate, self.bytes_burst) if self.bytes_rate else None
        self._failed = False

    def handle_events(self) -> None:
        if self._failed:
            return
        events = self.conn.events_received()
        now = time.monotonic()
        for event in events:
            if isinstance(event, Frame) and not self._within_budget(event, now):
                self._fail()
                return
        # uvicorn's handlers read the events from the protocol object: put them back.
        self.conn.events = events
        super().handle_events()

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][PREPARED_SEND] = {"send": self.send_prepared}

    def send_prepared(self, frame: bytes) -> bool:
        """Write ``frame`` (:func:`prepared_frame`) now if the connection is open and its
        transport's buffer below the high-water mark; False (nothing written) otherwise."""
        if (self.disconnected or self.close_sent or not self.handshake_complete
                or self.initial_response is not None or not self.writable.is_set()
                or self.transport.is_closing()):
            return False
        self.transport.write(frame)
        return True

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.http.response.body" and not message.get("more_body"):
            # A handshake refused with an HTTP answer (the denial response) is a complete
            # handshake too: without this uvicorn logs an ERROR for every refusal, which a
            # client could use to fill the log.
            self.handshake_complete = True

    def _within_budget(self, frame: Frame, now: float) -> bool:
        if self._frames is not None and not self._frames.spend(1.0, now):
            return False
        return self._bytes is None or self._bytes.spend(float(len(frame.data)) + 2.0, now)

    def _fail(self) -> None:
        """Close 1008 now: the app gets a disconnect, the client a close frame, the socket
        is closed without waiting for an answer."""
        self._failed = True
        log.info("closing a WebSocket that sends more frames or bytes than the wire budget")
        self.conn.fail(1008, "too many frames")
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.queue.put_nowait({"type": "websocket.disconnect", "code": 1008, "reason": ""})
        self.close_sent = True
        self.transport.close()


def ws_protocol(
    frame_rate: float, frame_burst: int, bytes_rate: float, bytes_burst: int, close_wait: float
) -> type[GuardedWebSocketProtocol]:
    """The WebSocket protocol class for uvicorn's ``ws`` option with these budgets (frames
    a second and at once, bytes a second and at once; a rate of 0 turns that budget off)
    and ``close_wait`` seconds for the client's answer to a close."""
    return type("GuardedWebSocket", (GuardedWebSocketProtocol,), {
        "frame_rate": float(frame_rate), "frame_burst": float(frame_burst),
        "bytes_rate": float(bytes_rate), "bytes_burst": float(bytes_burst),
        "close_wait": float(close_wait),
    })
