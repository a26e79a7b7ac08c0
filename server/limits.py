"""Limits that keep one client from starving the others (docs/protocol.md "Limits").

* :class:`FrameBucket`: the per-connection token bucket on client frames (``frame_rate``,
  ``frame_burst``) and the flood counter that closes a connection that keeps flooding.
* :class:`AddressQuota` and :class:`AddressLimits`: per client address, open WebSocket
  connections, room creations per minute and refused joins per minute. The address is the
  peer's, or the one a trusted proxy names in ``X-Forwarded-For`` (uvicorn's proxy headers
  middleware, ``forwarded_allow_ips``).
* :class:`GuardedHttpToolsProtocol`: uvicorn's httptools HTTP protocol with a deadline for
  a whole request (``request_timeout_seconds``): a half-sent request or WebSocket handshake
  cannot hold a socket longer than that.
* :func:`raise_open_files_limit`: the soft ``RLIMIT_NOFILE`` raised to the hard one.

Every count here is per process: a deployment of n processes behind a proxy lets one address
have n times each budget (docs/protocol.md "Limits" says why that is acceptable).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter
from typing import Any

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


class AddressQuota:
    """A token bucket per client address: ``per_minute`` events a minute, all of them at
    once at most. Buckets that have refilled are dropped (at most once a minute), so memory
    follows the addresses active in the last minute.

    Args:
        per_minute: the budget; 0 means no limit (every check passes).
    """

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.buckets: dict[str, list[float]] = {}
        self._pruned = time.monotonic()

    def _tokens(self, address: str, now: float) -> list[float]:
        if now - self._pruned > 60.0:
            self._prune(now)
        bucket = self.buckets.get(address)
        if bucket is None:
            bucket = self.buckets[address] = [self.capacity, now]
        else:
            bucket[0] = min(self.capacity, bucket[0] + (now - bucket[1]) * self.rate)
            bucket[1] = now
        return bucket

    def _prune(self, now: float) -> None:
        self._pruned = now
        full = [a for a, (tokens, stamp) in self.buckets.items()
                if tokens + (now - stamp) * self.rate >= self.capacity]
        for address in full:
            del self.buckets[address]

    def wait(self, address: str, now: float | None = None) -> float:
        """Seconds until ``address`` may spend one event (0.0: now), spending nothing."""
        if not self.capacity:
            return 0.0
        tokens = self._tokens(address, time.monotonic() if now is None else now)[0]
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def spend(self, address: str, now: float | None = None) -> float:
        """Spend one event of ``address``'s budget.

        Returns:
            0.0 if it was within budget (and is now spent); else the seconds until it
            would be, and nothing is spent.
        """
        if not self.capacity:
            return 0.0
        bucket = self._tokens(address, time.monotonic() if now is None else now)
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return 0.0
        return (1.0 - bucket[0]) / self.rate

    def charge(self, address: str, now: float | None = None) -> None:
        """Spend one event of ``address``'s budget even if none is left (the budget goes no
        lower than empty)."""
        if not self.capacity:
            return
        bucket = self._tokens(address, time.monotonic() if now is None else now)
        bucket[0] = max(0.0, bucket[0] - 1.0)


class AddressLimits:
    """This process's per-address counts: open WebSocket connections, room creations,
    refused joins and room summaries read (settings ``max_connections_per_address``,
    ``rooms_per_minute``, ``failed_joins_per_minute``, ``room_reads_per_minute``)."""

    def __init__(self, max_connections: int, rooms_per_minute: int,
                 failed_joins_per_minute: int, connections_per_minute: int = 0,
                 room_reads_per_minute: int = 0) -> None:
        self.max_connections = max_connections
        self.new_connections = AddressQuota(connections_per_minute)
        """New WebSocket connections per address per minute (``connections_per_minute``):
        reconnecting must not be a way around each connection's frame budget."""
        self.connections: dict[str, int] = {}
        self.refused: Counter[str] = Counter()
        """What the limits refused or closed, by code (``rate_limited``, ``too_many_rooms``,
        ``too_many_joins``, ``too_many_connections``) or close reason (``flood``,
        ``hello_timeout``, ``idle``); ``/metrics`` reports it."""
        self.rooms = AddressQuota(rooms_per_minute)
        self.failed_joins = AddressQuota(failed_joins_per_minute)
        self.room_reads = AddressQuota(room_reads_per_minute)
        """Room summaries read per address per minute (``GET /api/rooms/{id}``,
        ``room_reads_per_minute``): each costs store reads, and guessing room ids by HTTP
        must cost as joining them does."""

    def connect(self, address: str) -> bool:
        """Count one more open connection of ``address``; False (and nothing counted) if
        it already holds ``max_connections`` or opened ``connections_per_minute`` in the
        last minute."""
        held = self.connections.get(address, 0)
        if self.max_connections and held >= self.max_connections:
            return False
        if self.new_connections.spend(address):
            return False
        self.connections[address] = held + 1
        return True

    def disconnect(self, address: str) -> None:
        """One connection of ``address`` ended."""
        held = self.connections.get(address, 0) - 1
        if held > 0:
            self.connections[address] = held
        else:
            self.connections.pop(address, None)


def retry_after_header(seconds: float) -> str:
    """The ``Retry-After`` header value for ``seconds`` (whole seconds, at least 1)."""
    return str(max(1, math.ceil(seconds)))


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

        _deadline: asyncio.TimerHandle | None = None

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
            self._arm()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def handle_websocket_upgrade(self) -> None:
            self._disarm()
            super().handle_websocket_upgrade()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)


def http_protocol(request_timeout: float) -> Any:
    """The HTTP protocol class for uvicorn's ``http`` option: the guarded httptools
    protocol with ``request_timeout`` seconds, or ``"auto"`` (and a warning) when httptools
    is missing."""
    if HttpToolsProtocol is None:  # pragma: no cover
        log.warning("httptools is missing: half-sent requests are not timed out")
        return "auto"
    return type("GuardedHttp", (GuardedHttpToolsProtocol,), {"request_timeout": request_timeout})


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
