"""Limits that keep one client from starving the others (docs/protocol.md "Limits").

* :class:`FrameBucket`: the per-connection token bucket on client frames (``frame_rate``,
  ``frame_burst``) and the flood counter that closes a connection that keeps flooding.
* :class:`AddressLimits`: per client address, open WebSocket connections and new ones per
  minute (this process's), room creations and refused joins per minute (the budgets that
  guard the store: ``server.budgets``, shared by every process on Redis). The address is the
  peer's, or the one a trusted proxy names in ``X-Forwarded-For`` (``server.proxies``,
  ``forwarded_allow_ips``), keyed by ``server.budgets.address_key`` (an IPv6 client by its
  /64). :class:`~server.budgets.AddressQuota` (a bucket per address in this process) is
  re-exported here.
* :class:`GuardedHttpToolsProtocol`: uvicorn's httptools HTTP protocol with a deadline for
  a whole request (``request_timeout_seconds``): a half-sent request or WebSocket handshake
  cannot hold a socket longer than that; and a cap on a request's line and headers
  (``max_header_bytes``): past it, ``431 headers_too_large`` and the socket is closed.
* :func:`raise_open_files_limit`: the soft ``RLIMIT_NOFILE`` raised to the hard one.

Connections are counted per process: a deployment of n processes behind a proxy lets one
address hold n times those (docs/protocol.md "Limits" says why that is acceptable).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import Counter
from typing import Any

from .budgets import AddressQuota as AddressQuota  # re-exported: a bucket per address
from .budgets import Budget, Budgets, MemoryBudgets, Ticket, address_key

log = logging.getLogger(__name__)


class FrameBucket:
    """A token bucket of client frames, with a flood counter.

    Args:
        rate: tokens added per second (frames per second on average).
        burst: the bucket's size (frames at once); it starts full.
        flood_refusals: refusals within ``flood_window`` seconds that make a flood.
        flood_window: seconds.
    """

    __slots__ = ("rate", "burst", "tokens", "stamp", "flood_refusals", "flood_window",
                 "refused", "refused_since")

    #: Seconds by which a timer may fire early. uvloop's timers have millisecond
    #: granularity and wake up to ~1.3 ms before ``time.monotonic()`` reaches the deadline
    #: (measured: 128 of 300 sleeps); a frame read right after sleeping out its ``wait``
    #: would otherwise be refused a second time and count twice towards a flood.
    EARLY_WAKE = 0.002

    def __init__(self, rate: float, burst: int, flood_refusals: int, flood_window: float
                 ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self.flood_refusals = flood_refusals
        self.flood_window = flood_window
        self.refused = 0
        self.refused_since = 0.0

    def take(self, now: float) -> float:
        """Take one token at ``now`` (``time.monotonic()``).

        Returns:
            0.0 if the frame may be handled; else the seconds until a token is available
            (the frame is refused and counted towards a flood).
        """
        tokens = self.tokens + (now - self.stamp) * self.rate
        if tokens > self.burst:
            tokens = self.burst
        self.stamp = now
        if tokens >= 1.0 - self.EARLY_WAKE * self.rate:
            self.tokens = max(tokens - 1.0, 0.0)
            return 0.0
        self.tokens = tokens
        if now - self.refused_since > self.flood_window:
            self.refused_since = now
            self.refused = 0
        self.refused += 1
        return (1.0 - tokens) / self.rate

    @property
    def flooding(self) -> bool:
        """More than ``flood_refusals`` frames were refused within the flood window."""
        return self.refused > self.flood_refusals


class AddressLimits:
    """The per-address limits: open WebSocket connections and new ones per minute (this
    process's, :attr:`local`), room creations and refused joins per minute (the budgets that
    guard the store, :attr:`shared`: across every process on Redis, see
    ``server.budgets``), all keyed by :meth:`key` (an IPv6 client by its /64).

    Args:
        max_connections: ``max_connections_per_address`` (0: no limit).
        rooms_per_minute, failed_joins_per_minute, connections_per_minute,
            room_reads_per_minute, hints_per_minute: the settings of the same names (0: no
            limit).
        shared: where the store's budgets are counted (default: this process).
        ipv6_prefix: ``ipv6_prefix_length``.
    """

    def __init__(self, max_connections: int, rooms_per_minute: int,
                 failed_joins_per_minute: int, connections_per_minute: int = 0, *,
                 room_reads_per_minute: int = 0, hints_per_minute: int = 0,
                 shared: Budgets | None = None,
                 ipv6_prefix: int = 64) -> None:
        self.max_connections = max_connections
        self.ipv6_prefix = ipv6_prefix
        self.local = MemoryBudgets()
        """Budgets of this process (connections)."""
        self.shared: Budgets = shared if shared is not None else self.local
        """Budgets that guard the store (rooms, refused joins): on Redis, every process's."""
        self.new_connections = Budget("connections", connections_per_minute)
        """New WebSocket connections per address per minute (``connections_per_minute``):
        reconnecting must not be a way around each connection's frame budget."""
        self.rooms = Budget("rooms", rooms_per_minute)
        """Rooms created per address per minute (``rooms_per_minute``)."""
        self.failed_joins = Budget("failed_joins", failed_joins_per_minute)
        """Refused joins per address per minute (``failed_joins_per_minute``)."""
        self.room_reads = Budget("room_reads", room_reads_per_minute)
        """Room summaries read per address per minute (``GET /api/rooms/{id}``,
        ``room_reads_per_minute``): each costs store reads, and guessing room ids by HTTP
        must cost as joining them does."""
        self.hints = Budget("hints", hints_per_minute)
        """Hints made per address per minute (``hints_per_minute``): a hint is an
        ``expert`` search in the computer processes, and one address must not take them
        from everyone else's hints and computer players (docs/performance.md, "Hints")."""
        self.connections: dict[str, int] = {}
        self.refused: Counter[str] = Counter()
        """What the limits refused or closed, by code (``rate_limited``, ``too_many_rooms``,
        ``too_many_joins``, ``too_many_connections``, ``too_many_spectators``,
        ``too_many_room_reads``, ``too_many_hints``, ...) or close reason (``flood``,
        ``hello_timeout``, ``idle``);
        ``/metrics`` reports it."""

    def key(self, address: str) -> str:
        """The budget key of a client address (:func:`server.budgets.address_key`)."""
        return address_key(address, self.ipv6_prefix)

    async def take(self, budget: Budget, key: str) -> Ticket:
        """Check and charge one event of a store-guarding ``budget`` for ``key`` (one atomic
        step; :meth:`server.budgets.Budgets.take`)."""
        return await self.shared.take(budget, key)

    def connect(self, key: str) -> bool:
        """Count one more open connection of ``key`` (checked and counted in one step);
        False (and nothing counted) if it already holds ``max_connections`` or opened
        ``connections_per_minute`` in the last minute."""
        held = self.connections.get(key, 0)
        if self.max_connections and held >= self.max_connections:
            return False
        if not self.local.take_now(self.new_connections, key).taken:
            return False
        self.connections[key] = held + 1
        return True

    def disconnect(self, key: str) -> None:
        """One connection of ``key`` ended."""
        held = self.connections.get(key, 0) - 1
        if held > 0:
            self.connections[key] = held
        else:
            self.connections.pop(key, None)


