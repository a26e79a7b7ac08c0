""""Online now" for players (issue 20 point 3), owned per process with leases.

A player is online while some live server process holds a WebSocket connection whose
``hello`` presented them. Each process keeps its own count of connections per player and
writes, per player it holds, a **lease**: "process *owner* holds this player until *t*"
(``t`` = now + ``presence_lease_seconds``, the same lease as seat presence,
``server.presence``). Every third of the lease the process renews the leases of every player
it holds (:meth:`Online.heartbeat`); the last connection of a player on a process removes
that process's lease at once. A process that dies (kill -9) stops renewing, and its leases
run out by themselves: its players stop counting within one lease, with no reaper — the
expiry is data (the lease's time), never a timer.

* :class:`MemoryOnline`: one process, no Redis (counts only).
* :class:`RedisOnline`: Redis or Redis Cluster. One sorted set per player,
  ``<prefix>online:{<player>}``, member = owner id, score = lease end (Unix seconds); the
  key expires two leases after its last renewal. Each command touches one key, so on a
  cluster nothing needs a shared slot.

Store failures (``redis.exceptions.RedisError``, ``OSError``) are not raised by
:meth:`Online.connect` / :meth:`Online.disconnect` (the next heartbeat puts the store
right); :meth:`Online.is_online` raises them (the caller answers ``store_unavailable``).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)


class Online:
    """This process's connections per player, and who is online anywhere.

    Args:
        lease: seconds a lease lasts (``presence_lease_seconds``).
        clock: Unix seconds.
    """

    def __init__(self, lease: float, clock: Callable[[], float] = time.time) -> None:
        self.lease = float(lease)
        self.clock = clock
        self.owner = secrets.token_hex(6)
        self.counts: dict[str, int] = {}
        """player -> connections of this process."""

    async def connect(self, player: str) -> None:
        """One more connection of ``player`` on this process."""
        held = self.counts.get(player, 0)
        self.counts[player] = held + 1
        if held == 0:
            try:
                await self._write([player])
            except Exception as exc:  # noqa: BLE001 (the heartbeat retries)
                log.debug("online lease not written: %s", exc)

    async def disconnect(self, player: str) -> None:
        """One connection of ``player`` on this process ended."""
        left = self.counts.get(player, 0) - 1
        if left > 0:
            self.counts[player] = left
            return
        self.counts.pop(player, None)
        try:
            await self._remove(player)
        except Exception as exc:  # noqa: BLE001 (the lease runs out by itself)
            log.debug("online lease not removed: %s", exc)

    async def heartbeat(self) -> None:
        """Renew the leases of every player this process holds (raises store errors)."""
        if self.counts:
            await self._write(list(self.counts))

    async def is_online(self, player: str) -> bool:
        """Whether some live process holds a connection of ``player``."""
        return player in await self.online([player])

    async def online(self, players: Iterable[str]) -> set[str]:
        """Which of ``players`` are online (raises store errors)."""
        raise NotImplementedError

    async def close(self) -> None:
        """A clean stop: remove this process's leases (best effort)."""
        for player in list(self.counts):
            try:
                await self._remove(player)
            except Exception:  # noqa: BLE001
                return
        self.counts.clear()

    async def _write(self, players: list[str]) -> None:
        raise NotImplementedError

    async def _remove(self, player: str) -> None:
        raise NotImplementedError


class MemoryOnline(Online):
    """One process: online is "this process holds a connection"."""

    async def online(self, players: Iterable[str]) -> set[str]:
        return {p for p in players if self.counts.get(p)}

    async def _write(self, players: list[str]) -> None:
        return None

    async def _remove(self, player: str) -> None:
        return None


class RedisOnline(Online):
    """Leases in Redis (or a Redis Cluster: one key per command).

    Args:
        redis: a ``redis.asyncio.Redis`` or ``RedisCluster`` (``decode_responses``).
        prefix: the ``key_prefix`` setting.
    """

    def __init__(self, redis: Any, prefix: str, lease: float,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(lease, clock)
        self.redis = redis
        self.prefix = prefix

    def key(self, player: str) -> str:
        """``<prefix>online:{<player>}``."""
        return f"{self.prefix}online:{{{player}}}"

    async def online(self, players: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(players))
        if not wanted:
            return set()
        now = self.clock()
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in wanted:
                pipe.zcount(self.key(player), f"({now}", "+inf")
            counts = await pipe.execute()
        return {p for p, n in zip(wanted, counts, strict=True) if int(n or 0) > 0}

    async def _write(self, players: list[str]) -> None:
        now = self.clock()
        until = now + self.lease
        keep = max(1, int(2 * self.lease) + 1)
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                key = self.key(player)
                pipe.zadd(key, {self.owner: until})
                pipe.zremrangebyscore(key, "-inf", now)  # leases of dead processes
                pipe.expire(key, keep)
            await pipe.execute()

    async def _remove(self, player: str) -> None:
        await self.redis.zrem(self.key(player), self.owner)
