"""Who is silenced or banned, as this process knows it (:class:`Sanctions`).

Every process reads the sanctions in force from the database every
``moderation_refresh_seconds`` (5 s by default) and once more at once after a moderator
acted through it; nothing on the way of a message or a handshake waits for SQL. After each
read it closes its own connections whose player or address is now banned (an ``error
banned`` frame, then close code 1008), so a ban reaches every process within that period.
While the database cannot be reached the last sanctions read stay in force (logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..database import stop_if_cancelling
from .store import seconds_of

log = logging.getLogger(__name__)


def _network(text: str) -> Any:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


class Sanctions:
    """The in-process cache of sanctions, and the loop that keeps it fresh.

    Args:
        store: the :class:`server.moderation.store.ModerationStore`, or None (no sanctions).
        refresh_seconds: how often the cache is read again (seconds).
        clock: Unix seconds.
    """

    def __init__(self, store: Any, refresh_seconds: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._silenced: dict[str, float] = {}
        self._players: dict[str, float | None] = {}
        self._networks: list[tuple[Any, float | None]] = []
        self._sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        self._task: asyncio.Task[None] | None = None
        self.refreshed = 0
        """Successful reads since start (``/metrics``)."""
        self.failed_refreshes = 0
        """Reads that failed (the database could not be reached)."""
        self.closed_sessions = 0
        """Connections closed because their player or address was banned."""

    # -- what the rest of the server asks ---------------------------------------------------
    def _live(self, until: float | None) -> bool:
        return until is None or until > self._clock()

    def silenced_until(self, player: str | None) -> float | None:
        """Until when (Unix seconds) ``player``'s chat is silenced; None when it is not."""
        if player is None:
            return None
        until = self._silenced.get(player)
        return until if until is not None and until > self._clock() else None

    def player_banned(self, player: str | None) -> bool:
        """Whether ``player`` is banned now."""
        return player is not None and player in self._players and self._live(
            self._players[player])

    def address_banned(self, address: str | None) -> bool:
        """Whether ``address`` (an IP address, or an IPv6 budget key such as
        ``2001:db8:1:2::/64``) is in a banned address or network now."""
        if not address or not self._networks:
            return False
        net = _network(address)
        if net is None:
            return False
        return any(net.version == banned.version and net.overlaps(banned)
                   and self._live(until) for banned, until in self._networks)

    # -- the cache -------------------------------------------------------------------------
    def load(self, active: list[dict[str, Any]]) -> None:
        """Take ``active`` (``ModerationStore.active()``) as the sanctions in force."""
        silenced: dict[str, float] = {}
        players: dict[str, float | None] = {}
        networks: list[tuple[Any, float | None]] = []
        for s in active:
            until = seconds_of(s.get("until"))
            if s["kind"] == "silence" and until is not None:
                silenced[s["target"]] = max(until, silenced.get(s["target"], 0.0))
            elif s["kind"] == "silence":  # until lifted: ten years, a finite retry_after
                silenced[s["target"]] = self._clock() + 315_360_000.0
            elif s["kind"] == "ban_player":
                old = players.get(s["target"], 0.0)
                players[s["target"]] = None if until is None or old is None else max(until, old)
            elif s["kind"] == "ban_address":
                net = _network(s["target"])
                if net is not None:
                    networks.append((net, until))
        self._silenced, self._players, self._networks = silenced, players, networks

    async def refresh(self) -> bool:
        """Read the sanctions in force again, then close this process's banned connections.

        Returns:
            Whether the database answered (if not, the last sanctions read stay).
        """
        if self.store is None:
            return False
        try:
            self.load(await self.store.active())
        except Exception as exc:  # noqa: BLE001 (the last sanctions read stay in force)
            stop_if_cancelling(exc)  # (a loop being stopped stops)
            self.failed_refreshes += 1
            log.warning("sanctions not read: %s", exc)
            return False
        self.refreshed += 1
        self.enforce()
        return True

    # -- connections -----------------------------------------------------------------------
    def register(self, session: Any) -> None:
        """A connection opened (it is closed if its player or address gets banned)."""
        self._sessions.add(session)

    def unregister(self, session: Any) -> None:
        """A connection ended."""
        self._sessions.discard(session)

    def enforce(self) -> int:
        """Close this process's connections of banned players and addresses.

        Returns:
            How many were closed.
        """
        closed = 0
        for session in list(self._sessions):
            if self.player_banned(getattr(session, "player", None)) or self.address_banned(
                    getattr(session, "address", None)):
                session.banned()
                self._sessions.discard(session)
                closed += 1
        self.closed_sessions += closed
        return closed

    # -- the loop --------------------------------------------------------------------------
    def start(self) -> None:
        """Start reading the sanctions every ``refresh_seconds``."""
        if self.store is not None and self._task is None:
            self._task = asyncio.create_task(self._run(), name="sanctions")

    async def _run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.refresh_seconds)

    async def stop(self) -> None:
        """Stop the loop."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