def retry_after_header(seconds: float) -> str:
    """The ``Retry-After`` header value for ``seconds`` (whole seconds, at least 1)."""
    return str(max(1, math.ceil(seconds)))


async def charge_address_read(request: Any, name: str, per_minute: int, code: str,
                              message: str) -> Any:
    """Charge one HTTP read to the client's address in the budget ``name`` (``per_minute``
    reads a minute, all at once at most, then evenly; 0: no limit).

    Args:
        request: the starlette request (``request.state.services`` holds the limits).
        name: the budget's name (e.g. ``"history_reads"``).
        per_minute: the budget's size (a setting).
        code: the stable error code of the refusal (docs/protocol.md "Limits").
        message: the refusal's text.

    Returns:
        None when the read may go on; else the 429 ``JSONResponse`` to answer with
        (``Retry-After`` in whole seconds, ``{"error": {"code", "message",
        "retry_after"}}``); nothing was read.
    """
    from starlette.responses import JSONResponse

    services = request.state.services
    limits = services.limits
    if limits is None:
        return None
    ticket = await limits.take(Budget(name, per_minute),
                               limits.key(client_address(request.scope)))
    if ticket.taken:
        return None
    limits.refused[code] += 1
    return JSONResponse(
        {"error": {"code": code, "message": message, "retry_after": round(ticket.wait, 3)}},
        status_code=429, headers={"Retry-After": retry_after_header(ticket.wait)})


def client_address(scope: dict[str, Any]) -> str:
    """The client address of an ASGI scope (after the proxy headers middleware), or
    ``"unknown"`` when the server has none (a Unix socket)."""
    client = scope.get("client")
    return client[0] if client else "unknown"


# -- the HTTP protocol with a whole-request deadline ----------------------------------------

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools comes with uvicorn[standard]
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


