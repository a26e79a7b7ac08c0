"""The lobby index in Redis, or on a Redis Cluster (``server.lobby.index``).

Four keys, all with the hash tag ``{lobby}`` (so on a cluster they are in one slot, and
each script below touches one slot only):

* ``<prefix>lobby:{lobby}:tables``: hash, room id -> the entry's JSON text;
* ``<prefix>lobby:{lobby}:seen``: hash, room id -> the last room version written;
* ``<prefix>lobby:{lobby}:expiry``: sorted set, room id -> Unix seconds it expires at;
* ``<prefix>lobby:{lobby}:v``: the index's version (``INCR`` at every change of entries).

``server/lua/lobby_put.lua`` writes one room's entry (or its removal) if its version is
newer than the one seen; ``server/lua/lobby_read.lua`` drops expired rooms and answers the
version, and every entry unless the caller knows that version. Both also drop what has
expired, at most 100 rooms a call.

On a cluster the room's own commit is in the room's slot and the index in this one, so
the two cannot be one atomic step: the index is written *after* the commit
(``server.lobby.service``) and made to converge — the version check orders late writes,
entries expire with their rooms, and readers check the listed rooms' versions against
their records (``Lobby.verify``).
"""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from protocol import jsontext

from ..store.base import StoreUnavailable
from .index import LobbyIndex

FAILURES = (RedisError, OSError, TimeoutError, asyncio.TimeoutError, RuntimeError,
            AttributeError)
"""What a Redis call raises when Redis is down (``server.budgets.redis``)."""


def _script(name: str) -> str:
    return resources.files("server").joinpath("lua", name).read_text(encoding="utf-8")


class RedisLobbyIndex(LobbyIndex):
    """The index on one Redis (``redis.asyncio.Redis``) or a Redis Cluster
    (``RedisCluster``): see the module docstring.

    Args:
        redis: the process's client (``decode_responses=True``).
        prefix: the ``key_prefix`` setting.
        clock: Unix time (expiry is on the processes' clocks)."""

    def __init__(self, redis: Any, prefix: str = "", clock: Any = None) -> None:
        import time

        self.redis = redis
        self.prefix = prefix
        self.clock = clock or time.time
        base = f"{prefix}lobby:{{lobby}}:"
        self.keys = [base + "tables", base + "seen", base + "expiry", base + "v"]
        self._put = AsyncScript(redis, _script("lobby_put.lua"))
        self._read = AsyncScript(redis, _script("lobby_read.lua"))

    async def put(self, room_id: str, version: int, entry: dict[str, Any] | None,
                  expires_at: float) -> bool:
        """See :meth:`LobbyIndex.put`."""
        text = jsontext.dumps(entry) if entry is not None else ""
        try:
            done = await self._put(keys=self.keys, args=[
                room_id, version, text, repr(float(expires_at)), repr(float(self.clock()))])
        except FAILURES as exc:
            raise StoreUnavailable(f"the lobby index cannot be written: {exc}") from exc
        return bool(done)

    async def read(self, known: int | None = None) -> tuple[int, list[dict[str, Any]] | None]:
        """See :meth:`LobbyIndex.read`."""
        try:
            answer = await self._read(keys=self.keys, args=[
                repr(float(self.clock())), "" if known is None else str(known)])
        except FAILURES as exc:
            raise StoreUnavailable(f"the lobby index cannot be read: {exc}") from exc
        version = int(answer[0])
        if len(answer) < 2 or answer[1] == 0:
            return version, None
        return version, [jsontext.loads(t) for t in answer[2:]]