if HttpToolsProtocol is not None:

    class GuardedHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc,valid-type]
        """uvicorn's httptools protocol with a deadline for each whole request.

        uvicorn times out idle kept-alive connections but not a request in progress: a
        client that sends half a request line, half its headers or half its body (a
        WebSocket handshake included) holds the socket for ever. Here a timer starts when
        the connection opens (and when a later request on a kept-alive connection sends
        its first byte) and closes the socket unless the request has fully arrived (or
        became a WebSocket) within :attr:`request_timeout` seconds. Trickling bytes does
        not push the deadline back. The answer and a WebSocket's life are not timed.
        """

        request_timeout = 10.0
        """Seconds; :func:`http_protocol` makes a subclass with the setting's value."""

        max_header_bytes = 64 * 1024
        """Bytes of a request's line and headers; :func:`http_protocol` sets the setting's.
        Checked twice: once the head is whole, by its size as parsed (the request line
        and each ``name: value`` line with their line ends: exact for a head written the
        usual way, never more than its bytes); and while it is still arriving, by the
        bytes of the reads it spans, since httptools keeps a header being parsed in
        memory whatever its size. Past it: ``431 headers_too_large``, socket closed."""

        _deadline: asyncio.TimerHandle | None = None
        _in_head = True
        _head_bytes = 0
        _began_in_read = False
        _head_refused = False

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(self.request_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.info("closing a connection whose request did not arrive within %.0f s",
                         self.request_timeout)
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._head_bytes, self._began_in_read = True, 0, True
            self._arm()

        def on_headers_complete(self) -> None:
            self._in_head = False
            size = (len(self.parser.get_method()) + len(self.url) + 14
                    + sum(len(name) + len(value) + 4 for name, value in self.headers))
            if size > self.max_header_bytes:
                # Raised through httptools, which uvicorn answers by send_400_response:
                # the flag makes that a 431.
                self._head_refused = True
                raise ValueError("the request line and headers are too long")
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def data_received(self, data: bytes) -> None:
            self._began_in_read = False
            super().data_received(data)
            if not self._in_head or self.transport.is_closing():
                return
            # A head still arriving: count its bytes in this read (from the end of the
            # request before it when it began in this read).
            if self._began_in_read:
                end = data.rfind(b"\r\n\r\n")
                self._head_bytes += len(data) - (end + 4 if end >= 0 else 0)
            else:
                self._head_bytes += len(data)
            if self._head_bytes > self.max_header_bytes:
                self._refuse_head()

        def _refuse_head(self) -> None:
            log.info("closing a connection whose request line and headers passed %d bytes",
                     self.max_header_bytes)
            self._refuse(b"431 Request Header Fields Too Large", "headers_too_large",
                         f"the request line and headers are longer than "
                         f"{self.max_header_bytes} bytes")

        def send_400_response(self, msg: str) -> None:
            """What uvicorn answers a request httptools cannot parse (a Content-Length that
            is not a number, two of them, a bad chunk size …): the API's JSON error body
            with ``bad_request``, not plain text (``headers_too_large`` when the head was
            refused once whole, by :meth:`on_headers_complete`)."""
            if self._head_refused:
                self._refuse_head()
                return
            self._refuse(b"400 Bad Request", "bad_request",
                         f"the request is not valid HTTP/1.1 ({msg.rstrip('.')})")

        def _refuse(self, status: bytes, code: str, message: str) -> None:
            """Answer ``{"error": {"code", "message"}}`` with ``status`` and close: for
            what is refused before the app sees a request."""
            body = json.dumps({"error": {"code": code, "message": message}}).encode()
            self.transport.write(
                b"HTTP/1.1 " + status + b"\r\n"
                b"content-type: application/json\r\n"
                b"x-content-type-options: nosniff\r\n"
                b"connection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            self.transport.close()

        def handle_websocket_upgrade(self) -> None:
            self._disarm()
            super().handle_websocket_upgrade()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)


def http_protocol(request_timeout: float, max_header_bytes: int = 64 * 1024) -> Any:
    """The HTTP protocol class for uvicorn's ``http`` option: the guarded httptools
    protocol with ``request_timeout`` seconds and ``max_header_bytes`` bytes, or ``"auto"``
    (and a warning) when httptools is missing."""
    if HttpToolsProtocol is None:  # pragma: no cover
        log.warning("httptools is missing: half-sent requests are not timed out")
        return "auto"
    return type("GuardedHttp", (GuardedHttpToolsProtocol,),
                {"request_timeout": request_timeout, "max_header_bytes": max_header_bytes})


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit (each socket is a
    file; a low soft limit, often 1024, is what lets a few hundred slow sockets lock new
    clients out).

    Returns:
        ``(old soft, new soft)``, or None where the platform has no such limit.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == resource.RLIM_INFINITY or soft >= hard:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # pragma: no cover
        log.warning("could not raise the open files limit: %s", exc)
        return soft, soft
    return soft, hard
